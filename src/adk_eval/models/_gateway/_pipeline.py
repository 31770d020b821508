"""The gateway's pipeline: every model call of a run, whatever its role, through one gate.

`call(llm, request, stream, role)` answers a call to `llm` (an agent's, through
`GatewayPlugin`; a judge's or a simulated tool's, through `_ask`; the
summarizer's, through `GatedLlm`) with the current run's gate (`current_gate`),
in this order:

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

import os
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic_core import to_json

from ._answers import ModelCall, ResponseStore
from ._gate import RunGate, current_gate
from ._provider import live
from ._requests import canonical, fingerprint, request_data
from ._stats import ProviderStats
from ._usage import cost_of

__all__ = ["GatedLlm", "base_url_of", "call"]


class GatedLlm(BaseLlm):
    """`inner` behind the gateway, for code that takes any model object and calls it.

    ADK's own `LlmEventSummarizer` takes a model (``LlmEventSummarizer(llm=...)``)
    and calls its ``generate_content_async``: this wrapper is that model, whose
    calls go to `inner` through `call` as `role`. (An agent's model calls enter
    the gateway through `GatewayPlugin` instead: ADK builds an agent's request
    for its own model's class, which a wrapper is not.)

    Attributes:
        inner: The model called.
        role: Whose calls these are (``summarizer``).
    """

    inner: BaseLlm
    role: str

    @classmethod
    def of(cls, llm: BaseLlm, role: str) -> GatedLlm:
        """`llm` behind the gateway as `role` (a gated model keeps its inner one)."""
        inner = llm.inner if isinstance(llm, GatedLlm) else llm
        return cls(model=inner.model, inner=inner, role=role)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """`inner`'s answer, through the run's gateway."""
        async for response in call(self.inner, llm_request, stream, self.role):
            yield response


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
    llm: BaseLlm, request: LlmRequest, stream: bool, role: str, gate: RunGate | None = None
) -> AsyncGenerator[LlmResponse, None]:
    """`llm`'s answer to `request`, through `gate` (None: the current run's; see the module doc)."""
    gate = gate if gate is not None else current_gate()
    model = str(llm.model)
    base_url = base_url_of(llm)
    stores = _stores(gate, role)
    if not stores:
        async for response in live(gate, llm, request, stream, model, base_url):
            yield response
        return
    data = request_data(request, model)
    written = canonical(data)  # once: the cassette compares it, the key is hashed around it
    entry = ModelCall(
        gate.case,
        gate.attempt,
        role,
        model,
        base_url,
        data,
        fingerprint(role, model, base_url, data, gate.attempt, written=written),
        gate.next_index(role),
        written,
    )
    cassette = gate.cassette
    answer = cassette.lookup(entry) if cassette is not None else None
    if answer is not None:
        gate.count(ProviderStats(replayed=1))
        for response in _responses(answer):
            yield response
        return
    cache = _cache(gate, role)
    if cache is not None:
        answer = cache.lookup(entry)
        if answer is None:
            gate.count(ProviderStats(cache_misses=1))
        else:
            responses = _responses(answer)
            gate.count(ProviderStats(cache_hits=1, saved_usd=_cost(responses, model)))
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
        gate.count(ProviderStats(recorded=1))


def _responses(answer: list[dict[str, Any]]) -> list[LlmResponse]:
    # Validated from JSON text, not from the dicts: a field of bytes (a thought
    # signature, inline data) is base64 in JSON and would be taken as raw text.
    return [LlmResponse.model_validate_json(to_json(item)) for item in answer]


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
