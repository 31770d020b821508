"""A provider's answer to a gated call: paced, retried, and the retries all the gateway's own.

`live` sends a call when the run's `Pacer` (its gate's) says it may and retries it:
after a 429 / ``RESOURCE_EXHAUSTED`` (the pacer blocks the model for as long as
the provider asked, at least `MIN_RETRY_WAIT`), and after a server error, a
timeout or a dropped connection (`ModelCalls.server_retries` times, with
backoff). A call whose answer had begun to stream is not retried. A quota that
waiting never clears (OpenAI's ``insufficient_quota``) ends the call at once.

Every refusal reaches the gateway: for ADK's `LiteLlm` and `Gemini` the call is
sent with the client's own retries off (``HttpOptions.retry_options``, which
ADK hands to litellm as ``num_retries`` and google-genai reads per request).
Left on, litellm and the OpenAI SDK wait out a 429 inside one call, where the
run's wait budget and its report never see it. So the budget is wall time: the
run's waits are all the time it spends refused, and a run that has waited
`ModelCalls.max_wait` seconds ends with a `ProviderWaitError` that says how
long this call was refused and how often. (litellm's own banner, printed with
each error it maps, is turned off: the run reports each refusal itself.)
"""

from __future__ import annotations

import math
import random
import re
import sys
import time
from collections.abc import AsyncGenerator

import anyio
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ..._errors import ProviderWaitError
from ..._quiet import quiet
from .._pacing._failures import Failure, classify
from .._pacing._limits import RateLimit, limit_for
from .._pacing._pacer import Grant, LocalPacer, Pacer
from ._gate import RunGate
from ._stats import ProviderStats

__all__ = ["client_attempts", "live"]

_SERVER_BACKOFF = 0.5


def client_attempts(llm: BaseLlm) -> int | None:
    """The ``retry_options.attempts`` that turns `llm`'s client retries off (None: unknown).

    ADK's `LiteLlm` passes ``attempts`` to litellm as ``num_retries`` (0: none,
    and the OpenAI SDK under it none either); google-genai counts the first
    attempt in it (1: none).
    """
    lite = sys.modules.get("google.adk.models.lite_llm")
    if lite is not None and isinstance(llm, lite.LiteLlm):
        return 0
    google = sys.modules.get("google.adk.models.google_llm")
    if google is not None and isinstance(llm, google.Gemini):
        return 1
    return None


def _without_client_retries(llm: BaseLlm, request: LlmRequest) -> LlmRequest:
    """`request` as sent through the gateway: the client's own retries off (a copy)."""
    attempts = client_attempts(llm)
    if attempts is None:
        return request
    if attempts == 0:  # litellm prints a banner with each error it maps: every 429, now
        import litellm

        litellm.suppress_debug_info = True
    config = request.config.model_copy()
    http = config.http_options.model_copy() if config.http_options else types.HttpOptions()
    http.retry_options = types.HttpRetryOptions(attempts=attempts)
    config.http_options = http
    return request.model_copy(update={"config": config})


async def live(
    gate: RunGate, llm: BaseLlm, request: LlmRequest, stream: bool, model: str, base_url: str | None
) -> AsyncGenerator[LlmResponse, None]:
    """The provider's answer, paced and retried (see the module doc)."""
    offline = getattr(llm, "adk_eval_offline", False)  # ScriptedLlm: no provider, no quota
    pacer = LocalPacer() if offline else gate.pacer  # its go-ahead is at once, never a wait
    key = f"{model} at {base_url}" if base_url else model
    limit = None if offline else limit_for(model, gate.settings.limits)
    tokens = _estimate(request) if limit is not None and limit.tpm is not None else 0.0
    sent = _without_client_retries(llm, request)
    refused = _Refusals()
    server_errors = 0
    while True:
        grant = await _acquire(gate, pacer, key, limit, tokens, refused)
        if refused.last is not None:  # sent again: a retry (one given up before is none)
            gate.count(ProviderStats(retries=1))
        used: float | None = None
        failure: Failure | None = None
        began = False
        try:
            async for response in llm.generate_content_async(sent, stream=stream):
                used = _tokens(response) or used
                began = True
                yield response
        except Exception as error:
            failure = classify(error)
            if began or failure.kind == "other":
                quiet(error)  # the result reports it: ADK need not log its traceback too
                raise
            refused.add(error)
        finally:
            pacer.release(grant, tokens=used, failure=failure)
        if failure is None:
            gate.count(ProviderStats(calls=1))
            return
        if failure.kind in ("rate_limit", "spent"):
            gate.count(ProviderStats(rate_limited=1))
            if failure.kind == "spent":
                raise _spent(key, refused.last)
        else:
            gate.count(ProviderStats(server_errors=1))
            server_errors += 1
            if server_errors > gate.settings.server_retries:
                last = refused.last
                assert last is not None
                quiet(last)
                raise last
            backoff = _SERVER_BACKOFF * 2 ** (server_errors - 1)
            pause = max(failure.retry_after or 0.0, backoff)
            await _wait(gate, min(pause * random.uniform(1.0, 1.25), 30.0), key, refused)


class _Refusals:
    """One call's refusals so far: how many, since when, and the last."""

    def __init__(self) -> None:
        self.count = 0
        self.since = 0.0
        self.last: BaseException | None = None

    def add(self, error: BaseException) -> None:
        if not self.count:
            self.since = time.monotonic()
        self.count += 1
        self.last = error


async def _acquire(
    gate: RunGate,
    pacer: Pacer,
    key: str,
    limit: RateLimit | None,
    tokens: float,
    refused: _Refusals,
) -> Grant:
    """The pacer's go-ahead, waiting at most the run's wait budget."""
    grant: Grant | None = None
    if refused.last is None:
        grant = pacer.try_acquire(key, limit, tokens)
        if grant is not None:  # no wait: not a pause
            return grant
    with gate.waiting():
        budget = gate.wait_left()
        with anyio.move_on_after(budget) as scope:
            grant = await pacer.acquire(key, limit, tokens)
    if scope.cancelled_caught or grant is None:
        raise _gave_up(gate, key, refused)
    return grant


async def _wait(gate: RunGate, seconds: float, key: str, refused: _Refusals) -> None:
    with gate.waiting():
        if seconds > gate.wait_left():
            raise _gave_up(gate, key, refused)
        await anyio.sleep(seconds)


def _gave_up(gate: RunGate, key: str, refused: _Refusals) -> ProviderWaitError:
    last = refused.last
    tried = ""
    if refused.count:
        times = f"{refused.count} time{'s' * (refused.count != 1)}"
        tried = f" refused {times} over {time.monotonic() - refused.since:.1f} s;"
    said = f"; its last answer: {type(last).__name__}: {_first_line(last)}" if last else ""
    error = ProviderWaitError(
        f"model {key}:{tried} the run waited {gate.waited:.1f} s for the provider's quota and "
        f"gave up (the wait budget is {gate.settings.max_wait:g} s: --max-provider-wait, or "
        f"ModelCalls(max_wait=...)){said}"
    )
    error.__cause__ = last
    quiet(error)
    return error


def _spent(key: str, last: BaseException | None) -> ProviderWaitError:
    said = f"{type(last).__name__}: {_first_line(last)}" if last else "a 429"
    error = ProviderWaitError(
        f"model {key}: the provider's quota is spent and waiting will not clear it (a billing "
        f"limit or a quota of 0): check the account's plan and billing; it said {said}"
    )
    error.__cause__ = last
    quiet(error)
    return error


def _first_line(error: BaseException | None) -> str:
    """The line of `error`'s message that says what the provider said (not a help link)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    lines = [line for line in lines if "://" not in line] or lines
    said = re.compile(r"\b429\b|RESOURCE_EXHAUSTED|quota|rate.?limit", re.IGNORECASE)
    text = next((line for line in lines if said.search(line)), lines[0] if lines else "")
    return text if len(text) <= 200 else text[:199] + "…"


def _tokens(response: LlmResponse) -> float | None:
    usage = response.usage_metadata
    if usage is None:
        return None
    total = usage.total_token_count
    if total is None:
        total = (usage.prompt_token_count or 0) + (usage.candidates_token_count or 0)
    return float(total) if total else None


def _estimate(request: LlmRequest) -> float:
    """Tokens a request will use, roughly (4 characters a token, plus its answer's cap)."""
    size = sum(
        len(content.model_dump_json(exclude_none=True)) for content in request.contents or []
    )
    config = request.config
    if config is not None and config.system_instruction is not None:
        size += len(str(config.system_instruction))
    answer = (config.max_output_tokens if config is not None else None) or 0
    return math.ceil(size / 4) + answer
