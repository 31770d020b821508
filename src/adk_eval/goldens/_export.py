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
from datetime import UTC, datetime
from typing import Any

from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import SessionInput
from google.adk.events import Event
from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._result import EvalResult
from .._state import flatten_state, public_state
from .._turns import (
    DEFAULT_USER_ID,
)
from ..metrics._invocations import invocations_with_changes

__all__ = ["STATE_CHANGES_FIELD", "golden_eval_id", "snake_case", "to_golden"]

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
    """``{snake_case_agent_name}_{timestamp}``, e.g. ``math_agent_2026-11-22T10-00-00`` (UTC).

    No ``:`` or ``,``: ``adk eval AGENT 'file.evalset.json:ID1,ID2'`` splits there,
    so only such an id can be selected on its command line.
    """
    moment = datetime.fromtimestamp(when if when is not None else time.time(), UTC)
    return f"{snake_case(agent_name)}_{moment.strftime('%Y-%m-%dT%H-%M-%S')}"


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
        eval_id: Defaults to `golden_eval_id` (``{snake_case_agent_name}_{timestamp}``).
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
    conversation, changes = invocations_with_changes(events)
    if not conversation:
        raise EvalSetupError(
            "the conversation has no user message, so there is no invocation to export"
        )
    root = result_or_session.agent_name if isinstance(result_or_session, EvalResult) else None
    agent = agent_name or root or next((e.author for e in events if e.author != "user"), "agent")
    return AdkEvalCase(
        eval_id=eval_id or golden_eval_id(agent, conversation[0].creation_timestamp),
        conversation=conversation,
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
