"""From goldens back to evals: expected trajectories, and cases that replay them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_set import EvalSet

from .._turns import content_text
from ..case import EvalCase, TerminateWhen, UserAgents
from ..metrics.trajectory import (
    ArgsMode,
    ExpectedCall,
    MatchMode,
    expected_calls_from,
    trajectory_match,
)
from ..metrics.types import Metric
from ..state import scoped_view
from ..user_agents import ScriptedUserAgent
from .evalset import load_eval_set

__all__ = ["eval_case_from_golden", "expected_trajectories", "load_goldens"]


def load_goldens(source: str | Path | EvalSet) -> dict[str, AdkEvalCase]:
    """The cases of an EvalSet (file or object), by ``eval_id``."""
    eval_set = source if isinstance(source, EvalSet) else load_eval_set(source)
    return {case.eval_id: case for case in eval_set.eval_cases}


def expected_trajectories(source: str | Path | EvalSet) -> dict[str, list[ExpectedCall]]:
    """Every golden's tool calls, in order, as `trajectory_match` expects them."""
    return {eval_id: expected_calls_from(case) for eval_id, case in load_goldens(source).items()}


def _texts(golden: AdkEvalCase) -> list[str]:
    return [content_text(invocation.user_content) for invocation in golden.conversation or []]


def eval_case_from_golden(
    golden: AdkEvalCase,
    agent: BaseAgent | App,
    *,
    tool_mocks: Mapping[str, Any] | None = None,
    mode: MatchMode = "exact",
    args: ArgsMode = "exact",
    metrics: Sequence[Metric] = (),
    name: str | None = None,
) -> EvalCase:
    """An `EvalCase` that replays a golden's user turns and scores the trajectory.

    The first user message opens the conversation; a `ScriptedUserAgent` says
    the later ones, one per loop yield. The golden's initial state is the case's
    initial state, and `trajectory_match` (``mode``, ``args``) compares the new
    run's tool calls with the golden's.

    Raises:
        ValueError: If the golden has no conversation.
    """
    texts = _texts(golden)
    if not texts:
        raise ValueError(f"golden `{golden.eval_id}` has no conversation to replay")
    state = dict(golden.session_input.state) if golden.session_input else {}
    follow_ups = texts[1:]
    return EvalCase(
        name=name or golden.eval_id,
        agent=agent,
        tool_mocks=dict(tool_mocks or {}),
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="golden_user", script=follow_ups) if follow_ups else None
        ),
        initial_state={k: v for k, v in scoped_view(state).items() if v},
        first_message=texts[0],
        terminate_when=TerminateWhen(max_turns=max(len(texts), 1)),
        metrics=[trajectory_match("golden_trajectory", golden, mode=mode, args=args), *metrics],
        description=f"replays golden `{golden.eval_id}`",
    )
