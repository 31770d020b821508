"""A run's events as ADK `Invocation`s: what ADK's evaluators and goldens read.

One `Invocation` per user turn: the user's message, the agent's final text,
and in order every tool call and tool response made in between. A tool that
failed is a response ``{"error": {"type": ..., "message": ...}}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.evaluation.eval_case import IntermediateData, Invocation
from google.adk.events import Event
from google.genai import types

from .._trace import EvalTrace, Message, StateChange, ToolCall, ToolResponse
from .._turns import jsonable, stable_call_args, state_change_source, tool_error_response

__all__ = ["invocations", "invocations_with_changes"]


def _tool_response(response: ToolResponse) -> types.FunctionResponse:
    payload = dict(response.response)
    error = payload.get("error")
    if error is not None and not (isinstance(error, Mapping) and {"type", "message"} <= set(error)):
        payload.update(tool_error_response(str(error)))
    return types.FunctionResponse(id=response.call_id, name=response.name, response=payload)


@dataclass
class _Turn:
    user: Event
    tool_uses: list[types.FunctionCall] = field(default_factory=list)
    tool_responses: list[types.FunctionResponse] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)

    def invocation(self) -> Invocation:
        final = self.texts[-1] if self.texts else None
        intermediate = [(author, [types.Part(text=text)]) for author, text in self.texts[:-1]]
        assert self.user.content is not None
        return Invocation(
            invocation_id=self.user.invocation_id,
            user_content=types.Content(role="user", parts=self.user.content.parts),
            final_response=types.Content(role="model", parts=[types.Part(text=final[1])])
            if final
            else None,
            intermediate_data=IntermediateData(
                tool_uses=self.tool_uses,
                tool_responses=self.tool_responses,
                intermediate_responses=intermediate,
            ),
            creation_timestamp=self.user.timestamp,
        )


def _sent_args(call: ToolCall) -> dict[str, Any] | None:
    """The call's args as the model sent them: None stays None (ADK tells it from ``{}``)."""
    sent = next((fc for fc in call.event.get_function_calls() if fc.id == call.call_id), None)
    if sent is not None and sent.args is None:
        return None
    return stable_call_args(call.name, call.args)


def invocations(events: Sequence[Event]) -> list[Invocation]:
    """The conversation as ADK `Invocation`s: one per user message, as in a golden."""
    return invocations_with_changes(events)[0]


def invocations_with_changes(
    events: Sequence[Event],
) -> tuple[list[Invocation], list[dict[str, Any]]]:
    """The invocations, and the user agents' state changes tied to their answers."""
    turns: list[_Turn] = []
    changes: list[dict[str, Any]] = []
    waiting: dict[str, Any] | None = None  # a change whose answer has not come yet
    for item in EvalTrace(events=events).items:
        if isinstance(item, StateChange) and (source := state_change_source(item.event)):
            waiting = {"source": source, "state_delta": jsonable(item.delta)}
        elif waiting is not None and isinstance(item, ToolResponse) and item.author == "user":
            changes.append({"response_to": item.call_id, **waiting})
            waiting = None
        elif waiting is not None and isinstance(item, Message) and item.role == "user":
            changes.append({"before_invocation": len(turns), **waiting})
            waiting = None
        if isinstance(item, Message) and item.role == "user":
            turns.append(_Turn(user=item.event))
        elif not turns:
            continue
        elif isinstance(item, ToolCall):
            turns[-1].tool_uses.append(
                types.FunctionCall(id=item.call_id, name=item.name, args=_sent_args(item))
            )
        elif isinstance(item, ToolResponse):
            turns[-1].tool_responses.append(_tool_response(item))
        elif isinstance(item, Message) and not item.event.get_function_calls():
            turns[-1].texts.append((item.author, item.text))
    if waiting is not None:  # the run ended right after it (a state condition, say)
        changes.append({"before_invocation": len(turns), **waiting})
    return [turn.invocation() for turn in turns], changes
