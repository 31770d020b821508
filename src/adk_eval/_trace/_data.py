"""A trace as JSON data and back, and the read-only view of it that a result gives.

`trace_to_data` writes the trace's own fields flat (``events``,
``final_state``, ..., ``artifacts``), as a result's data form has always held
them; `trace_from_data` reads them back (older data may lack the later
fields). A trace of several sessions writes each session's share of the events
as counts and its own states and artifacts (``sessions``), not its events again.
Events and artifacts go through pydantic, as ADK defines them; what JSON cannot
carry becomes its ``repr``, in events as in states.
`TraceView` gives a class that holds a trace (``self.trace``) the trace's fields
as read-only properties, so nothing copies them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events import Event
from google.genai import types
from pydantic import TypeAdapter

from .._turns import jsonable
from ._items import NestedEvent
from ._trace import EvalTrace

__all__ = ["TRACE_KEYS", "TraceView", "trace_from_data", "trace_to_data"]

TRACE_KEYS = (
    "events",
    "final_state",
    "user_agent_events",
    "initial_state",
    "nested_events",
    "tool_sources",
    "tool_errors",
    "argument_problems",
    "artifacts",
    "sessions",
)
"""The keys `trace_to_data` writes, in order."""

_EVENTS = TypeAdapter(list[Event])
_PARTS = TypeAdapter(dict[str, types.Part])


def _events(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The events as JSON data, each value JSON cannot carry as its ``repr``.

    A workflow node's output or a state delta can hold anything (a lock, a lambda):
    such a value is written as it is in the states, and the rest is kept.
    """
    dumped: list[dict[str, Any]] = _EVENTS.dump_python(
        list(events), mode="json", exclude_none=True, by_alias=True, fallback=repr
    )
    return dumped


def trace_to_data(trace: EvalTrace) -> dict[str, Any]:
    """The trace's fields (but its case name) as JSON-ready data."""
    return {
        "events": _events(trace.events),
        "final_state": jsonable(trace.final_state),
        "user_agent_events": _events(trace.user_agent_events),
        "initial_state": jsonable(trace.initial_state),
        "nested_events": [
            {"path": list(n.path), "call_ids": list(n.call_ids), "event": event}
            for n, event in zip(
                trace.nested_events,
                _events([n.event for n in trace.nested_events]),
                strict=True,
            )
        ],
        "tool_sources": dict(trace.tool_sources),
        "tool_errors": dict(trace.tool_errors),
        "argument_problems": {key: list(value) for key, value in trace.argument_problems.items()},
        "artifacts": _PARTS.dump_python(dict(trace.artifacts), mode="json", exclude_none=True),
        "sessions": [
            {
                "events": len(part.events),
                "user_agent_events": len(part.user_agent_events),
                "final_state": jsonable(part.final_state),
                "initial_state": jsonable(part.initial_state),
                "artifacts": _PARTS.dump_python(
                    dict(part.artifacts), mode="json", exclude_none=True
                ),
            }
            for part in trace.sessions
        ],
    }


def trace_from_data(data: Mapping[str, Any], *, case_name: str | None = None) -> EvalTrace:
    """The trace `trace_to_data` wrote (`case_name`: whose it is)."""
    nested = data.get("nested_events", [])
    nested_events = _EVENTS.validate_python([n["event"] for n in nested])
    trace = EvalTrace(
        events=tuple(_EVENTS.validate_python(data["events"])),
        final_state=data["final_state"],
        initial_state=data["initial_state"],
        user_agent_events=tuple(_EVENTS.validate_python(data["user_agent_events"])),
        case_name=case_name,
        nested_events=tuple(
            NestedEvent(path=tuple(n["path"]), call_ids=tuple(n["call_ids"]), event=event)
            for n, event in zip(nested, nested_events, strict=True)
        ),
        tool_sources=data.get("tool_sources", {}),
        tool_errors=data.get("tool_errors", {}),
        argument_problems={
            key: tuple(value) for key, value in data.get("argument_problems", {}).items()
        },
        artifacts=_PARTS.validate_python(data.get("artifacts", {})),
    )
    return _with_sessions(trace, data.get("sessions", []))


def _with_sessions(trace: EvalTrace, sessions: Sequence[Mapping[str, Any]]) -> EvalTrace:
    """`trace` with the sessions `trace_to_data` wrote (their events are `trace`'s)."""
    parts, events, users = [], 0, 0
    for session in sessions:
        count, user_count = session["events"], session["user_agent_events"]
        parts.append(
            trace.session_part(
                trace.events[events : events + count],
                trace.user_agent_events[users : users + user_count],
                final_state=session["final_state"],
                initial_state=session["initial_state"],
                artifacts=_PARTS.validate_python(session.get("artifacts", {})),
            )
        )
        events, users = events + count, users + user_count
    return dataclasses.replace(trace, sessions=tuple(parts)) if parts else trace


class TraceView:
    """The fields of ``self.trace``, read-only, for a class that holds a trace."""

    @property
    def trace(self) -> EvalTrace:
        """The trace the fields are read from."""
        raise NotImplementedError

    @property
    def events(self) -> Sequence[Event]:
        """The main session's events, in order."""
        return self.trace.events

    @property
    def final_state(self) -> Mapping[str, Mapping[str, Any]]:
        """Scoped view of the main session's final state."""
        return self.trace.final_state

    @property
    def initial_state(self) -> Mapping[str, Mapping[str, Any]]:
        """Scoped view of the state the run started with."""
        return self.trace.initial_state

    @property
    def user_agent_events(self) -> Sequence[Event]:
        """The shared user-agent session's events."""
        return self.trace.user_agent_events

    @property
    def nested_events(self) -> Sequence[NestedEvent]:
        """Events of the agents that ran inside `AgentTool` calls."""
        return self.trace.nested_events

    @property
    def tool_sources(self) -> Mapping[str, str]:
        """What answered a tool call instead of its tool, by call id (`EvalTrace.source_of`)."""
        return self.trace.tool_sources

    @property
    def tool_errors(self) -> Mapping[str, str]:
        """What a mock, a simulation or an injected fault raised, by call id."""
        return self.trace.tool_errors

    @property
    def argument_problems(self) -> Mapping[str, Sequence[str]]:
        """How a call does not fit its tool's declaration, by call id."""
        return self.trace.argument_problems

    @property
    def artifacts(self) -> Mapping[str, types.Part]:
        """The main session's artifacts at the end, by file name."""
        return self.trace.artifacts
