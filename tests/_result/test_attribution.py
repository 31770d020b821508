"""Who failed? Attribution of runs that did not pass, and counterfactual re-runs.

Each party has a case of its own: a simulated user that contradicts its persona,
an agent at fault with a faithful user, a provider that fails (a real client
against `FakeProviderServer`), an unmocked tool, and a flaky agent. Every model
is a `ScriptedLlm` or the fake provider, so the verdicts are known.
"""

from __future__ import annotations

import itertools
import json

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools import ToolContext

from adk_eval import (
    STOP_SIGNAL,
    EvalCase,
    ScriptedUserAgent,
    TerminateWhen,
    UserAgents,
    explain_failure,
    run_eval,
    run_eval_suite,
)
from adk_eval.fake_provider import FakeProviderServer, error_reply, raw_reply
from adk_eval.metrics import state_metric, user_fidelity
from adk_eval.models import ModelCalls
from adk_eval.testing import ScriptedLlm, tool_call

PERSONA = "You are Ann. You want an appointment on Tuesday, and only Tuesday."
DAYS = ("Monday", "Tuesday", "Friday")


def book(day: str, tool_context: ToolContext) -> dict:
    """Books the appointment on `day`."""
    tool_context.state["booked"] = day
    return {"booked": day}


def last_user_text(request) -> str:
    for content in reversed(request.contents):
        if content.role == "user":
            text = "".join(p.text or "" for p in content.parts or [])
            if text:
                return text
    return ""


def receptionist(fixed_day: str | None = None) -> ScriptedLlm:
    """Asks for a day, books the day the user names (or always `fixed_day`), confirms."""

    def respond(request):
        said = last_user_text(request)
        turn = sum(1 for c in request.contents if c.role == "model")
        if turn == 0:
            return "Which day suits you?"
        if turn == 1:
            day = fixed_day or next((d for d in DAYS if d in said), "Monday")
            return tool_call("book", {"day": day})
        return "You're booked. Anything else?"

    return ScriptedLlm(responder=respond)


def patient(day: str) -> LlmAgent:
    """A user agent played by a model that names `day`, then ends."""
    return LlmAgent(
        name="ann",
        instruction=PERSONA,
        model=ScriptedLlm([f"{day}, please.", f"No, thanks. {STOP_SIGNAL}"], model="user-model"),
    )


def fidelity_judge(out_of_role: str | None) -> ScriptedLlm:
    """A judge that flags the turn quoting `out_of_role`, or none."""

    def respond(request):
        text = last_user_text(request)
        turns = [
            {
                "turn": 1,
                "in_role": not (out_of_role and out_of_role in text),
                "problem": "contradicted_facts" if out_of_role and out_of_role in text else "none",
                "quote": out_of_role or "",
            }
        ]
        return json.dumps({"turns": turns})

    return ScriptedLlm(responder=respond, model="judge-model")


def booking_case(agent_model, user: LlmAgent, judge: ScriptedLlm) -> EvalCase:
    return EvalCase(
        name="books-tuesday",
        agent=LlmAgent(name="receptionist", model=agent_model, tools=[book]),
        tool_mocks={"book": book},
        first_message="I'd like an appointment.",
        user_agents=UserAgents(loop=user),
        terminate_when=TerminateWhen(max_turns=4),
        metrics=[
            state_metric("booked_tuesday", "session", "booked", lambda day: day == "Tuesday"),
            user_fidelity(user, model=judge, facts=["wants Tuesday"]),
        ],
    )


async def test_a_user_that_contradicts_its_persona_is_blamed_and_a_faithful_one_passes():
    case = booking_case(receptionist(), patient("Friday"), fidelity_judge("Friday"))

    result = await run_eval(case)

    assert result.status == "failed", result.explain()
    assert result.attribution.party == "simulated_user"
    assert "turn 1: contradicted_facts: 'Friday'" in result.attribution.evidence
    assert result.metrics["user_fidelity"].value["turns"][0]["problem"] == "contradicted_facts"
    faithful = ScriptedLlm(["Tuesday, please.", f"No. {STOP_SIGNAL}"] * 2, model="user-model")

    explained = await explain_failure(case, result, user_model=faithful)

    assert explained.attribution.party == "simulated_user"
    assert explained.attribution.confidence == 0.95
    assert explained.attribution.evidence == (
        "passes when the simulated user is replaced from turn 1"
    )
    assert "attributed to: simulated_user" in explained.explain()


async def test_an_agent_at_fault_with_a_faithful_user_is_blamed_and_nothing_flips_it():
    case = booking_case(receptionist("Monday"), patient("Tuesday"), fidelity_judge(None))

    result = await run_eval(case)

    assert result.status == "failed", result.explain()
    assert result.metrics["user_fidelity"].passed
    assert result.attribution.party == "agent"
    assert "failed booked_tuesday" in result.attribution.evidence
    faithful = ScriptedLlm(["Tuesday, please.", f"No. {STOP_SIGNAL}"] * 2, model="user-model")

    explained = await explain_failure(case, result, user_model=faithful)

    assert explained.attribution.party == "agent"
    assert explained.attribution.confidence == 0.95
    assert not explained.attribution.flaky
    assert explained.attribution.counterfactual == (
        "tried the simulated user is replaced from turn 2: still fails; a new seed: still fails"
    )


def litellm_agent(server: FakeProviderServer) -> LlmAgent:
    model = LiteLlm(
        model="openai/gpt-4o-mini",
        api_base=server.openai_base,
        api_key="test-key",
        num_retries=0,
        _skip_mcp_handler=True,
    )
    return LlmAgent(name="receptionist", model=model)


@pytest.mark.parametrize(
    "reply",
    [error_reply(503, "the model is overloaded"), raw_reply("<html>bad gateway</html>")],
    ids=["503", "malformed"],
)
async def test_a_provider_that_fails_is_blamed_not_the_agent(reply):
    once = ModelCalls(server_retries=0)  # retried, it fails the same, 3.5 s later
    with FakeProviderServer(responder=lambda request: reply) as server:
        case = EvalCase(name="greets", agent=litellm_agent(server), first_message="hi")
        result = (await run_eval_suite([case], model_calls=once)).results[0]

    assert result.status == "error", result.explain()
    assert result.attribution.party == "provider", result.attribution
    assert result.attribution.confidence == 0.9


async def test_an_unmocked_tool_is_the_setup():
    agent = LlmAgent(
        name="receptionist",
        model=ScriptedLlm([tool_call("book", {"day": "Tuesday"})]),
        tools=[book],
    )
    result = await run_eval(EvalCase(name="books", agent=agent, first_message="hi"))

    assert result.attribution.party == "setup"
    assert "EvalToolError" in result.attribution.evidence


async def test_a_verdict_that_flips_on_a_new_seed_is_reported_as_flaky():
    runs = itertools.count()

    def coin(request):  # the first run books Monday, every later one Tuesday
        if not any(c.role == "model" for c in request.contents):
            day = "Monday" if next(runs) == 0 else "Tuesday"
            return tool_call("book", {"day": day})
        return "Booked."

    case = EvalCase(
        name="flaky",
        agent=LlmAgent(name="receptionist", model=ScriptedLlm(responder=coin), tools=[book]),
        tool_mocks={"book": book},
        first_message="Tuesday, please.",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="ann", script=[STOP_SIGNAL])),
        metrics=[state_metric("booked_tuesday", "session", "booked", lambda d: d == "Tuesday")],
    )
    result = await run_eval(case)
    assert result.attribution.party == "agent"  # a scripted user is faithful by construction
    assert "scripted" in result.attribution.evidence

    explained = await explain_failure(case, result)

    assert explained.attribution.flaky
    assert explained.attribution.counterfactual == "tried a new seed: passes"
    assert "flaky: a re-run with a new seed flips it" in explained.explain()
