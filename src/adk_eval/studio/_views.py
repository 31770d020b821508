"""What the page shows: sessions in brief, a session in full, and its history as typed entries.

Entry kinds: ``user`` (a user message), ``model_text`` (the agent said something
while calling tools), ``final`` (the agent's final response of a turn),
``tool_call``, ``tool_result``, ``tool_error`` (a tool response carrying
``{"error": {...}}``) and ``error`` (an ADK error event). Values are sent in
full; the page truncates long ones for display. One function,
`entries_from_events`, decides what an entry is; the conversation a remote
model call carries is turned into events first (`remote_events`, which export
uses too).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.events import Event
from google.adk.workflow import Workflow
from google.genai import types

from .._turns import jsonable, parts_text
from ._config import StudioTarget
from ._schemas import model_schema
from ._store import RequestRow, SessionRow

__all__ = [
    "agent_view",
    "entries_from_contents",
    "entries_from_events",
    "remote_events",
    "session_summary",
    "session_view",
]


def session_summary(row: SessionRow) -> dict[str, Any]:
    """A session in brief: what the list and the full view share."""
    return {
        "id": row.id,
        "target": row.target,
        "kind": row.kind,
        "role": row.role,
        "status": row.status,
        "phase": row.phase,
        "created_at": row.created_at,
    }


def agent_view(agent: BaseAgent | Workflow | None) -> dict[str, Any] | None:
    """An agent as the page describes it: name, description, instruction, schemas."""
    if agent is None:
        return None
    llm = agent if isinstance(agent, LlmAgent) else None
    instruction = llm.instruction if llm is not None and isinstance(llm.instruction, str) else ""
    return {
        "name": agent.name,
        "description": agent.description,
        "instruction": instruction,
        "input_schema": model_schema(llm.input_schema) if llm is not None else None,
        "output_schema": model_schema(llm.output_schema) if llm is not None else None,
    }


def session_view(
    row: SessionRow,
    *,
    version: int,
    requests: Sequence[RequestRow],
    events: Iterable[Event],
    running_tools: list[dict[str, Any]],
    target: StudioTarget | None,
    export_path: Path | None = None,
) -> dict[str, Any]:
    """Everything the page shows of a session.

    Args:
        row: The session.
        version: The change version the view was read at.
        requests: The session's requests, oldest first.
        events: Its history (agent and eval-case sessions).
        running_tools: Its tool calls in progress.
        target: Its target (None for a remote session, or when the studio no
            longer offers it).
        export_path: Where its export goes (default: its target's file).
    """
    pending = [
        {
            "id": r.id,
            "kind": r.kind,
            "agent_name": r.agent_name,
            "payload": r.payload,
            "created_at": r.created_at,
        }
        for r in requests
        if r.status == "pending"
    ]
    entries = _remote_entries(requests) if row.kind == "remote" else entries_from_events(events)
    return {
        **session_summary(row),
        "version": version,
        "agent": agent_view(target.agent if target is not None else None),
        "entries": entries,
        "pending": pending,
        "running_tools": running_tools,
        "exports": row.detail.get("exports", []),
        "result": row.detail.get("result"),
        "error": row.detail.get("error"),
        "can_export": _exportable(row, entries, pending),
        "eval_set_path": _path(export_path or (target.export_path if target else None)),
    }


def _path(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _exportable(row: SessionRow, entries: list[dict[str, Any]], pending: list[Any]) -> bool:
    if pending or row.phase in ("running", "awaiting_model"):
        return False
    return any(e["kind"] == "user" for e in entries) and any(e["kind"] == "final" for e in entries)


def _final_text(request: RequestRow) -> str | None:
    """The final response a remote model call was answered with (None: tool calls, or none)."""
    answer = request.answer
    if request.status != "answered" or not answer or answer["type"] == "tool_calls":
        return None
    return str(answer.get("text") or json.dumps(answer.get("value"), ensure_ascii=False))


def _remote_entries(requests: Sequence[RequestRow]) -> list[dict[str, Any]]:
    """A remote session's history: the latest model call's conversation, then its answer."""
    model_requests = [r for r in requests if r.kind == "model"]
    if not model_requests:
        return []
    last = model_requests[-1]
    entries = entries_from_contents(last.payload["contents"], last.agent_name)
    text = _final_text(last)
    if text is not None:
        entries.append(
            {"kind": "final", "text": text, "author": last.agent_name, "at": last.answered_at}
        )
    return entries


def remote_events(requests: Sequence[RequestRow]) -> list[Event]:
    """A remote session's history as ADK events: its latest model call's conversation, answered.

    The conversation is what the played agent's model saw; its events take the
    time the studio received it, the final response the time it was given.
    """
    model_requests = [r for r in requests if r.kind == "model"]
    if not model_requests:
        return []
    last = model_requests[-1]
    events = [
        _event_from_json(content, last.agent_name, last.created_at)
        for content in last.payload["contents"]
    ]
    text = _final_text(last)
    if text is not None:
        events.append(
            Event(
                author=last.agent_name,
                content=types.Content(role="model", parts=[types.Part(text=text)]),
                timestamp=last.answered_at or last.created_at,
            )
        )
    return events


def _response_entry(
    response: types.FunctionResponse, author: str, at: float | None
) -> dict[str, Any]:
    payload = jsonable(dict(response.response or {}))
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
        text = parts_text(event.content.parts)
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
                    "args": jsonable(dict(call.args or {})),
                    "long_running": bool(call.id and call.id in long_running),
                    "author": event.author,
                    "at": at,
                }
            )
        for response in responses:
            entries.append(_response_entry(response, event.author, at))
    return entries


def entries_from_contents(
    contents: Iterable[Mapping[str, Any]], agent_name: str
) -> list[dict[str, Any]]:
    """The history a remote model call carries (as `protocol.content_to_json` wrote it).

    Each content becomes the event it came from (authored by ``user`` for the
    user's role, else by `agent_name`); the contents carry no times (``at`` is None).
    """
    events = [_event_from_json(content, agent_name) for content in contents]
    return [{**entry, "at": None} for entry in entries_from_events(events)]


def _event_from_json(content: Mapping[str, Any], agent_name: str, at: float | None = None) -> Event:
    """The event `content` came from: the user's text is the user's, the rest the agent's.

    Function responses have the user's role but, as in ADK, the agent's authorship.
    """
    role = content.get("role")
    parts: list[types.Part] = []
    for part in content.get("parts", []):
        if "function_call" in part:
            call = part["function_call"]
            parts.append(
                types.Part(
                    function_call=types.FunctionCall(
                        id=call.get("id"), name=call.get("name"), args=call.get("args")
                    )
                )
            )
        elif "function_response" in part:
            response = part["function_response"]
            parts.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=response.get("id"),
                        name=response.get("name"),
                        response=response.get("response"),
                    )
                )
            )
        elif part.get("text"):
            parts.append(types.Part(text=part["text"]))
    answers = any(part.function_response is not None for part in parts)
    event = Event(
        author="user" if role == "user" and not answers else agent_name,
        content=types.Content(role=role, parts=parts),
    )
    if at is not None:
        event.timestamp = at
    return event
