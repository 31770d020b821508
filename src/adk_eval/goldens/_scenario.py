"""ADK's conversation scenarios (user-simulator cases) as `EvalCase`s that run here.

A scenario has a starting prompt and a conversation plan (and perhaps a persona).
ADK's own user simulator sends the starting prompt, then asks an LLM for each next
user message with its instruction template, ending at ``</finished>``. Here the
starting prompt is the case's first message, and the loop user agent is an
`LlmAgent` whose instruction is ADK's template rendered with the plan, the
persona and the stop signal (the conversation so far reaches it as its
session's messages). Its model is the configured user model unless given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.apps import App
from google.adk.evaluation.conversation_scenarios import ConversationScenario
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.workflow import Workflow

from .._case import EvalCase, TerminateWhen, UserAgents
from .._errors import EvalSetupError
from .._state import scoped_view
from .._user_agents import STOP_SIGNAL
from ..metrics._types import Metric
from ..models import ModelSpec, configured_model

__all__ = ["DEFAULT_SCENARIO_TURNS", "eval_case_from_scenario", "simulated_user_instruction"]

DEFAULT_SCENARIO_TURNS = 20
"""The turn limit of a scenario case (ADK's user simulator allows 20 invocations)."""

_HISTORY = "(the conversation so far is in the messages of this session)"


def simulated_user_instruction(scenario: ConversationScenario) -> str:
    """ADK's user-simulator instruction for `scenario`, rendered by ADK's own template."""
    from google.adk.evaluation.simulation.llm_backed_user_simulator_prompts import (
        get_llm_backed_user_simulator_prompt,
    )

    return get_llm_backed_user_simulator_prompt(
        conversation_plan=scenario.conversation_plan,
        conversation_history=_HISTORY,
        stop_signal=STOP_SIGNAL,
        user_persona=scenario.user_persona,
    )


def _simulated_user(scenario: ConversationScenario, model: ModelSpec | None) -> LlmAgent:
    """The loop user agent of `scenario`: ADK's instruction, the configured user model."""
    instruction = simulated_user_instruction(scenario)

    def provide(context: ReadonlyContext) -> str:  # a provider: ADK does not template it
        return instruction

    return LlmAgent(
        name="simulated_user",
        description="Plays the user of an ADK conversation scenario.",
        model=model or configured_model("user_model", "gemini-2.5-flash") or "",
        instruction=provide,
    )


def eval_case_from_scenario(
    scenario: ConversationScenario | AdkEvalCase,
    agent: BaseAgent | App | Workflow,
    *,
    user_model: ModelSpec | None = None,
    tool_mocks: Mapping[str, Any] | None = None,
    node_mocks: Mapping[str, Any] | None = None,
    user_agents: Mapping[str, BaseAgent] | None = None,
    metrics: Sequence[Metric] = (),
    max_turns: int = DEFAULT_SCENARIO_TURNS,
    models: Mapping[str, ModelSpec] | None = None,
    name: str | None = None,
) -> EvalCase:
    """An `EvalCase` that plays an ADK conversation scenario with a simulated user.

    Args:
        scenario: A `ConversationScenario`, or an ADK `EvalCase` holding one
            (its ``session_input`` state becomes the initial state).
        agent: The agent, Workflow or App under test.
        user_model: The simulated user's model (default: the configured user
            model, else ``gemini-2.5-flash``).
        tool_mocks: As in `EvalCase`.
        node_mocks: As in `EvalCase` (a Workflow's function nodes).
        user_agents: Tool name -> user agent, for tools that yield.
        metrics: Scored on the run (e.g. ``adk_metric("per_turn_user_simulator_quality_v1",
            golden=case)`` to have ADK's judge rate the simulated user).
        max_turns: The turn limit.
        models: As in `EvalCase`: models for this case only, by agent name.
        name: The case name (default: the eval id, or ``scenario``).

    Raises:
        ValueError: An `EvalCase` without a ``conversation_scenario``.
    """
    state: dict[str, Any] = {}
    case_name = name or "scenario"
    if isinstance(scenario, AdkEvalCase):
        if scenario.conversation_scenario is None:
            raise EvalSetupError(f"golden `{scenario.eval_id}` holds no conversation_scenario")
        state = dict(scenario.session_input.state) if scenario.session_input else {}
        case_name = name or scenario.eval_id
        scenario = scenario.conversation_scenario
    user = _simulated_user(scenario, user_model)
    return EvalCase(
        name=case_name,
        agent=agent,
        tool_mocks=dict(tool_mocks or {}),
        node_mocks=dict(node_mocks or {}),
        user_agents=UserAgents(loop=user, tools=dict(user_agents or {})),
        initial_state={k: v for k, v in scoped_view(state).items() if v},
        first_message=scenario.starting_prompt,
        terminate_when=TerminateWhen(max_turns=max_turns),
        metrics=list(metrics),
        models=dict(models) if models is not None else None,
        description=f"plays conversation scenario: {scenario.conversation_plan[:80]}",
    )
