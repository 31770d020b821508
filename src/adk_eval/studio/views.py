"""What the page shows of a conversation: typed history entries built from ADK events.

Entry kinds: ``user`` (a user message), ``model_text`` (the agent said something
while calling tools), ``final`` (the agent's final response of a turn),
``tool_call``, ``tool_result``, ``tool_error`` (a tool response carrying
``{"error": {...}}``) and ``error`` (an ADK error event). Values are sent in
full; the page truncates long ones for display.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.events import Event
from google.genai import types

__all__ = ["entries_from_contents", "entries_from_events"]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def _text(parts: Iterable[types.Part]) -> str:
    return "".join(p.text for p in parts if p.text and not p.thought)


def _response_entry(
    response: types.FunctionResponse, author: str, at: float | None
) -> dict[str, Any]:
    payload = _jsonable(dict(response.response or {}))
    error = payload.get("error") if isinstance(payload, Mapping) else None
    if error is not None:
        error_type = error.get("type", "Error") if isinstance(error, Mapping) else "Error"
        message = error.get("message", "") if isinstance(error, Mapping) else str(error)
        return {
            "kind": "tool_error",
            "name": response.name,
            "call_id": response.id,
            "error_type": str(error_type),
            "message": str(message),
            "response": payload,
            "author": author,
            "at": at,
        }
    return {
        "kind": "tool_result",
        "name": response.name,
        "call_id": response.id,
        "response": payload,
        "author": author,
        "at": at,
    }


def entries_from_events(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The history of an ADK session, oldest first."""
    entries: list[dict[str, Any]] = []
    for event in events:
        at = event.timestamp
        if event.error_code:
            entries.append(
                {
                    "kind": "error",
                    "code": event.error_code,
                    "message": event.error_message or "",
                    "at": at,
                }
            )
        if event.content is None or not event.content.parts:
            continue
        parts = event.content.parts
        text = _text(parts)
        calls = event.get_function_calls()
        responses = event.get_function_responses()
        long_running = event.long_running_tool_ids or set()
        if event.author == "user" and text and not responses:
            entries.append({"kind": "user", "text": text, "author": "user", "at": at})
        elif text and event.author != "user":
            kind = "model_text" if calls else "final"
            entries.append({"kind": kind, "text": text, "author": event.author, "at": at})
        for call in calls:
            entries.append(
                {
                    "kind": "tool_call",
                    "name": call.name,
                    "call_id": call.id,
                    "args": _jsonable(dict(call.args or {})),
                    "long_running": bool(call.id and call.id in long_running),
                    "author": event.author,
                    "at": at,
                }
            )
        for response in responses:
            entries.append(_response_entry(response, event.author, at))
    return entries


def entries_from_contents(contents: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The history a remote model request carries (as `protocol.content_to_json` wrote it)."""
    entries: list[dict[str, Any]] = []
    for content in contents:
        role = content.get("role")
        parts = content.get("parts", [])
        text = "".join(part.get("text", "") for part in parts)
        has_calls = any("function_call" in part for part in parts)
        if text and role == "user":
            entries.append({"kind": "user", "text": text, "author": "user", "at": None})
        elif text:
            entries.append(
                {
                    "kind": "model_text" if has_calls else "final",
                    "text": text,
                    "author": "model",
                    "at": None,
                }
            )
        for part in parts:
            if "function_call" in part:
                call = part["function_call"]
                entries.append(
                    {
                        "kind": "tool_call",
                        "name": call.get("name"),
                        "call_id": call.get("id"),
                        "args": call.get("args", {}),
                        "long_running": False,
                        "author": "model",
                        "at": None,
                    }
                )
            if "function_response" in part:
                response = part["function_response"]
                entries.append(
                    _response_entry(
                        types.FunctionResponse(
                            id=response.get("id"),
                            name=response.get("name"),
                            response=response.get("response"),
                        ),
                        "tool",
                        None,
                    )
                )
    return entries
