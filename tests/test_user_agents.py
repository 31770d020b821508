"""ScriptedUserAgent: scripts, step functions with their own state, and STOP."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool
from pydantic import BaseModel

from adk_eval import STOP, STOP_SIGNAL, EvalCase, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.testing import ScriptedLlm, tool_call
from adk_eval.user_agents import is_stop_signal


def chatty_system() -> LlmAgent:
    return LlmAgent(name="clinician", model=ScriptedLlm(responder=lambda r: "Go on."))


def test_needs_exactly_one_of_script_and_step():
    with pytest.raises(ValueError, match="exactly one of `script`"):
        ScriptedUserAgent(name="p")
    with pytest.raises(ValueError, match="exactly one of `script`"):
        ScriptedUserAgent(name="p", script=["a"], step=lambda ctx: "b")


def test_stop_signal_is_adk_simulators_token_case_insensitive():
    assert STOP_SIGNAL == "</finished>"
    assert is_stop_signal("Bye! </FINISHED>")
    assert not is_stop_signal("finished")


async def test_step_function_reads_and_writes_its_own_state_like_the_seed():
    def step(ctx):
        turn = ctx.state.get("turn", 0)
        ctx.state["turn"] = turn + 1
        script = ["I have chest pain", "About 30 minutes", "Yes, very severe"]
        return ctx.respond(script[turn] if turn < len(script) else STOP)

    result = await run_eval(
        EvalCase(
            name="seed-step",
            agent=chatty_system(),
            first_message="Hello",
            user_agents=UserAgents(loop=ScriptedUserAgent(name="scripted_patient", step=step)),
        )
    )

    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.select("user_message")][1:] == [
        "I have chest pain",
        "About 30 minutes",
        "Yes, very severe",
    ]
    last = [e for e in result.user_agent_events if e.author == "scripted_patient"][-1]
    assert last.content.parts[0].text == STOP_SIGNAL


async def test_exhausted_script_stops_by_default():
    result = await run_eval(
        EvalCase(
            name="exhausted-stop",
            agent=chatty_system(),
            first_message="Hello",
            user_agents=UserAgents(loop=ScriptedUserAgent(name="p", script=["one", "two"])),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.turns == 3


async def test_exhausted_script_can_be_an_error():
    result = await run_eval(
        EvalCase(
            name="exhausted-error",
            agent=chatty_system(),
            first_message="Hello",
            user_agents=UserAgents(
                loop=ScriptedUserAgent(name="p", script=["one"], when_exhausted="error")
            ),
        )
    )

    assert result.status == "error"
    assert result.error.phase == "user_agent"
    assert "ScriptedUserAgent `p` has 1 replies but was asked for reply #2" in result.error.message


async def test_pydantic_reply_becomes_the_structured_answer_to_a_tool_yield():
    class Vitals(BaseModel):
        pulse: int

    def take_pulse() -> None:
        """Asks the patient to take their pulse (long-running)."""

    system = LlmAgent(
        name="clinician",
        model=ScriptedLlm([tool_call("take_pulse"), "Thanks."]),
        tools=[LongRunningFunctionTool(take_pulse)],
    )
    result = await run_eval(
        EvalCase(
            name="pydantic-reply",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(
                tools={"take_pulse": ScriptedUserAgent(name="p", script=[Vitals(pulse=80)])}
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.trace.tool_calls[0].response == {"pulse": 80}


async def test_two_different_user_agents_with_one_name_are_refused():
    from adk_eval import EvalSetupError

    with pytest.raises(EvalSetupError, match="two different user agents are named `p`"):
        await run_eval(
            EvalCase(
                name="dupe",
                agent=chatty_system(),
                first_message="hi",
                user_agents=UserAgents(
                    loop=ScriptedUserAgent(name="p", script=["a"]),
                    tools={"adk_request_input": ScriptedUserAgent(name="p", script=["b"])},
                ),
            )
        )
