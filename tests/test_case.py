"""EvalCase and TerminateWhen reject bad configuration with a message naming the fix."""

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, EvalSetupError, ScriptedUserAgent, TerminateWhen, UserAgents
from adk_eval._case import DEFAULT_MAX_TURNS
from adk_eval.metrics import state_metric
from adk_eval.testing import ScriptedLlm


def agent() -> LlmAgent:
    return LlmAgent(name="a", model=ScriptedLlm(["hi"]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_turns": 0}, "max_turns must be >= 1"),
        ({"max_turns": 2.5}, "max_turns must be an int"),
        ({"max_duration": 0}, "max_duration must be a finite number of seconds > 0"),
        ({"max_duration": "10"}, "max_duration must be a number"),
        ({"state_matches": {"a": {"$bogus": 1}}}, "invalid"),
        ({"state_matches": "session.x"}, "MongoDB-style query dict"),
    ],
)
def test_terminate_when_validation(kwargs, message):
    with pytest.raises(EvalSetupError, match=message):
        TerminateWhen(**kwargs)


def test_terminate_when_defaults_cap_turns():
    assert TerminateWhen().max_turns == DEFAULT_MAX_TURNS
    assert TerminateWhen(max_turns=None).max_turns is None


def test_case_needs_an_opening():
    with pytest.raises(EvalSetupError, match=r"no `first_message` and no `user_agents\.loop`"):
        EvalCase(name="c", agent=agent())


def test_case_loop_agent_may_open():
    case = EvalCase(
        name="c",
        agent=agent(),
        user_agents=UserAgents(loop=ScriptedUserAgent(name="u", script=["x"])),
    )
    assert case.first_message is None


def test_case_rejects_duplicate_metric_names():
    metric = state_metric("m", "session", "k", lambda v: True)
    with pytest.raises(EvalSetupError, match="two metrics are named `m`"):
        EvalCase(name="c", agent=agent(), first_message="hi", metrics=[metric, metric])


def test_case_rejects_flat_initial_state():
    with pytest.raises(EvalSetupError, match="must be a dict of keys to values"):
        EvalCase(name="c", agent=agent(), first_message="hi", initial_state={"age": 55})


def test_user_agents_must_be_adk_agents():
    with pytest.raises(EvalSetupError, match=r"UserAgents.tools\['ask'\] must be an ADK agent"):
        UserAgents(tools={"ask": "a persona prompt"})


def test_case_rejects_non_agent():
    with pytest.raises(EvalSetupError, match="must be an ADK agent, Workflow or App"):
        EvalCase(name="c", agent=object(), first_message="hi")


def test_wrong_values_are_refused_at_construction():
    from datetime import UTC, datetime

    from adk_eval import ScriptedUserAgent, TerminateWhen

    with pytest.raises(EvalSetupError, match="max_duration must be a finite number"):
        TerminateWhen(max_duration=float("nan"))
    agent = LlmAgent(name="a", model=ScriptedLlm(["hi"]))
    with pytest.raises(EvalSetupError, match=r"`clock` must return a datetime.*'noon' \(str\)"):
        EvalCase(name="c", agent=agent, first_message="hi", clock=lambda: "noon")
    EvalCase(
        name="c", agent=agent, first_message="hi", clock=lambda: datetime(2026, 1, 1, tzinfo=UTC)
    )
    with pytest.raises(ValueError, match=r"for one reply write script=\['abc'\]"):
        ScriptedUserAgent(name="p", script="abc")
