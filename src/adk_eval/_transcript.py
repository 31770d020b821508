"""A readable transcript of a trace, for judges and people.

::

    [user] I have really bad chest pain
    [clinician] calls read({"policy_id": "chest_pain"})
    [read result] {"red_flags": [...]}
    [clinician] Please call 999 now.

    Final state:
      session: {"escalation": {...}}

A run the harness stopped inside an `AgentTool` call (an unmocked tool, an
invariant) shows that call ending in the stop (``[billing stopped] adk_eval
stopped the run: ...``): what the `AgentTool` returned then is an artifact
of the stop, not its agent's answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._trace import EvalTrace, Message, ToolCall, ToolResponse

__all__ = ["argument_lines", "render_transcript", "transcript_lines"]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


# What `explain` says of an answer that was not the tool's nor a plain mock's.
_BRIEF_MARKS = {
    "simulated": "  (simulated)",
    "fault": "  (injected fault)",
    "rejected": "  (rejected by ADK: see the calls that do not fit)",
    "invariant": "  (stopped: it breaks an invariant; the tool never ran)",
    "stopped": "  (not run: the run was already stopping)",
}
_RAISED = {
    "mock": "its mock raised",
    "fault": "an injected fault raised",
    "simulated": "its simulation failed:",
}


_STOP = "adk_eval stopped the run"


def _stops_inside(trace: EvalTrace) -> dict[str, str]:
    """`AgentTool` call id -> the harness's stop line of a run stopped inside it (the first)."""
    stops: dict[str, str] = {}
    for nested in trace.nested_events:
        for answer in nested.event.get_function_responses():
            error = (answer.response or {}).get("error")
            if isinstance(error, str) and error.startswith(_STOP):
                for call_id in nested.call_ids:
                    stops.setdefault(call_id, error)
    return stops


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def transcript_lines(
    trace: EvalTrace, *, max_chars_per_entry: int | None = 4000, brief: bool = False
) -> list[str]:
    """The conversation, one entry per message or tool call.

    Args:
        trace: What to render.
        max_chars_per_entry: Longer values are cut (None keeps everything).
        brief: One line per entry (``author: text``, ``author -> tool(args) =
            result``, marked ``(simulated)`` or ``(injected fault)`` where a model or
            a fault answered) with whitespace collapsed, as `EvalResult.explain` shows it.

    A run of several sessions (`EvalTrace.sessions`) shows each under a
    ``— session N —`` line.
    """
    if len(trace.sessions) > 1:
        return [
            line
            for number, part in enumerate(trace.sessions, 1)
            for line in [
                f"— session {number} —",
                *transcript_lines(part, max_chars_per_entry=max_chars_per_entry, brief=brief),
            ]
        ]

    render = _Render(trace, brief, max_chars_per_entry, _stops_inside(trace))
    lines: list[str] = []
    for item in trace.all_items:
        indent = "    " * len(item.path)  # what ran inside an AgentTool, under its call
        if isinstance(item, Message):
            speaker = "user" if item.role == "user" else item.author
            text = render.clip(item.text)
            lines.append(indent + (f"{speaker}: {text}" if brief else f"[{speaker}] {text}"))
        elif isinstance(item, ToolCall):
            lines.extend(indent + line for line in render.call(item))
        elif isinstance(item, ToolResponse) and not brief:
            # Every response where it happened: a confirmed tool's result comes after
            # the confirmation, a yield's answer after the pause.
            lines.append(indent + render.response(item))
    return lines


@dataclass(frozen=True)
class _Render:
    """How one trace's calls and responses read (`transcript_lines`)."""

    trace: EvalTrace
    brief: bool
    limit: int | None
    stops: dict[str, str]

    def clip(self, text: str) -> str:
        if self.brief:
            return _short(text, self.limit or len(text) or 1)
        return _clip(text, self.limit)

    def call(self, item: ToolCall) -> list[str]:
        """A call's line(s): with its result when brief, else the call (and a missing result)."""
        call = f"{item.name}({self.clip(_json(item.args))})"
        raised = self.trace.tool_errors.get(item.call_id or "")
        stop = self.stops.get(item.call_id or "")
        source = self.trace.source_of(item)
        if self.brief:
            result = "(no response)" if item.response is None else self.clip(_json(item.response))
            mark = _BRIEF_MARKS.get(source, "")
            if raised:
                result, mark = f"{_RAISED.get(source, 'it')} {self.clip(raised)}", ""
            elif stop:
                result, mark = f"stopped inside it: {self.clip(stop)}", ""
            return [f"{item.author} -> {call} = {result}{mark}"]
        lines = [f"[{item.author}] calls {call}"]
        if stop and item.response is None:
            lines.append(f"[{item.name} stopped] {self.clip(stop)}")
        elif raised:
            lines.append(f"[{item.name} result] {_RAISED.get(source, 'it')} {self.clip(raised)}")
        elif item.response is None:
            lines.append(f"[{item.name} result] (no response)")
        return lines

    def response(self, item: ToolResponse) -> str:
        """A response's line; of an `AgentTool` call a run stopped inside, the stop."""
        stop = self.stops.get(item.call_id or "")
        if stop:
            return f"[{item.name} stopped] {self.clip(stop)}"
        error = item.response.get("error")
        label, value = ("error", error) if error is not None else ("result", item.response)
        return f"[{item.name} {label}] {self.clip(_json(value))}"


def argument_lines(trace: EvalTrace) -> list[str]:
    """One block per call that does not fit its tool's declaration (what `explain` lists)."""
    lines: list[str] = []
    for item, problems in trace.misfits():
        verdict = "rejected by ADK" if trace.source_of(item) == "rejected" else "answered"
        lines.append(f"{item.author} -> {item.name}({_short(_json(item.args), 80)}): {verdict}")
        lines.extend(f"  - {problem}" for problem in problems)
    return lines


def render_transcript(
    trace: EvalTrace, *, include_state: bool = True, max_chars_per_entry: int | None = 4000
) -> str:
    """Renders the conversation: user and agent turns, tool calls with results, final state.

    Args:
        trace: What to render.
        include_state: Append the final scoped state.
        max_chars_per_entry: Longer entries are cut (None keeps everything).
    """
    lines = transcript_lines(trace, max_chars_per_entry=max_chars_per_entry)
    if include_state:
        lines.append("")
        lines.append("Final state:")
        scopes = {scope: values for scope, values in trace.final_state.items() if values}
        if not scopes:
            lines.append("  (empty)")
        for scope, values in scopes.items():
            lines.append(f"  {scope}: {_clip(_json(dict(values)), max_chars_per_entry)}")
    return "\n".join(lines)
