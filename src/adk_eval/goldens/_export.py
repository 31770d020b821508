"""From a run (or any ADK session) to an ADK `EvalCase`: a golden trace.

One `Invocation` per user turn: the user's message, the agent's final text,
and in order every tool call and tool response made in between. A tool that
failed is a response ``{"error": {"type": ..., "message": ...}}``.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import IntermediateData, Invocation, SessionInput
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from .._result import EvalResult
from .._state import flatten_state, public_state
from .._trace import EvalTrace, Message, StateChange, ToolCall, ToolResponse
from .._turns import (
    DEFAULT_USER_ID,
    jsonable,
    stable_call_args,
    state_change_source,
    tool_error_response,
)

__all__ = ["STATE_CHANGES_FIELD", "golden_eval_id", "invocations", "snake_case", "to_golden"]

STATE_CHANGES_FIELD = "adk_eval_state_changes"
"""The golden's field for the user agents' state changes (ADK keeps and ignores it).

A list, in the order they happened, of ``{"source": user agents, "state_delta":
flat ADK delta}`` plus where the change came: ``"response_to": call id`` (with the
answer to that tool yield) or ``"before_invocation": i`` (with the user message
that opens invocation ``i``; ``i`` = the number of invocations: after the last).
"""


def snake_case(name: str) -> str:
    """``MathAgent`` / ``math-agent`` -> ``math_agent``."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "agent"


def golden_eval_id(agent_name: str, when: float | None = None) -> str:
    """``{snake_case_agent_name}_{iso_timestamp}``, e.g. ``math_agent_2026-11-22T10:00:00``."""
    moment = datetime.fromtimestamp(when if when is not None else time.time(), UTC)
    return f"{snake_case(agent_name)}_{moment.strftime('%Y-%m-%dT%H:%M:%S')}"


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
    return [turn.invocation() for turn in _turns(events)[0]]


def _turns(events: Sequence[Event]) -> tuple[list[_Turn], list[dict[str, Any]]]:
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
    return turns, changes


def to_golden(
    result_or_session: EvalResult | Session,
    eval_id: str | None = None,
    *,
    agent_name: str | None = None,
    app_name: str | None = None,
    user_id: str = DEFAULT_USER_ID,
    initial_state: Mapping[str, Mapping[str, Any]] | None = None,
) -> AdkEvalCase:
    """Builds an ADK `EvalCase` (a golden trace) from a run or an ADK session.

    Args:
        result_or_session: An `EvalResult` from `run_eval`, or any ADK `Session`.
        eval_id: Defaults to ``{snake_case_agent_name}_{iso_timestamp}``.
        agent_name: Used for the default eval id; defaults to the root agent of
            a run (else the first agent that speaks in the session's events).
        app_name: ``session_input.app_name``; defaults to the agent name. `adk
            eval` reports the final session only when it equals the agent
            folder's name.
        user_id: ``session_input.user_id``.
        initial_state: Scoped state the conversation started with (an
            `EvalResult` knows its own).

    Raises:
        ValueError: If the events hold no user turn.
    """
    if isinstance(result_or_session, EvalResult):
        events: Sequence[Event] = result_or_session.events
        start_state = (
            initial_state if initial_state is not None else result_or_session.initial_state
        )
        final_flat = flatten_state(result_or_session.final_state, what="final_state")
    else:
        events = result_or_session.events
        start_state = initial_state or {}
        final_flat = dict(result_or_session.state)
    turns, changes = _turns(events)
    if not turns:
        raise ValueError(
            "the conversation has no user message, so there is no invocation to export"
        )
    root = result_or_session.agent_name if isinstance(result_or_session, EvalResult) else None
    agent = agent_name or root or next((e.author for e in events if e.author != "user"), "agent")
    return AdkEvalCase(
        eval_id=eval_id or golden_eval_id(agent, turns[0].user.timestamp),
        conversation=[turn.invocation() for turn in turns],
        session_input=SessionInput(
            app_name=app_name or agent,
            user_id=user_id,
            state=flatten_state(start_state, what="initial_state"),
        ),
        final_session_state=public_state(final_flat),
        creation_timestamp=time.time(),
        **_extra(changes),
    )


def _extra(changes: list[dict[str, Any]]) -> dict[str, Any]:
    """Extra fields, which ADK's `EvalCase` keeps (and its evaluators ignore)."""
    return {STATE_CHANGES_FIELD: changes} if changes else {}


def to_eval_case(*args: Any, **kwargs: Any) -> AdkEvalCase:
    """Deprecated alias of `to_golden` (it returns ADK's `EvalCase`, not ours)."""
    warnings.warn(
        "to_eval_case is deprecated (it returns ADK's EvalCase, a golden); use to_golden",
        DeprecationWarning,
        stacklevel=2,
    )
    return to_golden(*args, **kwargs)
