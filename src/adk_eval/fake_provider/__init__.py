"""A fake model provider on 127.0.0.1 that speaks OpenAI's and Gemini's wire formats.

For tests and benchmarks of the *real* client code (ADK's `LiteLlm` and
`Gemini`) where no provider can be reached. It is a public testing tool::

    with FakeProviderServer([tool_reply("add", {"a": 2, "b": 2}), text_reply("4")]) as server:
        model = LiteLlm(model="openai/fake", api_base=server.openai_base, api_key="x")
        ...
    server.requests  # every request, in order: its body, arrival time and outcome

Routes: ``POST /v1/chat/completions`` (OpenAI chat completions, non-streaming)
and ``POST /v1beta/models/{model}:generateContent`` (Gemini). Like
`ScriptedLlm`, the reply is chosen from the request (how many assistant turns
it already holds), so one server serves concurrent conversations. A
``responder(request) -> FakeReply`` function can decide instead (failures,
per-request logic).

Quota mode: ``FakeProviderServer(..., quota=Quota(requests=20, tokens=None,
window=10.0))`` limits each model like a real provider: at most ``requests``
requests and ``tokens`` tokens (the prompt's characters / 4 plus the reply's
completion tokens) in any ``window`` seconds (60 by default: RPM and TPM). A
request over the quota gets a 429 in the provider's format, which spends
nothing:

- OpenAI: ``{"error": {"message": "Rate limit reached for ...", "type":
  "rate_limit_exceeded", "param": null, "code": "rate_limit_exceeded"}}``,
  LiteLLM's `RateLimitError`;
- Gemini: ``{"error": {"code": 429, "message": ..., "status":
  "RESOURCE_EXHAUSTED", "details": [QuotaFailure, RetryInfo]}}``, google-genai's
  `ClientError` with code 429.

Both send a ``Retry-After`` header: the whole seconds (rounded up) until enough
of the oldest admitted requests leave the window for this one to fit; Gemini's
``RetryInfo.retryDelay`` says the same. OpenAI responses also carry its
``x-ratelimit-*`` headers. ``error_rate=0.05`` fails that fraction of requests
with a 503, drawn from ``seed``. The log, `FakeProviderServer.requests`, records
each request's arrival (`time.monotonic`), model and outcome (``admitted``,
``rate_limited``, ``server_error``); `FakeProviderServer.max_admitted_in_any_window`
and `FakeProviderServer.rejections` read it.

A reply may carry headers of its own (``FakeReply(headers={"retry-after":
"0"})``), for providers that say odd things. ``log=FILE`` appends each request
to FILE as a JSON line with the status it was answered with.

``python -m adk_eval.fake_provider --delay 0.2 --rpm 20/10s --error-rate 0.05
--log requests.jsonl`` runs one in its own process and prints its URL.
"""

from ._quota import Quota
from ._replies import (
    FakeReply,
    FakeRequest,
    error_reply,
    raw_reply,
    text_reply,
    tool_reply,
)
from ._server import FakeProviderServer

__all__ = [
    "FakeProviderServer",
    "FakeReply",
    "FakeRequest",
    "Quota",
    "error_reply",
    "raw_reply",
    "text_reply",
    "tool_reply",
]
