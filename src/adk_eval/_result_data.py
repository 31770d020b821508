"""`EvalResult` as plain JSON data and back, without loss (for results that cross processes).

Events are ADK's own JSON (``Event.model_dump(mode="json")``); every other field is
JSON as it is. Values that JSON cannot hold (a metric's ``value`` that is an object)
become their ``repr``: the one lossy corner, and only for such values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from google.adk.events import Event

from ._result import EvalErrorInfo, EvalResult, TokenUsage
from ._termination import Termination
from ._trace import NestedEvent
from ._turns import jsonable
from .metrics._types import MetricResult

__all__ = ["DATA_VERSION", "result_from_data", "result_to_data"]

DATA_VERSION = 1
"""The version of the format (`result_from_data` refuses another)."""


def _event(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json", exclude_none=True, by_alias=True)


def result_to_data(result: EvalResult) -> dict[str, Any]:
    """`result` as JSON-ready data."""
    return {
        "version": DATA_VERSION,
        "name": result.name,
        "status": result.status,
        "metrics": {
            name: jsonable(dataclasses.asdict(metric)) for name, metric in result.metrics.items()
        },
        "events": [_event(event) for event in result.events],
        "duration_ms": result.duration_ms,
        "turns": result.turns,
        "token_usage": dataclasses.asdict(result.token_usage),
        "error": dataclasses.asdict(result.error) if result.error else None,
        "termination_reason": result.termination_reason,
        "termination": jsonable(dataclasses.asdict(result.termination))
        if result.termination
        else None,
        "final_state": jsonable(result.final_state),
        "user_agent_events": [_event(event) for event in result.user_agent_events],
        "user_agent_token_usage": dataclasses.asdict(result.user_agent_token_usage),
        "description": result.description,
        "xfail": result.xfail,
        "attempt": result.attempt,
        "initial_state": jsonable(result.initial_state),
        "nested_events": [
            {"path": list(n.path), "call_ids": list(n.call_ids), "event": _event(n.event)}
            for n in result.nested_events
        ],
        "agent_name": result.agent_name,
        "tool_sources": dict(result.tool_sources),
        "seed": result.seed,
    }


def result_from_data(data: Mapping[str, Any]) -> EvalResult:
    """The `EvalResult` that `result_to_data` wrote.

    Raises:
        ValueError: The data is of another format version.
    """
    if data.get("version") != DATA_VERSION:
        raise ValueError(
            f"EvalResult data of version {data.get('version')!r}; this adk-eval reads "
            f"version {DATA_VERSION}"
        )
    metrics = {name: MetricResult(**fields) for name, fields in data["metrics"].items()}
    termination = data["termination"]
    return EvalResult(
        name=data["name"],
        status=data["status"],
        metrics=metrics,
        events=tuple(Event.model_validate(e) for e in data["events"]),
        duration_ms=data["duration_ms"],
        turns=data["turns"],
        token_usage=TokenUsage(**data["token_usage"]),
        error=EvalErrorInfo(**data["error"]) if data["error"] else None,
        termination_reason=data["termination_reason"],
        termination=Termination(**termination) if termination else None,
        final_state=data["final_state"],
        user_agent_events=tuple(Event.model_validate(e) for e in data["user_agent_events"]),
        user_agent_token_usage=TokenUsage(**data["user_agent_token_usage"]),
        description=data["description"],
        xfail=data["xfail"],
        attempt=data["attempt"],
        initial_state=data["initial_state"],
        nested_events=tuple(
            NestedEvent(
                path=tuple(n["path"]),
                call_ids=tuple(n["call_ids"]),
                event=Event.model_validate(n["event"]),
            )
            for n in data["nested_events"]
        ),
        agent_name=data["agent_name"],
        tool_sources=data.get("tool_sources", {}),
        seed=data.get("seed"),
    )
