"""What ADK's spans say was sent and answered, read back into `google.genai` types.

Schema 1 writes ADK's own JSON (``gcp.vertex.agent.llm_request``: the request's
``contents``; ``llm_response``: the `LlmResponse`; ``tool_call_args`` and
``tool_response``); schema 2 the experimental GenAI semconv messages
(``gen_ai.input.messages``/``gen_ai.output.messages``: ``{"role", "parts"}`` with
``text``/``tool_call``/``tool_call_response``/``blob``/``file_data`` parts) and
``gen_ai.tool.call.arguments``/``gen_ai.tool.call.result``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._span import Span

__all__ = [
    "call_ids",
    "parse_json",
    "request_contents",
    "response_fields",
    "tool_args",
    "tool_response",
    "usage_of",
]

_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "error": "OTHER"}
_ROLES = {"user": "user", "assistant": "model", "model": "model"}


def parse_json(value: Any) -> Any:
    """The JSON a string attribute holds, or None (absent, ``"{}"`` placeholder, malformed)."""
    if not isinstance(value, str) or value in ("", "{}", "N/A", "<not serializable>"):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _semconv_part(part: Mapping[str, Any]) -> types.Part | None:
    kind = part.get("type")
    if kind == "text":
        return types.Part(text=str(part.get("content", "")))
    if kind == "tool_call":
        args = part.get("arguments")
        call = types.FunctionCall(
            name=str(part.get("name", "")), args=args if isinstance(args, dict) else None
        )
        return types.Part(function_call=call)
    if kind == "tool_call_response":
        response = part.get("response")
        reply = types.FunctionResponse(
            id=str(part.get("id", "")) or None,
            response=response if isinstance(response, dict) else {"result": response},
        )
        return types.Part(function_response=reply)
    if kind == "file_data":
        data = types.FileData(file_uri=part.get("uri"), mime_type=part.get("mime_type"))
        return types.Part(file_data=data)
    return None


def _semconv_content(message: Mapping[str, Any]) -> types.Content:
    parts = [_semconv_part(p) for p in message.get("parts", []) if isinstance(p, Mapping)]
    role = _ROLES.get(str(message.get("role", "")), str(message.get("role", "")))
    return types.Content(role=role, parts=[p for p in parts if p is not None])


def request_contents(llm: Span) -> list[types.Content]:
    """The contents of the model call's request (empty when not captured)."""
    request = parse_json(llm.attributes.get("gcp.vertex.agent.llm_request"))
    if isinstance(request, dict) and isinstance(request.get("contents"), list):
        return [types.Content.model_validate(c) for c in request["contents"]]
    messages = parse_json(llm.attributes.get("gen_ai.input.messages"))
    if isinstance(messages, list):
        return [_semconv_content(m) for m in messages if isinstance(m, Mapping)]
    return []


def response_fields(llm: Span) -> dict[str, Any]:
    """The `LlmResponse` fields of the model call's answer (empty when not captured)."""
    response = parse_json(llm.attributes.get("gcp.vertex.agent.llm_response"))
    if isinstance(response, dict):
        parsed = LlmResponse.model_validate(response)
        return {k: getattr(parsed, k) for k in parsed.model_dump(exclude_none=True)}
    messages = parse_json(llm.attributes.get("gen_ai.output.messages"))
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], Mapping):
        return {}
    fields: dict[str, Any] = {"content": _semconv_content(messages[0])}
    reason = str(messages[0].get("finish_reason") or "")
    if reason:
        fields["finish_reason"] = types.FinishReason(_FINISH.get(reason, reason.upper()))
    return fields


def call_ids(content: types.Content, tools: Sequence[Span]) -> types.Content:
    """The model's calls with the ids ADK gave them (their ``execute_tool`` spans')."""
    unused = list(tools)
    parts = []
    for part in content.parts or []:
        call = part.function_call
        if call is not None:
            match = next(
                (t for t in unused if t.attributes.get("gen_ai.tool.name") == call.name), None
            )
            if match is not None:
                unused.remove(match)
                found = match.attributes.get("gen_ai.tool.call.id")
                call_id = found if isinstance(found, str) and found != "<not specified>" else None
                part = types.Part(function_call=call.model_copy(update={"id": call_id}))
        parts.append(part)
    return types.Content(role=content.role or "model", parts=parts)


def tool_args(tool: Span) -> dict[str, Any] | None:
    """The arguments the tool was called with, if captured."""
    for key in ("gen_ai.tool.call.arguments", "gcp.vertex.agent.tool_call_args"):
        value = parse_json(tool.attributes.get(key))
        if isinstance(value, dict):
            return value
    if tool.attributes.get("gcp.vertex.agent.tool_call_args") == "{}":
        return {}
    return None


def tool_response(tool: Span) -> dict[str, Any] | None:
    """The tool's answer as ADK stores it (a non-dict wrapped as ``{"result": ...}``)."""
    for key in ("gen_ai.tool.call.result", "gcp.vertex.agent.tool_response"):
        raw = tool.attributes.get(key)
        if raw == "{}":
            return {}
        value = parse_json(raw)
        if value is not None:
            return value if isinstance(value, dict) else {"result": value}
    return None


def _int(attributes: Mapping[str, Any], key: str) -> int | None:
    value = attributes.get(key)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def usage_of(attributes: Mapping[str, Any]) -> types.GenerateContentResponseUsageMetadata | None:
    """Token usage from the ``gen_ai.usage.*`` attributes, or None when none is there."""
    prompt = _int(attributes, "gen_ai.usage.input_tokens")
    output = _int(attributes, "gen_ai.usage.output_tokens")
    if prompt is None and output is None:
        return None
    thoughts = _int(attributes, "gen_ai.usage.reasoning.output_tokens")
    candidates = None if output is None else output - (thoughts or 0)
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=candidates,
        thoughts_token_count=thoughts,
        cached_content_token_count=_int(attributes, "gen_ai.usage.cache_read.input_tokens"),
        total_token_count=(prompt or 0) + (output or 0),
    )
