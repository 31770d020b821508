"""Simulated runs as realism measures them: their events without the stop signal, verdict, name.

`simulated_runs` reads what `realism_report` is given (`EvalResult`s, or
``(events, passed[, name])`` tuples); `runs_of_report` reads the runs of a JSON
report of ``adk-eval run --json``, each long-running call paired with the user's
answer to it as `features` reads them. A simulated user's stop signal is how it
ends, not something a person says: it is left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.genai import types

from .._errors import EvalSetupError
from .._result import EvalResult
from .._user_agents import is_stop_signal

__all__ = ["SimulatedRun", "runs_of_report", "simulated_runs"]

SimulatedRun = tuple[list[Event], bool, str]
"""A simulated run's events (without its stop signal), verdict and name ("" unknown)."""


def simulated_runs(
    simulated: Iterable[EvalResult] | Iterable[tuple[Any, ...]],
) -> Iterable[SimulatedRun]:
    """Each simulated run's events (without its stop signal), verdict and name ("" unknown)."""
    for item in simulated:
        if isinstance(item, EvalResult):
            events, passed, name = list(item.events), item.passed, item.name
        else:
            events, passed, name = item[0], item[1], (item[2] if len(item) > 2 else "")
        yield [event for event in events if not _stops(event)], bool(passed), str(name)


def _stops(event: Event) -> bool:
    """A simulated user's stop signal: how it ends, not something a person says."""
    parts = (event.content.parts if event.content else None) or []
    text = " ".join(part.text for part in parts if part.text).strip()
    return event.author == "user" and is_stop_signal(text)


def runs_of_report(path: Path) -> list[SimulatedRun]:
    """The simulated runs of a JSON report (``adk-eval run --json``): messages, verdict, name.

    Raises:
        EvalSetupError: Not a JSON report of adk-eval (one line naming it).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = data["results"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise EvalSetupError(
            f"{path} is not a JSON report of `adk-eval run --json` ({type(error).__name__}): "
            "give the report of the simulated runs of the mined cases"
        ) from None
    found = []
    for run in runs:
        events = _events_of(run.get("conversation") or [])
        found.append((events, run.get("status") == "passed", str(run.get("name") or "")))
    return found


def _events_of(entries: list[dict[str, Any]]) -> list[Event]:
    """A report's conversation as the events `features` reads.

    Its messages, and each long-running call with the user's answer to it (paired
    by tool name, in order).
    """
    events: list[Event] = []
    waiting: dict[str, list[str]] = {}
    for index, entry in enumerate(entries):
        kind, author = entry.get("kind"), str(entry.get("author") or entry.get("role") or "user")
        if kind == "message":
            role = "user" if entry.get("role") == "user" else "model"
            part = types.Part(text=str(entry.get("text") or ""))
            events.append(Event(author=author, content=types.Content(role=role, parts=[part])))
        elif kind == "tool_call" and entry.get("long_running"):
            call_id, name = f"asked-{index}", str(entry.get("name") or "")
            waiting.setdefault(name, []).append(call_id)
            call = types.FunctionCall(id=call_id, name=name, args=entry.get("args") or {})
            content = types.Content(role="model", parts=[types.Part(function_call=call)])
            events.append(Event(author=author, content=content, long_running_tool_ids={call_id}))
        elif kind == "tool_response" and author == "user" and waiting.get(entry.get("name") or ""):
            name = str(entry.get("name"))
            answer = types.FunctionResponse(
                id=waiting[name].pop(0), name=name, response=_as_dict(entry.get("response"))
            )
            content = types.Content(role="user", parts=[types.Part(function_response=answer)])
            events.append(Event(author="user", content=content))
    return events


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"result": value}
