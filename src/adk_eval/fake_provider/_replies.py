"""What the fake provider receives and answers, and both wire formats of an answer."""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["openai", "gemini"]
"""The wire format of a request: OpenAI chat completions or Gemini ``generateContent``."""

Outcome = Literal["admitted", "rate_limited", "server_error"]
"""What the server did with a request: answered it with its reply (``admitted``), refused
it with a 429 over the quota (``rate_limited``), or failed it with a drawn 503
(``server_error``)."""


@dataclass(frozen=True)
class FakeReply:
    """What the fake provider answers.

    Attributes:
        text: Assistant text.
        tool_calls: ``(name, args)`` pairs, answered as tool calls.
        status: HTTP status; not 200 sends an error body with `text` as message.
        body: A raw body sent as is (for malformed replies).
        delay: Seconds to wait before answering (on top of the server's delay).
        headers: HTTP headers sent with it (a 429's ``Retry-After``, say).
        prompt_tokens, completion_tokens, cached_tokens: The usage reported (input,
            output, and the input tokens served from the provider's cache).
    """

    text: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 200
    body: str | None = None
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    prompt_tokens: int = 10
    completion_tokens: int = 5
    cached_tokens: int = 0


@dataclass(frozen=True)
class FakeRequest:
    """A request the fake provider received: one entry of the server's log.

    Attributes:
        api: ``"openai"`` or ``"gemini"``.
        body: The JSON body.
        model: The model named in the request.
        turn: How many assistant (model) turns the request already holds.
        waited: Seconds the server waited before answering (delay, jitter and
            the reply's own delay); 0 for a request refused at once.
        arrived: When it arrived, on the server's `time.monotonic` clock.
        outcome: ``"admitted"``, ``"rate_limited"`` (429) or ``"server_error"`` (503).
        tokens: What it costs against a token quota: the prompt's characters / 4
            (rounded up) plus the reply's completion tokens. Only an admitted
            request spends them.
    """

    api: Api
    body: dict[str, Any]
    model: str
    turn: int
    waited: float = 0.0
    arrived: float = 0.0
    outcome: Outcome = "admitted"
    tokens: int = 0


def text_reply(text: str, **kwargs: Any) -> FakeReply:
    """A plain text answer."""
    return FakeReply(text=text, **kwargs)


def tool_reply(name: str, args: dict[str, Any] | None = None, **kwargs: Any) -> FakeReply:
    """One tool call (pass ``tool_calls=`` to `FakeReply` for several)."""
    return FakeReply(tool_calls=((name, dict(args or {})),), **kwargs)


def error_reply(status: int, message: str = "fake provider error", **kwargs: Any) -> FakeReply:
    """An HTTP error with the provider's usual error body."""
    return FakeReply(text=message, status=status, **kwargs)


def raw_reply(body: str, status: int = 200, **kwargs: Any) -> FakeReply:
    """A body sent exactly as given (for example, not JSON)."""
    return FakeReply(body=body, status=status, **kwargs)


Responder = Callable[[FakeRequest], FakeReply]


def turn_of(api: Api, body: dict[str, Any]) -> int:
    """How many assistant (model) turns a request body already holds."""
    if api == "openai":
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    return sum(1 for c in body.get("contents", []) if c.get("role") == "model")


def prompt_tokens(api: Api, body: dict[str, Any]) -> int:
    """The prompt's size in tokens, estimated as its characters / 4 (rounded up).

    The characters are those of every string in the messages (OpenAI), or in the
    contents and the system instruction (Gemini): the conversation, not the tool
    declarations or settings.
    """
    if api == "openai":
        prompt: Any = body.get("messages", [])
    else:
        prompt = [body.get("contents", []), body.get("systemInstruction")]
    return math.ceil(_characters(prompt) / 4)


def _characters(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_characters(item) for item in value.values())
    if isinstance(value, list):
        return sum(_characters(item) for item in value)
    return 0


def openai_body(reply: FakeReply, model: str, ids: itertools.count[int]) -> dict[str, Any]:
    """An OpenAI chat completion answering `reply`."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{next(ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in reply.tool_calls
        ]
    usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
    usage["total_tokens"] = reply.prompt_tokens + reply.completion_tokens
    return {
        "id": f"chatcmpl-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {**usage, "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}},
    }


def gemini_body(reply: FakeReply, model: str) -> dict[str, Any]:
    """A Gemini ``generateContent`` response answering `reply`."""
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": reply.prompt_tokens,
            "candidatesTokenCount": reply.completion_tokens,
            "totalTokenCount": reply.prompt_tokens + reply.completion_tokens,
            "cachedContentTokenCount": reply.cached_tokens,
        },
        "modelVersion": model,
    }


def error_body(api: Api, status: int, message: str) -> dict[str, Any]:
    """The provider's usual error body for `status`."""
    if api == "gemini":
        return {"error": {"code": status, "message": message, "status": "UNAVAILABLE"}}
    return {"error": {"message": message, "type": "fake_error", "code": status}}
