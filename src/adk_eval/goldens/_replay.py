"""From goldens back to evals: expected trajectories, and cases that replay them.

`eval_case_from_golden` replays a golden (an ADK ``EvalCase``) as an `EvalCase`:

* the first user message opens the conversation; a `ScriptedUserAgent` says the
  later ones, one per loop yield;
* tool yields (long-running tools, input requests, tool confirmations) are
  answered with the golden's recorded responses (`recorded_user_agent`), unless
  ``user_agents`` names the tool;
* the golden's initial state is the case's, and state its user agents changed
  with `with_state_change` is changed again at the same points (with their answers);
* the turn limit counts the golden's user turns and recorded yield answers (a
  `Workflow`'s function nodes are declared in ``node_mocks``, as in `EvalCase`);
* ``models`` gives agents models for this replay only, by agent name, as in
  `EvalCase` (``{"*": ...}`` for every agent).

The run is scored by:

* ``golden_trajectory``: `trajectory_match` (``mode``, ``args``, ``threshold``)
  compares its tool calls with the golden's, turn by turn;
* ``golden_final_state``: when ``final_state`` is true and the golden holds a
  ``final_session_state`` (one it records: not an older format's),
  `final_state_match` compares the final state with it (keys or patterns in
  ``ignore_state`` may differ; with ``volatile_state`` ``"by_kind"``, the default,
  a clock reading or a random id the agent wrote, ``time.time()``,
  ``datetime.now()``, ``uuid4()``, matches any of its kind, so an unchanged agent
  passes its own golden; ``"exact"`` compares them too);
* ``golden_responses``: ADK's ``response_match_score`` (ROUGE-1 per turn against
  the golden's final responses) with ``responses`` as its threshold (ADK's
  default, 0.8; None leaves it out); it needs google-adk[eval], and without it is
  not applicable, saying so;
* and the ``metrics`` given.

A golden with a ``conversation_scenario`` and no conversation (ADK's
user-simulator cases) is played by `eval_case_from_scenario` instead.
"""

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

from .._bridge import with_state_change
from .._case import EvalCase, TerminateWhen, UserAgents
from .._errors import EvalSetupError, EvalUserAgentError
from .._state import replace_value, scoped_view
from .._tools._tree import FRAMEWORK_YIELD_TOOLS
from .._turns import content_text, stable_call_args
from .._user_agents import STOP, ScriptContext, ScriptedUserAgent
from ..metrics._adk import AdkMetric
from ..metrics._state import final_state_match
from ..metrics._trajectory import (
    ArgsMode,
    ExpectedCall,
    MatchMode,
    expected_calls_from,
    trajectory_match,
)
from ..metrics._types import Metric
from ..metrics._volatile import VolatileMode
from ..models import ModelSpec
from ._evalset import load_eval_set
from ._export import STATE_CHANGES_FIELD
from ._scenario import eval_case_from_scenario

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
    call_id: str | None = None


@dataclass
class _StateChanges:
    """A golden's user-agent state changes (flat ADK deltas), by where they came."""

    with_response: dict[str, dict[str, Any]]  # by the call id of the yield answered
    before_invocation: dict[int, dict[str, Any]]


def _replacing(delta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A flat delta as scoped changes that set each value as recorded (no merge)."""
    return {
        scope: {key: replace_value(value) for key, value in values.items()}
        for scope, values in scoped_view(delta).items()
        if values
    }


def _state_changes(golden: AdkEvalCase) -> _StateChanges:
    """What the golden's user agents changed with `with_state_change`, and where.

    Raises:
        ValueError: If the golden's ``adk_eval_state_changes`` field is malformed.
    """
    changes = _StateChanges({}, {})
    records = (golden.model_extra or {}).get(STATE_CHANGES_FIELD) or []
    for record in records if isinstance(records, list) else [records]:
        delta = record.get("state_delta") if isinstance(record, Mapping) else None
        where = record.get("response_to") if isinstance(record, Mapping) else None
        index = record.get("before_invocation") if isinstance(record, Mapping) else None
        if not isinstance(delta, Mapping) or (
            not isinstance(where, str) and type(index) is not int
        ):
            raise EvalSetupError(
                f"golden `{golden.eval_id}`: each `{STATE_CHANGES_FIELD}` item needs a "
                f"`state_delta` dict and a `response_to` call id or a `before_invocation` "
                f"index, got {record!r}"
            )
        if isinstance(where, str):
            changes.with_response.setdefault(where, {}).update(delta)
        elif isinstance(index, int):
            changes.before_invocation.setdefault(index, {}).update(delta)
    return changes


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
                args = stable_call_args(name, call.args or {})
                recorded.append(_Recorded(name, args, last[call.id], call.id))
    return recorded


def recorded_user_agent(
    golden: AdkEvalCase, *, name: str = "golden_recording"
) -> ScriptedUserAgent:
    """A user agent that answers tool yields with what a golden recorded.

    The n-th yield of a tool gets the response the golden recorded for the n-th
    call of that tool, preferring a recorded call with the same args; an answer
    that changed the main session's state (`with_state_change`) changes it again,
    to the recorded values. Use it for
    ``user_agents.tools`` of long-running tools, ``adk_request_input`` and
    ``adk_request_confirmation``; `eval_case_from_golden` does by default.

    Raises:
        EvalUserAgentError: (during a run) The golden holds no unused answer
            for a call of that tool.
    """
    recorded = _recorded_answers(golden)
    changes = _state_changes(golden).with_response

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
        answer = recorded[chosen]
        if answer.call_id in changes:  # its answer changed the state then: it does again
            return with_state_change(answer.response, _replacing(changes[answer.call_id]))
        return answer.response

    return ScriptedUserAgent(name=name, step=answer)


def _recorded_final_state(golden: AdkEvalCase) -> dict[str, Any] | None:
    """The golden's final state, when it holds one (ADK fills in ``{}`` when it holds none).

    The older formats (AgentEvaluator's test files) never record one, and an EvalSet
    case may leave the field out: such a golden gets no `golden_final_state` metric.
    """
    if "final_session_state" not in golden.model_fields_set:
        return None
    return golden.final_session_state


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
    node_mocks: Mapping[str, Any] | None = None,
    user_agents: Mapping[str, BaseAgent] | None = None,
    mode: MatchMode = "exact",
    args: ArgsMode = "exact",
    threshold: float | None = None,
    metrics: Sequence[Metric] = (),
    final_state: bool = True,
    ignore_state: Sequence[str] = (),
    volatile_state: VolatileMode = "by_kind",
    responses: float | None = 0.8,
    models: Mapping[str, ModelSpec] | None = None,
    name: str | None = None,
) -> EvalCase:
    """An `EvalCase` that replays a golden's user turns and scores the trajectory.

    How it replays and what it scores, keyword by keyword, is in the module doc.

    Raises:
        EvalSetupError: The golden has neither a conversation nor a scenario.
    """
    texts = _texts(golden)
    if not texts and golden.conversation_scenario is not None:
        return eval_case_from_scenario(
            golden,
            agent,
            tool_mocks=tool_mocks,
            node_mocks=node_mocks,
            user_agents=user_agents,
            metrics=metrics,
            models=models,
            name=name,
        )
    if not texts:
        raise EvalSetupError(f"golden `{golden.eval_id}` has no conversation to replay")
    state, follow_ups = _user_turns(golden, texts)
    mocks = dict(tool_mocks or {})
    users, yields = _user_agents(golden, agent, mocks, dict(user_agents or {}), follow_ups)
    trajectory = trajectory_match(
        "golden_trajectory", golden, mode=mode, args=args, threshold=threshold
    )
    checks = _state_and_responses(golden, final_state, ignore_state, volatile_state, responses)
    return EvalCase(
        name=name or golden.eval_id,
        agent=agent,
        tool_mocks=mocks,
        node_mocks=dict(node_mocks or {}),
        user_agents=users,
        initial_state={k: v for k, v in scoped_view(state).items() if v},
        first_message=texts[0],
        terminate_when=TerminateWhen(max_turns=max(len(texts) + yields, 1)),
        metrics=[trajectory, *checks, *metrics],
        models=dict(models) if models is not None else None,
        description=f"replays golden `{golden.eval_id}`",
    )


def _user_turns(golden: AdkEvalCase, texts: list[str]) -> tuple[dict[str, Any], list[Any]]:
    """The initial state and the follow-up user turns, with the state changes made as said."""
    state = dict(golden.session_input.state) if golden.session_input else {}
    changes = _state_changes(golden).before_invocation
    state.update(changes.get(0, {}))  # what a user agent changed as it opened
    follow_ups: list[Any] = [
        with_state_change(text, _replacing(changes[index])) if index in changes else text
        for index, text in enumerate(texts[1:], start=1)
    ]
    if len(texts) in changes:  # changed with the answer that ended the conversation
        follow_ups.append(with_state_change(STOP, _replacing(changes[len(texts)])))
    return state, follow_ups


def _user_agents(
    golden: AdkEvalCase,
    agent: BaseAgent | App,
    mocks: Mapping[str, Any],
    chosen: dict[str, Any],
    follow_ups: list[Any],
) -> tuple[UserAgents, int]:
    """The replay's user agents, and how many recorded answers its tool user agents give.

    The loop user says the follow-up turns; a yielding tool neither mocked nor
    given a user agent of its own gets the golden's recording.
    """
    recording = recorded_user_agent(golden)
    yielding = _yielding_tools(agent) - set(mocks) - set(chosen)
    tools = {**{tool: recording for tool in sorted(yielding)}, **chosen}
    loop = ScriptedUserAgent(name="golden_user", script=follow_ups) if follow_ups else None
    yields = sum(1 for item in _recorded_answers(golden) if item.tool in tools)
    return UserAgents(loop=loop, tools=tools), yields


def _state_and_responses(
    golden: AdkEvalCase,
    final_state: bool,
    ignore_state: Sequence[str],
    volatile_state: VolatileMode,
    responses: float | None,
) -> list[Metric]:
    """``golden_final_state`` (asked for, and recorded) and ``golden_responses`` (not None)."""
    metrics: list[Metric] = []
    expected = _recorded_final_state(golden) if final_state else None
    if expected is not None:
        metrics.append(
            final_state_match(
                "golden_final_state", expected, ignore=ignore_state, volatile=volatile_state
            )
        )
    if responses is not None:
        metrics.append(
            AdkMetric(
                name="golden_responses",
                metric_name="response_match_score",
                threshold=responses,
                golden=golden,
                optional=True,
            )
        )
    return metrics
