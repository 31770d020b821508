"""The user agents of a run: who opens and ends it, what they answer, on which session.

The loop's user agent opens a conversation without a first message and ends it with the
stop signal; a tool's answers in its output schema; one session shared across roles;
answers that are not text sent as JSON; a user agent that fails is the run's error of
phase ``user_agent``.
"""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool
from pydantic import BaseModel

from adk_eval import STOP, EvalCase, ScriptContext, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

from .clinic import ask


async def test_loop_user_agent_opens_the_conversation_without_a_first_message():
    system = LlmAgent(name="a", model=ScriptedLlm(["Hello! How can I help?"]))
    patient = ScriptedUserAgent(
        name="patient", step=lambda ctx: "I feel sick" if ctx.turn == 0 else STOP
    )
    result = await run_eval(
        EvalCase(name="opening", agent=system, user_agents=UserAgents(loop=patient))
    )

    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.messages] == ["I feel sick", "Hello! How can I help?"]
    assert result.turns == 0  # neither the opening nor the STOP that ends it is a turn


async def test_llm_user_agent_stop_signal_ends_the_conversation():
    system = LlmAgent(name="a", model=ScriptedLlm(responder=lambda r: "Anything else?"))
    patient = LlmAgent(
        name="patient", model=ScriptedLlm(["Just one thing", "No, thanks! </finished>"])
    )
    result = await run_eval(
        EvalCase(
            name="stop-signal",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=patient),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.termination_reason is None
    assert [m.text for m in result.trace.select("user_message")] == ["hi", "Just one thing"]


async def test_tool_user_agent_with_output_schema_answers_with_structured_output():
    class Answer(BaseModel):
        answer: str
        confident: bool

    patient = LlmAgent(
        name="patient",
        model=ScriptedLlm(['{"answer": "30 minutes", "confident": true}']),
        output_schema=Answer,
    )
    system = LlmAgent(
        name="c",
        model=ScriptedLlm([tool_call("ask", {"question": "How long?"}), "ok"]),
        tools=[LongRunningFunctionTool(ask)],
    )
    result = await run_eval(
        EvalCase(
            name="structured",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(tools={"ask": patient}),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.trace.tool_calls[0].response == {"answer": "30 minutes", "confident": True}


async def test_user_agent_shares_one_session_across_roles():
    seen_by_loop: list[list[str]] = []

    def loop_step(ctx: ScriptContext):
        seen_by_loop.append([e.author for e in ctx.session.events])
        return STOP

    system = LlmAgent(
        name="c",
        model=ScriptedLlm([tool_call("ask", {"question": "q"}), "Any questions?"]),
        tools=[LongRunningFunctionTool(ask)],
    )
    result = await run_eval(
        EvalCase(
            name="shared-session",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(
                loop=ScriptedUserAgent(name="talker", step=loop_step),
                tools={"ask": ScriptedUserAgent(name="answerer", script=[{"a": 1}])},
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert seen_by_loop == [["user", "answerer", "user"]]


async def test_a_failing_user_agent_is_a_user_agent_error():
    def broken(ctx: ScriptContext):
        raise ValueError("persona crashed")

    system = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(
            name="broken-user",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=ScriptedUserAgent(name="patient", step=broken)),
        )
    )

    assert result.status == "error"
    assert result.error.phase == "user_agent"
    assert "User agent `patient` failed while answering a loop yield" in result.error.message
    assert "ValueError: persona crashed" in result.error.message


@pytest.mark.parametrize("bad_answer", [lambda ctx: 42])
async def test_loop_answers_that_are_not_text_are_sent_as_json(bad_answer):
    system = LlmAgent(name="a", model=ScriptedLlm(["q?", "ok"]))
    patient = ScriptedUserAgent(name="p", step=lambda ctx: {"n": 42} if ctx.turn == 0 else STOP)
    result = await run_eval(
        EvalCase(
            name="json-loop", agent=system, first_message="hi", user_agents=UserAgents(loop=patient)
        )
    )

    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.select("user_message")] == ["hi", '{"n": 42}']
