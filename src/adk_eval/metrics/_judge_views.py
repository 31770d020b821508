"""What an `llm_judge` sees besides the transcript: its views of the finished trace.

A judge always reads the transcript. ``sees=`` adds:

* ``state``: the final state, by scope (as `render_transcript` appends it);
* ``tool_calls``: every tool call, nested ones included, numbered, with its
  arguments, its answer (or what was raised) and what answered it (``mock``,
  ``real``, ``simulated``, ``refused``, ...: `EvalTrace.source_of`);
* ``mocks``: what the stand-ins recorded: each call a mock, a simulation or an
  injected fault answered, with how often the same call came before, and the
  state and artifacts its answer wrote;
* ``query``: read-only tools over the finished trace the judge may call instead
  (`_judge_tools`).

Every view reads the trace only, so a production session is seen as `score`
redacted it: the session is redacted before its trace is built.
`RENDERING` is the version of how the views are written; a judge's prompt hash
covers it with the views, so labels calibrate one judge as it saw the runs.

A judge is paid by the token, so what is pasted is bounded: each entry of the
transcript, each value of the state and each call's arguments and answer to
4,000 characters (`_transcript`), the transcript to `TRANSCRIPT_LIMIT` and each
added view to `VIEW_LIMIT` characters. Over a limit the first and the last
entries are kept, and a marker between them says how many were left out
(`bounded`). The query tools bound their answers too (`_judge_tools`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias, get_args

from .._errors import EvalSetupError
from .._trace import EvalTrace, ToolCall, ToolResponse
from .._transcript import render_transcript, transcript_lines

__all__ = [
    "JUDGE_VIEWS",
    "LEGACY_VIEWS",
    "RENDERING",
    "STAND_INS",
    "TRANSCRIPT_LIMIT",
    "VIEW_LIMIT",
    "JudgeView",
    "bounded",
    "call_records",
    "mock_records",
    "resolve_views",
    "views_text",
]

JudgeView: TypeAlias = Literal["transcript", "state", "tool_calls", "mocks", "query"]
"""What a judge may see: the transcript (always), and what ``sees=`` adds."""

JUDGE_VIEWS: tuple[JudgeView, ...] = get_args(JudgeView)
"""Every view, in the order a judge reads them."""

LEGACY_VIEWS: tuple[JudgeView, ...] = ("transcript", "state")
"""What a judge saw before ``sees=`` existed (and still sees by default)."""

RENDERING = 2
"""The version of how the added views are written (part of a judge's prompt hash).

2: the views and the query tools' answers are bounded (`VIEW_LIMIT`, `_judge_tools`).
The transcript and the state are written as they were before `sees=` existed (only a
transcript over `TRANSCRIPT_LIMIT` is cut), so the default judge keeps its hash.
"""

TRANSCRIPT_LIMIT = 100_000
"""Characters of transcript a judge reads (about 25,000 tokens); the state comes on top."""

VIEW_LIMIT = 40_000
"""Characters each added view (``tool_calls``, ``mocks``) takes at most (about 10,000 tokens)."""

STAND_INS = frozenset({"mock", "simulated", "fault"})
"""Sources of answers that are the harness's, not the tool's (the ``mocks`` view)."""

_LIMIT = 4000


def resolve_views(
    name: str, sees: Sequence[str] | str | None, include_state: bool | None
) -> tuple[JudgeView, ...]:
    """The views a judge gets, in canonical order, the transcript always first.

    Args:
        name: The judge's name (for messages).
        sees: The views asked for (a single name is one view); None: as
            `include_state` says, and the final state unless it says False.
        include_state: The older switch for the state; given with `sees`, the
            two must agree.

    Raises:
        EvalSetupError: An unknown view, or `include_state` contradicting `sees`.
    """
    if sees is None:
        return LEGACY_VIEWS if include_state in (None, True) else ("transcript",)
    asked = [sees] if isinstance(sees, str) else list(sees)
    unknown = [view for view in asked if view not in JUDGE_VIEWS]
    if unknown:
        raise EvalSetupError(
            f"llm_judge `{name}`: sees names what the judge gets besides the transcript, "
            f"one or more of {', '.join(repr(v) for v in JUDGE_VIEWS)}; got {unknown[0]!r}"
        )
    if include_state is not None and include_state != ("state" in asked):
        raise EvalSetupError(
            f"llm_judge `{name}`: include_state={include_state} contradicts "
            f"sees={tuple(asked)!r}; drop include_state and say it in sees "
            "(with or without 'state')"
        )
    return tuple(view for view in JUDGE_VIEWS if view == "transcript" or view in asked)


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)
    return text if len(text) <= _LIMIT else text[:_LIMIT] + f"… [{len(text) - _LIMIT} more]"


def call_records(trace: EvalTrace) -> list[dict[str, Any]]:
    """Every tool call, nested ones too, as the judge reads it (numbered from 1).

    Each record: ``index``, ``tool``, ``agent``, ``inside`` (the `AgentTool`
    calls it ran inside, when any), ``args``, ``answered_by`` (see
    `EvalTrace.source_of`), and ``answer``, ``raised`` or neither (no response),
    with ``argument_problems`` when it does not fit its tool's declaration.
    """
    records: list[dict[str, Any]] = []
    for index, call in enumerate(trace.nested_tool_calls, start=1):
        notes = trace.notes(call)
        record: dict[str, Any] = {"index": index, "tool": call.name, "agent": call.author}
        if call.path:
            record["inside"] = list(call.path)
        record["args"] = call.args
        record["answered_by"] = notes.pop("answered_by")
        if call.response is not None and "raised" not in notes:
            record["answer"] = call.response
        records.append(record | notes)
    return records


def mock_records(trace: EvalTrace) -> list[dict[str, Any]]:
    """What the stand-ins recorded: the calls a mock, simulation or fault answered.

    Each record is the call's (`call_records`) with ``occurrence`` (how many
    calls of the same tool with the same arguments came before, as
    `MockToolContext.occurrence` counts them) and, when its answer wrote any,
    ``wrote_state`` and ``saved_artifacts``.
    """
    responses = {
        item.call_id: item
        for item in trace.all_items
        if isinstance(item, ToolResponse) and item.call_id
    }
    seen: Counter[str] = Counter()
    records: list[dict[str, Any]] = []
    calls: list[ToolCall] = trace.nested_tool_calls
    for call, record in zip(calls, call_records(trace), strict=True):
        key = call.name + _json(call.args)
        occurrence, seen[key] = seen[key], seen[key] + 1
        if record["answered_by"] not in STAND_INS:
            continue
        record["occurrence"] = occurrence
        response = responses.get(call.call_id or "")
        event = response.event if response is not None else None
        if event is not None and len(event.get_function_responses()) == 1:
            if event.actions.state_delta:  # parallel answers share one event: not told apart
                record["wrote_state"] = dict(event.actions.state_delta)
            if event.actions.artifact_delta:
                record["saved_artifacts"] = sorted(event.actions.artifact_delta)
        records.append(record)
    return records


def _call_line(record: dict[str, Any]) -> str:
    inside = f" (inside {' > '.join(record['inside'])})" if "inside" in record else ""
    head = (
        f"#{record['index']} {record['agent']}{inside} -> "
        f"{record['tool']}({_json(record['args'])}), answered by {record['answered_by']}"
    )
    if "raised" in record:
        tail = f": raised {record['raised']}"
    elif "answer" in record:
        tail = f": {_json(record['answer'])}"
    else:
        tail = ": (no response)"
    problems = "".join(f"\n    - {p}" for p in record.get("argument_problems", ()))
    return head + tail + problems


def _mock_line(record: dict[str, Any]) -> str:
    line = _call_line(record) + f"\n    occurrence {record['occurrence']}"
    if "wrote_state" in record:
        line += f"; wrote state {_json(record['wrote_state'])}"
    if "saved_artifacts" in record:
        line += f"; saved artifacts {', '.join(record['saved_artifacts'])}"
    return line


def bounded(lines: list[str], limit: int, what: str) -> list[str]:
    """`lines` in at most about `limit` characters: the first and the last ones, and a marker.

    Args:
        lines: The entries, in order (one may hold several lines of text).
        limit: The characters they may take, newlines counted; half goes to the
            first entries, half to the last.
        what: What an entry is, plural (``"tool calls"``), for the marker.

    Returns:
        `lines` itself when it fits; else the first entries, a marker saying how
        many entries (and characters) were left out, then the last entries.
    """
    sizes = [len(line) + 1 for line in lines]
    if sum(sizes) <= limit:
        return lines
    head = used = 0
    while head < len(lines) and used + sizes[head] <= limit // 2:
        used, head = used + sizes[head], head + 1
    tail, used = len(lines), 0
    while tail > head and used + sizes[tail - 1] <= limit // 2:
        used, tail = used + sizes[tail - 1], tail - 1
    marker = (
        f"… [{tail - head} {what} left out here ({sum(sizes[head:tail])} characters): "
        f"the judge reads at most {limit} characters of them]"
    )
    return [*lines[:head], marker, *lines[tail:]]


def views_text(trace: EvalTrace, views: Sequence[JudgeView]) -> str:
    """What the judge reads pasted: the transcript, then each view it sees, each bounded."""
    entries = transcript_lines(trace)
    parts = ["\n".join(bounded(entries, TRANSCRIPT_LIMIT, "transcript entries"))]
    if "state" in views:  # the state as `render_transcript` appends it, after its entries
        parts[0] += render_transcript(trace)[len("\n".join(entries)) :]
    if "tool_calls" in views:
        lines = bounded([_call_line(r) for r in call_records(trace)], VIEW_LIMIT, "tool calls")
        parts.append(
            "Tool calls (numbered; `answered by` says what answered each: its tool (real), "
            "a mock, a simulation, an injected fault, or the harness refusing it):\n"
            + ("\n".join(lines) or "(no tool calls)")
        )
    if "mocks" in views:
        lines = bounded([_mock_line(r) for r in mock_records(trace)], VIEW_LIMIT, "records")
        parts.append(
            "What the mocks recorded (calls a mock, a simulation or an injected fault "
            "answered):\n" + ("\n".join(lines) or "(no call was answered by a mock)")
        )
    return "\n\n".join(parts)
