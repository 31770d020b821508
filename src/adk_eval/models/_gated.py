"""Gated models: every model call of a run through one gateway.

`gated(llm, role)` is a stand-in for a model that ADK (or the judge, or a
summarizer) calls instead of it: an instance of a subclass of the model's own
class, with the same fields, so ADK's checks on the model (``isinstance(model,
Gemini)``, its name, its options) answer as they would, whose calls go to the
original object through `call`:

1. a cassette that replays answers the call, or stops the run at a request
   that differs from the recording (`ModelCalls.replay`);
2. else the cache answers a role it caches, when it has the answer;
3. else the call goes to the provider when the `Pacer` says it may, and is
   retried by the gateway alone (`_provider`): after a 429 /
   ``RESOURCE_EXHAUSTED`` (waiting as long as the provider asked, until the
   run's wait budget is spent) and after a server error, a timeout or a
   dropped connection (`ModelCalls.server_retries` times, with backoff). A
   call whose answer had begun to stream is not retried.
4. the answer goes to the cache (when cached) and the cassette (when recording).

The waiting counts in the run's gate, not against its ``max_duration``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import PrivateAttr

from ._gate import ModelCall, ResponseStore, RunGate, current_gate
from ._provider import PACER_ENV, live, process_pacer, use_pacer
from ._requests import fingerprint, request_data
from ._usage import cost_of

__all__ = [
    "PACER_ENV",
    "base_url_of",
    "call",
    "gated",
    "is_gated",
    "process_pacer",
    "use_pacer",
]


class _GatedLlm(BaseLlm):
    """The methods every gated model class has (see `gated`)."""

    _adk_eval_inner: Any = PrivateAttr(default=None)
    _adk_eval_role: str = PrivateAttr(default="agent")

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """The original model's answer, through the run's gateway."""
        async for response in call(self._adk_eval_inner, llm_request, stream, self._adk_eval_role):
            yield response

    def connect(self, llm_request: LlmRequest) -> Any:
        """A live connection: the original model's own (live calls are not gated)."""
        return self._adk_eval_inner.connect(llm_request)


_CLASSES: dict[type, type] = {}
_CLASSES_LOCK = threading.Lock()


def _gated_class(kind: type) -> type:
    with _CLASSES_LOCK:
        if kind not in _CLASSES:
            _CLASSES[kind] = type(
                f"Gated{kind.__name__}", (_GatedLlm, kind), {"__module__": __name__}
            )
        return _CLASSES[kind]


def is_gated(llm: Any) -> bool:
    """Whether `llm` is a gated stand-in already."""
    return isinstance(llm, _GatedLlm)


def gated(llm: BaseLlm, role: str) -> BaseLlm:
    """A stand-in for `llm` whose calls go through the gateway as `role` (see the module doc).

    The stand-in has `llm`'s class (a subclass of it) and fields; its calls run on
    `llm` itself, so whatever state the model object keeps stays its own.
    """
    if is_gated(llm):
        llm = llm._adk_eval_inner  # type: ignore[attr-defined]
    clone = llm.model_copy()
    object.__setattr__(clone, "__class__", _gated_class(type(llm)))
    private = dict(getattr(clone, "__pydantic_private__", None) or {})
    private.update(_adk_eval_inner=llm, _adk_eval_role=role)
    object.__setattr__(clone, "__pydantic_private__", private)
    return clone


def base_url_of(llm: Any) -> str | None:
    """The address `llm` is served from, when it names one (None: its provider's default)."""
    for name in ("base_url", "api_base"):
        value = getattr(llm, name, None)
        if isinstance(value, str) and value:
            return value
    extra = getattr(llm, "_additional_args", None) or {}
    for name in ("api_base", "base_url"):
        if isinstance(extra.get(name), str) and extra[name]:
            return str(extra[name])
    model = getattr(llm, "model", "")
    if isinstance(model, str) and model.startswith("openai/"):
        return os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL") or None
    return None


async def call(
    llm: BaseLlm, request: LlmRequest, stream: bool, role: str
) -> AsyncGenerator[LlmResponse, None]:
    """`llm`'s answer to `request`, through the current run's gateway (see the module doc)."""
    gate = current_gate()
    model = str(llm.model)
    base_url = base_url_of(llm)
    stores = _stores(gate, role)
    if not stores:
        async for response in live(gate, llm, request, stream, model, base_url):
            yield response
        return
    data = request_data(request, model)
    entry = ModelCall(
        gate.case,
        gate.attempt,
        role,
        model,
        base_url,
        data,
        fingerprint(role, model, base_url, data, gate.attempt),
        gate.next_index(role),
    )
    cassette = gate.cassette
    answer = cassette.lookup(entry) if cassette is not None else None
    if answer is not None:
        gate.tally["replayed"] += 1
        for response in _responses(answer):
            yield response
        return
    cache = _cache(gate, role)
    if cache is not None:
        answer = cache.lookup(entry)
        gate.tally["cache_hits" if answer is not None else "cache_misses"] += 1
        if answer is not None:
            responses = _responses(answer)
            gate.saved(_cost(responses, model))
            _record(gate, entry, answer)
            for response in responses:
                yield response
            return
    kept: list[dict[str, Any]] = []
    complete = True
    async for response in live(gate, llm, request, stream, model, base_url):
        kept.append(response.model_dump(mode="json", exclude_none=True))
        complete = complete and response.error_code is None
        yield response
    if complete and kept:
        if cache is not None:
            cache.save(entry, kept)
        _record(gate, entry, kept)


def _stores(gate: RunGate, role: str) -> bool:
    return gate.cassette is not None or gate.caches(role)


def _cache(gate: RunGate, role: str) -> ResponseStore | None:
    if not gate.caches(role):
        return None
    from ._cache import open_cache

    return open_cache(gate.settings)


def _record(gate: RunGate, entry: ModelCall, answer: list[dict[str, Any]]) -> None:
    """Writes the answer to the run's cassette: when recording, or updating a replayed one."""
    settings = gate.settings
    if gate.cassette is not None and (settings.record is not None or settings.on_miss == "call"):
        gate.cassette.save(entry, answer)
        gate.tally["recorded"] += 1


def _responses(answer: list[dict[str, Any]]) -> list[LlmResponse]:
    return [LlmResponse.model_validate_json(json.dumps(item)) for item in answer]


def _cost(responses: list[LlmResponse], model: str) -> float | None:
    total = 0.0
    for response in responses:
        usage = response.usage_metadata
        if usage is None or response.partial:
            continue
        cost = cost_of(
            response.model_version or model,
            usage.prompt_token_count or 0,
            usage.candidates_token_count or 0,
            usage.cached_content_token_count or 0,
        )
        if cost is None:
            return None
        total += cost
    return total
