"""From goldens back to evals: expected trajectories, and cases that replay them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import IntermediateData
from google.adk.evaluation.eval_set import EvalSet
from google.adk.tools.base_tool import BaseTool

from .._case import EvalCase, TerminateWhen, UserAgents
from .._errors import EvalUserAgentError
from .._interception import FRAMEWORK_YIELD_TOOLS
from .._state import scoped_view
from .._turns import content_text, stable_call_args
from .._user_agents import ScriptContext, ScriptedUserAgent
from ..metrics._trajectory import (
    ArgsMode,
    ExpectedCall,
    MatchMode,
    expected_calls_from,
    trajectory_match,
)
from ..metrics._types import Metric
from ._evalset import load_eval_set

__all__ = [
    "eval_case_from_golden",
    "expected_trajectories",
    "load_goldens",
    "recorded_user_agent",
]


def load_goldens(source: str | Path | EvalSet) -> dict[str, AdkEvalCase]:
    """The cases of an EvalSet (file or object), by ``eval_id``."""
    eval_set = source if isinstance(source, EvalSet) else load_eval_set(source)
    return {case.eval_id: case for case in eval_set.eval_cases}


def expected_trajectories(source: str | Path | EvalSet) -> dict[str, list[ExpectedCall]]:
    """Every golden's tool calls, in order, as `trajectory_match` expects them."""
    return {eval_id: expected_calls_from(case) for eval_id, case in load_goldens(source).items()}


def _texts(golden: AdkEvalCase) -> list[str]:
    return [content_text(invocation.user_content) for invocation in golden.conversation or []]


@dataclass(frozen=True)
class _Recorded:
    tool: str
    args: dict[str, Any]
    response: dict[str, Any]


def _recorded_answers(golden: AdkEvalCase) -> list[_Recorded]:
    """Every call of the golden with the last response recorded for it, in order."""
    recorded: list[_Recorded] = []
    for invocation in golden.conversation or []:
        data = invocation.intermediate_data
        if not isinstance(data, IntermediateData):
            continue
        last = {r.id: dict(r.response or {}) for r in data.tool_responses if r.id}
        for call in data.tool_uses:
            if call.id in last:
                name = call.name or ""
                recorded.append(
                    _Recorded(name, stable_call_args(name, call.args or {}), last[call.id])
                )
    return recorded


def recorded_user_agent(
    golden: AdkEvalCase, *, name: str = "golden_recording"
) -> ScriptedUserAgent:
    """A user agent that answers tool yields with what a golden recorded.

    The n-th yield of a tool gets the response the golden recorded for the n-th
    call of that tool, preferring a recorded call with the same args. Use it for
    ``user_agents.tools`` of long-running tools, ``adk_request_input`` and
    ``adk_request_confirmation``; `eval_case_from_golden` does by default.

    Raises:
        EvalUserAgentError: (during a run) The golden holds no unused answer
            for a call of that tool.
    """
    recorded = _recorded_answers(golden)

    def answer(ctx: ScriptContext) -> Any:
        info = ctx.yield_info
        if info is None or info.type != "tool" or info.tool_name is None:
            raise EvalUserAgentError(
                f"User agent `{name}` answers tool yields from golden `{golden.eval_id}`; "
                "it cannot answer a loop yield"
            )
        used = set(ctx.state.get("golden_answers_used", []))
        args = stable_call_args(info.tool_name, info.args or {})
        free = [
            i for i, item in enumerate(recorded) if item.tool == info.tool_name and i not in used
        ]
        chosen = next((i for i in free if recorded[i].args == args), free[0] if free else None)
        if chosen is None:
            count = sum(1 for item in recorded if item.tool == info.tool_name)
            raise EvalUserAgentError(
                f"golden `{golden.eval_id}` recorded {count} answer(s) to `{info.tool_name}`, "
                f"and the replay asked for one more (args {info.args!r}); answer it with "
                f"user_agents={{{info.tool_name!r}: ...}}"
            )
        ctx.state["golden_answers_used"] = sorted({*used, chosen})
        return recorded[chosen].response

    return ScriptedUserAgent(name=name, step=answer)


def _yielding_tools(agent: BaseAgent | App) -> set[str]:
    """Tools of the agent tree that can yield: long-running ones and ADK's own requests."""
    names = set(FRAMEWORK_YIELD_TOOLS)
    pending = [agent.root_agent if isinstance(agent, App) else agent]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if not isinstance(current, BaseAgent) or id(current) in seen:
            continue
        seen.add(id(current))
        pending.extend(current.sub_agents)
        for tool in getattr(current, "tools", []):
            if isinstance(tool, BaseTool) and tool.is_long_running:
                names.add(tool.name)
    return names


def eval_case_from_golden(
    golden: AdkEvalCase,
    agent: BaseAgent | App,
    *,
    tool_mocks: Mapping[str, Any] | None = None,
    user_agents: Mapping[str, BaseAgent] | None = None,
    mode: MatchMode = "exact",
    args: ArgsMode = "exact",
    metrics: Sequence[Metric] = (),
    name: str | None = None,
) -> EvalCase:
    """An `EvalCase` that replays a golden's user turns and scores the trajectory.

    The first user message opens the conversation; a `ScriptedUserAgent` says
    the later ones, one per loop yield. Tool yields (long-running tools, input
    requests, tool confirmations) are answered with the golden's recorded
    responses (`recorded_user_agent`); `user_agents` overrides that per tool.
    The golden's initial state is the case's initial state, the turn limit
    counts the golden's user turns and recorded yield answers, and
    `trajectory_match` (``mode``, ``args``) compares the new run's tool calls
    with the golden's.

    Raises:
        ValueError: If the golden has no conversation.
    """
    texts = _texts(golden)
    if not texts:
        raise ValueError(f"golden `{golden.eval_id}` has no conversation to replay")
    state = dict(golden.session_input.state) if golden.session_input else {}
    follow_ups = texts[1:]
    mocks = dict(tool_mocks or {})
    chosen = dict(user_agents or {})
    recording = recorded_user_agent(golden)
    yielding = _yielding_tools(agent) - set(mocks) - set(chosen)
    tools = {**{tool: recording for tool in sorted(yielding)}, **chosen}
    yields = sum(1 for item in _recorded_answers(golden) if item.tool in tools)
    return EvalCase(
        name=name or golden.eval_id,
        agent=agent,
        tool_mocks=mocks,
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="golden_user", script=follow_ups) if follow_ups else None,
            tools=tools,
        ),
        initial_state={k: v for k, v in scoped_view(state).items() if v},
        first_message=texts[0],
        terminate_when=TerminateWhen(max_turns=max(len(texts) + yields, 1)),
        metrics=[trajectory_match("golden_trajectory", golden, mode=mode, args=args), *metrics],
        description=f"replays golden `{golden.eval_id}`",
    )
