"""Events of one conversation from ADK's own spans (both of ADK's telemetry schemas).

ADK 2.13 emits, per invocation, under its default schema (2):
``invoke_workflow ROOT`` > ``invoke_agent NAME`` > ``generate_content MODEL`` and
``execute_tool NAME`` (plus ``execute_tool (merged)`` after parallel calls); under
schema 1 (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``): ``invocation`` >
``invoke_agent NAME`` > ``call_llm`` (> ``generate_content MODEL``) and
``execute_tool NAME``. An `AgentTool`'s agent runs under its ``execute_tool`` span
in a session of its own, which the outer session does not hold: that subtree is
left out. Content is on the spans only when capture is on: schema 1 writes
``gcp.vertex.agent.llm_request``/``llm_response``/``tool_call_args``/``tool_response``
(``"{}"`` when ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS`` is false), schema 2
``gen_ai.input.messages``/``gen_ai.output.messages``/``gen_ai.tool.call.arguments``/
``gen_ai.tool.call.result`` (only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
is ``SPAN_ONLY`` or ``SPAN_AND_EVENT``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.events import Event, EventActions
from google.genai import types

from ._adk_content import (
    call_ids,
    request_contents,
    response_fields,
    tool_args,
    tool_response,
    usage_of,
)
from ._span import Span

__all__ = ["Step", "adk_events", "content_captured", "is_llm", "steps_of"]

NOT_SPECIFIED = "<not specified>"
EVENT_ID = "gcp.vertex.agent.event_id"
INVOCATION_ID = "gcp.vertex.agent.invocation_id"


@dataclass
class Step:
    """A span the session's events come from, with the agent it ran in."""

    kind: str  # "llm", "tool", "merged", "error", "agent"
    span: Span
    agent: str


@dataclass
class _Segment:
    llm: Span | None
    agent: str
    tools: list[Span] = field(default_factory=list)
    merged: Span | None = None


def is_llm(span: Span, parent: Span | None) -> bool:
    """Whether the span is one model call (``call_llm``, or a lone ``generate_content``)."""
    if span.name == "call_llm":
        return True
    return span.name.startswith("generate_content") and (
        parent is None or parent.name != "call_llm"
    )


def content_captured(spans: Sequence[Span]) -> bool | None:
    """Whether the model calls' content is on the spans (capture was on).

    None when no span could carry it (no model or tool call: nothing lacks).
    """
    calls = False
    for span in spans:
        attributes = span.attributes
        if "gen_ai.input.messages" in attributes or "gen_ai.output.messages" in attributes:
            return True
        if span.name == "call_llm" and attributes.get("gcp.vertex.agent.llm_request") not in (
            None,
            "{}",
        ):
            return True
        calls = calls or span.name.startswith(("call_llm", "generate_content", "execute_tool"))
    return False if calls else None


def _kind(span: Span, parent: Span | None) -> str | None:
    if is_llm(span, parent):
        return "llm"
    if span.name.startswith("execute_tool"):
        merged = span.attributes.get("gen_ai.tool.name") == "(merged tools)"
        return "merged" if merged else "tool"
    if span.name.startswith("invoke_agent"):
        return "agent"
    return None


def steps_of(
    root: Span, children: Mapping[str, list[Span]], by_id: Mapping[str, Span]
) -> list[Step]:
    """The steps under one root, depth first in start order, `AgentTool` subtrees left out.

    Walked with a stack, not recursion: a trace may nest spans thousands deep.
    """
    steps: list[Step] = []
    stack: list[tuple[Span, str, bool]] = [(root, "", False)]  # span, agent, leaving it
    while stack:
        span, agent, leaving = stack.pop()
        if leaving:  # an agent that failed with no error recorded below it
            if span.status == "error" and not _error_below(steps, span):
                steps.append(Step("error", span, agent))
            continue
        kind = _kind(span, by_id.get(span.parent_id or ""))
        agent = str(span.attributes.get("gen_ai.agent.name") or agent)
        if kind is not None:
            steps.append(Step(kind, span, agent))
        if kind in ("llm", "tool", "merged"):
            continue
        if kind == "agent":
            stack.append((span, agent, True))
        stack.extend((child, agent, False) for child in reversed(children.get(span.span_id, [])))
    return steps


def _error_below(steps: list[Step], agent_span: Span) -> bool:
    for step in reversed(steps):
        if step.span is agent_span:
            return False
        if step.kind == "error":
            return True
    return False


def _segments(steps: list[Step]) -> list[_Segment | Step]:
    out: list[_Segment | Step] = []
    current: _Segment | None = None
    for step in steps:
        if step.kind == "llm":
            current = _Segment(step.span, step.agent)
            out.append(current)
        elif step.kind in ("tool", "merged"):
            if current is None:
                current = _Segment(None, step.agent)
                out.append(current)
            if step.kind == "merged":
                current.merged = step.span
            else:
                current.tools.append(step.span)
        elif step.kind in ("error", "agent"):
            out.append(step)
    return out


@dataclass
class _Turn:
    """What one invocation's rebuild has learnt so far."""

    invocation_id: str
    captured: bool
    calls: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    events: list[Event] = field(default_factory=list)


def adk_events(
    roots: Sequence[Span],
    children: Mapping[str, list[Span]],
    by_id: Mapping[str, Span],
    captured: bool,
) -> list[Event]:
    """The session's events, one invocation (root) after another."""
    events: list[Event] = []
    calls: dict[str, str] = {}
    for root in roots:
        steps = steps_of(root, children, by_id)
        if not steps:
            continue
        first_llm = next((s.span for s in steps if s.kind == "llm"), None)
        invocation = str(first_llm.attributes.get(INVOCATION_ID, "")) if first_llm else ""
        turn = _Turn(invocation, captured, calls)
        turn.events.append(_user_event(root, first_llm, turn))
        items = _segments(steps)
        for index, item in enumerate(items):
            if isinstance(item, _Segment):
                _segment_events(item, items[index + 1 :], turn)
            elif item.kind == "error":
                turn.events.append(_error_event(item, turn))
        events.extend(turn.events)
    return events


def _user_event(root: Span, llm: Span | None, turn: _Turn) -> Event:
    content: types.Content | None = None
    if llm is not None and turn.captured:
        contents = request_contents(llm)
        users = [c for c in contents if c.role == "user"]
        content = users[-1] if users else None
        if content is not None:
            content = _restore_response_ids(content, turn.calls)
    return Event(
        id=f"{root.span_id}-user",
        author="user",
        invocation_id=turn.invocation_id,
        content=content,
        timestamp=root.start_ns / 1e9,
    )


def _restore_response_ids(content: types.Content, calls: Mapping[str, str]) -> types.Content:
    """Gives function responses the ids ADK took off before sending them to the model."""
    parts = []
    for part in content.parts or []:
        response = part.function_response
        if response is not None and response.id not in calls:
            name = response.name or _fallback_name(response.id or "")
            known = [call for call, tool in calls.items() if tool == name]
            if known:
                response = response.model_copy(update={"id": known[-1], "name": name})
                part = types.Part(function_response=response)
        parts.append(part)
    return types.Content(role=content.role, parts=parts)


def _fallback_name(call_id: str) -> str:
    """ADK's experimental semconv names an id-less call ``{name}_{index}``."""
    head, _, tail = call_id.rpartition("_")
    return head if tail.isdigit() else call_id


def _segment_events(segment: _Segment, after: Sequence[_Segment | Step], turn: _Turn) -> None:
    answered = [t for t in segment.tools if EVENT_ID in t.attributes]
    if segment.llm is not None:
        turn.events.append(_model_event(segment, turn))
    if not answered:
        return
    ordered = _in_call_order(answered, turn.events[-1] if segment.llm else None)
    parts = [_response_part(tool, turn) for tool in ordered]
    lone = len(ordered) == 1
    source = ordered[0] if lone or segment.merged is None else segment.merged
    actions = EventActions()
    for tool in ordered:
        if tool.attributes.get("gen_ai.tool.name") == "transfer_to_agent":
            actions.transfer_to_agent = _transfer_target(tool, turn, after)
    turn.events.append(
        Event(
            id=str(source.attributes.get(EVENT_ID)),
            author=_agent_of(ordered[0], segment.agent),
            invocation_id=turn.invocation_id,
            content=types.Content(role="user", parts=parts),
            actions=actions,
            timestamp=max(t.end_ns for t in ordered) / 1e9,
        )
    )


def _agent_of(span: Span, default: str) -> str:
    return str(span.attributes.get("gen_ai.agent.name") or default)


def _model_event(segment: _Segment, turn: _Turn) -> Event:
    llm = segment.llm
    assert llm is not None
    fields: dict[str, Any] = response_fields(llm) if turn.captured else {}
    content: types.Content | None = fields.pop("content", None)
    tools = list(segment.tools)
    if content is not None:
        content = call_ids(content, tools)
    elif tools:
        calls = [_call_of(tool) for tool in tools]
        content = types.Content(role="model", parts=[types.Part(function_call=c) for c in calls])
    elif not turn.captured:  # the model answered; what it said was not captured
        content = types.Content(role="model", parts=[types.Part()])
    event = Event(
        id=str(llm.attributes.get(EVENT_ID) or llm.span_id),
        author=segment.agent,
        invocation_id=turn.invocation_id or str(llm.attributes.get(INVOCATION_ID, "")),
        content=content,
        timestamp=llm.end_ns / 1e9,
        **fields,
    )
    if event.usage_metadata is None:
        event.usage_metadata = usage_of(llm.attributes)
    calls_made = event.get_function_calls()
    if calls_made:
        long_running = {
            _id_of(tool)
            for tool in tools
            if tool.attributes.get("gen_ai.tool.type") == "LongRunningFunctionTool"
        }
        event.long_running_tool_ids = {i for i in long_running if i}
        for call in calls_made:
            if call.id:
                turn.calls[call.id] = call.name or ""
    return event


def _id_of(tool: Span) -> str | None:
    value = tool.attributes.get("gen_ai.tool.call.id")
    return str(value) if value and value != NOT_SPECIFIED else None


def _call_of(tool: Span) -> types.FunctionCall:
    return types.FunctionCall(
        id=_id_of(tool),
        name=str(tool.attributes.get("gen_ai.tool.name", "")),
        args=tool_args(tool),
    )


def _in_call_order(tools: list[Span], model: Event | None) -> list[Span]:
    """The tools in the order of the model's calls (ADK merges responses in that order)."""
    order = {call.id: i for i, call in enumerate(model.get_function_calls() if model else [])}
    return sorted(tools, key=lambda t: (order.get(_id_of(t), len(order)), t.start_ns))


def _response_part(tool: Span, turn: _Turn) -> types.Part:
    name = str(tool.attributes.get("gen_ai.tool.name", ""))
    response = tool_response(tool) if turn.captured else None
    return types.Part(
        function_response=types.FunctionResponse(id=_id_of(tool), name=name, response=response)
    )


def _transfer_target(tool: Span, turn: _Turn, after: Sequence[_Segment | Step]) -> str | None:
    args = tool_args(tool) if turn.captured else None
    if args and isinstance(args.get("agent_name"), str):
        return str(args["agent_name"])
    for item in after:
        if isinstance(item, Step) and item.kind == "agent":
            return item.agent
    return None


def _error_event(step: Step, turn: _Turn) -> Event:
    code, message = None, step.span.status_message
    for event in step.span.events:
        if event.name == "exception":
            code = str(event.attributes.get("exception.type", "")) or None
            message = str(event.attributes.get("exception.message", "")) or message
            break
    if code is None and message and ": " in message:
        code, message = message.split(": ", 1)
    return Event(
        id=f"{step.span.span_id}-error",
        author=step.agent,
        invocation_id=turn.invocation_id,
        error_code=code,
        error_message=message,
        timestamp=step.span.end_ns / 1e9,
    )
