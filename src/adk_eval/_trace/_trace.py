"""`EvalTrace`: the events ledger that metrics read, with typed views of it.

A trace is built from ADK `Event`s only, so the same metrics score a simulated
run and a stored production session alike (`EvalTrace.from_session`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from .._errors import EvalSetupError
from .._state import SESSION, scoped_view
from .._turns import event_text
from ._items import (
    ErrorEntry,
    Message,
    NestedEvent,
    StateChange,
    ToolCall,
    ToolResponse,
    TraceEventType,
    TraceItem,
)

__all__ = ["NOT_MADE", "EvalTrace"]


@dataclass(frozen=True)
class EvalTrace:
    """What metrics score: the main session's events and the final state.

    Attributes:
        events: The main session's events, in order.
        final_state: Scoped view of the main session's state at the end.
        initial_state: Scoped view of the state the run started with.
        user_agent_events: Events of the shared user-agent session.
        case_name: Name of the case (None for a stored session).
        nested_events: Events of the agents that ran inside `AgentTool` calls.
        tool_sources: What answered a tool call instead of its tool, by function
            call id (``"mock"``); see `source_of`.
        artifacts: The main session's artifacts at the end (their latest
            versions) by file name: those the case started with and those the
            agents and mocks saved.
        tool_errors: What a mock, a simulation or an injected fault raised instead
            of answering, by function call id (``"RuntimeError: CRM down"``).
        argument_problems: How a call does not fit its tool's declaration, by
            function call id: an undeclared argument (with the closest declared
            name), a missing required one, a value of the wrong type, or a tool
            the agent does not have.
        sessions: For a case of several sessions (`EvalCase.sessions`), each
            session's own trace (its events, states, user-agent events and
            artifacts), in the order they ran; then `events` holds them all, one
            session after another. Empty for a run of one session.
    """

    events: Sequence[Event]
    final_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    initial_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    user_agent_events: Sequence[Event] = ()
    case_name: str | None = None
    nested_events: Sequence[NestedEvent] = ()
    tool_sources: Mapping[str, str] = field(default_factory=dict)
    artifacts: Mapping[str, types.Part] = field(default_factory=dict)
    tool_errors: Mapping[str, str] = field(default_factory=dict)
    argument_problems: Mapping[str, Sequence[str]] = field(default_factory=dict)
    sessions: Sequence[EvalTrace] = ()

    def source_of(self, call: ToolCall) -> str:
        """What answered `call`.

        ``mock``, ``simulated`` (a model, `ToolMock.simulated`), ``fault`` (an
        injected error or timeout), ``callback`` (a ``before_tool_callback``
        answered a call the harness had swapped, so its mock never ran),
        ``refused`` (a call the case does not allow), ``invariant`` (a live
        invariant stopped the call before its tool), ``stopped`` (the run was
        already stopping: a later call, parallel ones of the same model turn
        included, never reached its tool), ``rejected`` (ADK answered
        with an error for the call's arguments or an unknown tool name, as it
        would in production; see `argument_problems`), ``user_agent`` (a
        long-running call the harness paused for), ``agent_tool`` (an
        `AgentTool` whose agent ran; its events are in `nested_events`), or
        ``real``: the tool itself ran, a provided or a framework tool (or a
        callback answered such a call, which the harness cannot see).
        """
        recorded = self.tool_sources.get(call.call_id or "")
        if recorded is not None:
            return recorded
        if call.long_running:
            return "user_agent"
        if call.call_id and call.call_id in self._agent_tool_calls:
            return "agent_tool"
        return "real"

    def made(self, call: ToolCall) -> bool:
        """Whether `call` reached its tool or its mock (see `source_of`).

        Not made: a call ADK rejected for its arguments, one a callback
        answered before its mock, one the case does not allow, and one an
        invariant or a stopping run kept from its tool.
        """
        return self.source_of(call) not in NOT_MADE

    def notes(self, call: ToolCall) -> dict[str, Any]:
        """What the run noted about `call`, as reports write it.

        ``answered_by`` (`source_of`), and when there is one ``raised`` (what its
        mock, simulation or fault raised) and ``argument_problems`` (how it does
        not fit its tool's declaration, one line each).
        """
        key = call.call_id or ""
        raised, problems = self.tool_errors.get(key), self.argument_problems.get(key)
        return {
            "answered_by": self.source_of(call),
            **({"raised": raised} if raised else {}),
            **({"argument_problems": list(problems)} if problems else {}),
        }

    def misfits(self) -> list[tuple[ToolCall, tuple[str, ...]]]:
        """The calls that do not fit their tool's declaration, nested ones too, in order."""
        if not self.argument_problems:
            return []
        return [
            (item, tuple(self.argument_problems[item.call_id or ""]))
            for item in self.all_items
            if isinstance(item, ToolCall) and self.argument_problems.get(item.call_id or "")
        ]

    def session_part(
        self,
        events: Sequence[Event],
        user_agent_events: Sequence[Event],
        *,
        final_state: Mapping[str, Mapping[str, Any]],
        initial_state: Mapping[str, Mapping[str, Any]],
        artifacts: Mapping[str, types.Part],
    ) -> EvalTrace:
        """The trace of one session of this run: its `events`, with this trace's notes.

        What this trace noted of each call (sources, errors, argument problems)
        comes along, and of its nested events those of the session's calls.
        """
        calls = {fc.id for event in events for fc in event.get_function_calls() if fc.id}
        return EvalTrace(
            events=tuple(events),
            final_state=final_state,
            initial_state=initial_state,
            user_agent_events=tuple(user_agent_events),
            case_name=self.case_name,
            nested_events=tuple(
                n for n in self.nested_events if n.call_ids[:1] and n.call_ids[0] in calls
            ),
            tool_sources=self.tool_sources,
            artifacts=artifacts,
            tool_errors=self.tool_errors,
            argument_problems=self.argument_problems,
        )

    @cached_property
    def _agent_tool_calls(self) -> frozenset[str]:
        return frozenset(i for nested in self.nested_events for i in nested.call_ids)

    @classmethod
    def from_session(
        cls,
        session: Session,
        *,
        initial_state: Mapping[str, Mapping[str, Any]] | None = None,
        case_name: str | None = None,
    ) -> EvalTrace:
        """Builds a trace from any ADK session (its events and current state)."""
        return cls(
            events=tuple(session.events),
            final_state=scoped_view(session.state),
            initial_state=initial_state or {},
            case_name=case_name,
        )

    @cached_property
    def items(self) -> tuple[TraceItem, ...]:
        """Every item of the conversation, in event order (not what ran inside AgentTools)."""
        responses = _responses(self.events)
        items: list[TraceItem] = []
        for event in self.events:
            items.extend(self._items_of(event, responses))
        return tuple(items)

    @cached_property
    def all_items(self) -> tuple[TraceItem, ...]:
        """`items` with what ran inside each `AgentTool` call right after that call."""
        if not self.nested_events:
            return self.items
        responses = _responses(nested.event for nested in self.nested_events)
        inside: dict[str, list[NestedEvent]] = {}
        for nested in self.nested_events:
            inside.setdefault(nested.call_ids[-1], []).append(nested)

        def walk(items: Iterable[TraceItem]) -> Iterable[TraceItem]:
            for item in items:
                yield item
                if isinstance(item, ToolCall) and item.call_id in inside:
                    for nested in inside.pop(item.call_id):
                        yield from walk(self._items_of(nested.event, responses, nested.path))

        ordered = list(walk(self.items))
        for rest in list(inside.values()):  # AgentTool calls the trace does not hold
            for nested in rest:
                ordered.extend(self._items_of(nested.event, responses, nested.path))
        return tuple(ordered)

    @staticmethod
    def _items_of(
        event: Event, responses: Mapping[str, dict[str, Any]], path: tuple[str, ...] = ()
    ) -> Iterable[TraceItem]:
        text = event_text(event)
        has_fr = bool(event.get_function_responses())
        if text and not has_fr:
            role: Literal["user", "agent"] = "user" if event.author == "user" else "agent"
            yield Message(role=role, author=event.author, text=text, event=event, path=path)
        long_running = event.long_running_tool_ids or set()
        for fc in event.get_function_calls():
            yield ToolCall(
                name=fc.name or "",
                args=dict(fc.args or {}),
                call_id=fc.id,
                author=event.author,
                invocation_id=event.invocation_id,
                response=responses.get(fc.id) if fc.id else None,
                long_running=bool(fc.id and fc.id in long_running),
                event=event,
                path=path,
            )
        for fr in event.get_function_responses():
            yield ToolResponse(
                name=fr.name or "",
                call_id=fr.id,
                response=dict(fr.response or {}),
                author=event.author,
                event=event,
                path=path,
            )
        if event.actions.state_delta:
            yield StateChange(
                delta=dict(event.actions.state_delta),
                author=event.author,
                event=event,
                path=path,
            )
        if event.error_code:
            yield ErrorEntry(
                code=event.error_code,
                message=event.error_message,
                author=event.author,
                event=event,
                path=path,
            )

    def select(
        self,
        event_type: TraceEventType,
        where: Callable[[Any], bool] | None = None,
        *,
        nested: bool = False,
    ) -> list[Any]:
        """Returns the items of one kind, optionally filtered by `where(item)`.

        With `nested`, what ran inside `AgentTool` calls counts too (each item's
        ``path`` names the AgentTools it ran inside).
        """
        kinds: dict[str, Callable[[TraceItem], bool]] = {
            "tool_call": lambda i: isinstance(i, ToolCall),
            "tool_response": lambda i: isinstance(i, ToolResponse),
            "user_message": lambda i: isinstance(i, Message) and i.role == "user",
            "agent_message": lambda i: isinstance(i, Message) and i.role == "agent",
            "state_change": lambda i: isinstance(i, StateChange),
            "error": lambda i: isinstance(i, ErrorEntry),
        }
        if event_type not in kinds:
            raise EvalSetupError(f"event_type must be one of {sorted(kinds)}, got {event_type!r}")
        pool = self.all_items if nested else self.items
        chosen = [item for item in pool if kinds[event_type](item)]
        return [item for item in chosen if where is None or where(item)]

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every function call the agents made, in order."""
        return self.select("tool_call")

    @property
    def messages(self) -> list[Message]:
        """User and agent text, in order."""
        return [item for item in self.items if isinstance(item, Message)]

    @property
    def final_response(self) -> str | None:
        """The last text an agent said, if any."""
        agent_texts = self.select("agent_message")
        return agent_texts[-1].text if agent_texts else None

    @property
    def nested_tool_calls(self) -> list[ToolCall]:
        """Every function call, those made inside `AgentTool` calls included, in order."""
        return self.select("tool_call", nested=True)

    def state(self, scope: str = SESSION) -> dict[str, Any]:
        """The final state of one scope (empty if the scope was never written)."""
        return dict(self.final_state.get(scope, {}))


NOT_MADE = frozenset({"callback", "refused", "rejected", "stopped", "invariant"})
"""Sources of calls that never reached their tool or mock (`EvalTrace.made`)."""


def _responses(events: Iterable[Event]) -> dict[str, dict[str, Any]]:
    return {
        fr.id: dict(fr.response or {})
        for event in events
        for fr in event.get_function_responses()
        if fr.id
    }
