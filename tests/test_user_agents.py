"""ScriptedUserAgent: scripts, step functions with their own state, and STOP."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool
from pydantic import BaseModel

from adk_eval import (
    STOP,
    STOP_SIGNAL,
    EvalCase,
    ScriptedUserAgent,
    UserAgents,
    run_eval,
    with_state_change,
)
from adk_eval._user_agents import is_stop_signal
from adk_eval.testing import ScriptedLlm, tool_call


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


async def test_step_function_reads_and_writes_its_own_state():
    def step(ctx):
        turn = ctx.state.get("turn", 0)
        ctx.state["turn"] = turn + 1
        script = ["I have chest pain", "About 30 minutes", "Yes, very severe"]
        return script[turn] if turn < len(script) else STOP

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
    assert result.turns == 2  # "one", "two"; the exhausted script's STOP is not a turn


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


def _record(events):
    """What a user-agent session holds, without ids and timestamps."""
    return [
        (e.author, e.content.role, e.content.parts[0].text, e.output, e.actions.state_delta)
        for e in events
    ]


async def _answers(agent, prompts):
    from adk_eval._bridge import YieldInfo
    from adk_eval._run.users import UserAgentRunner

    users = UserAgentRunner(UserAgents(loop=agent))
    await users.start()
    info = YieldInfo(type="loop", invocation_id="", awaiting_input=True)
    answers = [await users.answer(agent, prompt, info) for prompt in prompts]
    events = await users.events()
    await users.close()
    return answers, events


def _counting_step(ctx):
    ctx.state["seen"] = ctx.turn
    return {"turn": ctx.turn, "prompt": ctx.prompt} if ctx.turn < 2 else STOP


async def test_scripted_agent_answers_directly_with_the_events_a_runner_would_append():
    from adk_eval._user_agents import answers_directly

    direct = ScriptedUserAgent(name="p", step=_counting_step)
    # Any agent callback sends the agent through a real ADK runner invocation.
    through_runner = ScriptedUserAgent(
        name="p", step=_counting_step, before_agent_callback=lambda callback_context: None
    )
    assert answers_directly(direct)
    assert not answers_directly(through_runner)

    prompts = ["first?", "second?", "third?"]
    direct_answers, direct_events = await _answers(direct, prompts)
    runner_answers, runner_events = await _answers(through_runner, prompts)

    assert direct_answers == runner_answers
    assert [a.output for a in direct_answers] == [
        {"turn": 0, "prompt": "first?"},
        {"turn": 1, "prompt": "second?"},
        "</finished>",
    ]
    assert _record(direct_events) == _record(runner_events)
    assert len(direct_events) == 6  # a user event and a reply per answer
    assert all(
        e.invocation_id == r.invocation_id
        for e, r in zip(direct_events[::2], direct_events[1::2], strict=True)
    )


async def test_a_subclass_that_overrides_its_run_goes_through_the_runner():
    from adk_eval._user_agents import answers_directly

    class Custom(ScriptedUserAgent):
        async def _run_async_impl(self, ctx):
            async for event in super()._run_async_impl(ctx):
                yield event

    assert not answers_directly(Custom(name="c", script=["x"]))


async def test_direct_answers_see_what_an_llm_user_agent_said_on_the_shared_session():
    """A scripted tool answerer after an LLM loop agent (runner-run) sees its events."""

    def ask() -> None:
        """Asks the helper (long-running)."""

    seen: list[list[str]] = []

    def helper_step(ctx):
        seen.append([e.author for e in ctx.session.events])
        return "helped"

    system = LlmAgent(
        name="clinician",
        model=ScriptedLlm(["Hello?", tool_call("ask"), "Bye."]),
        tools=[LongRunningFunctionTool(ask)],
    )
    patient = LlmAgent(name="patient", model=ScriptedLlm(["I feel ill", "</finished>"]))
    result = await run_eval(
        EvalCase(
            name="mixed",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(
                loop=patient, tools={"ask": ScriptedUserAgent(name="helper", step=helper_step)}
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert seen == [["user", "patient", "user"]]  # the patient's run, then the helper's prompt
    authors = [e.author for e in result.user_agent_events]
    assert authors == ["user", "patient", "user", "helper", "user", "patient"]


@pytest.mark.parametrize("through_runner", [False, True], ids=["direct", "runner"])
async def test_a_scripted_reply_can_change_the_main_sessions_state(through_runner):
    seen: list = []

    def note(callback_context):  # an agent callback: the answer goes through a runner
        seen.append(callback_context.agent_name)

    patient = ScriptedUserAgent(
        name="patient",
        script=[
            with_state_change("I have asthma.", {"patient": {"revealed": ["asthma"]}}),
            with_state_change(STOP, {"patient": {"revealed": ["gout"]}}),
        ],
        before_agent_callback=note if through_runner else None,
    )
    result = await run_eval(
        EvalCase(
            name="reveal",
            agent=chatty_system(),
            first_message="Hello",
            user_agents=UserAgents(loop=patient),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.final_state["patient"] == {"revealed": ["asthma", "gout"]}  # merged
    assert [m.text for m in result.trace.messages if m.role == "user"] == [
        "Hello",
        "I have asthma.",
    ]
    assert seen == (["patient", "patient"] if through_runner else [])


async def test_a_step_function_reads_a_copy_of_the_session_that_changes_nothing():
    seen = []

    def step(ctx):
        seen.append(len(ctx.session.events))
        ctx.session.events.clear()  # a copy: the conversation keeps its events
        ctx.session.state["forged"] = True
        return "fine" if ctx.turn == 0 else STOP

    system = LlmAgent(name="system", model=ScriptedLlm(["Hi", "Again", "Bye"]))
    result = await run_eval(
        EvalCase(
            name="copy",
            agent=system,
            user_agents=UserAgents(loop=ScriptedUserAgent(name="customer", step=step)),
            first_message="hello",
        )
    )
    assert result.status == "passed", result.explain()
    assert seen == [1, 3]  # the prompt of each turn, after the earlier prompt and reply
    assert "forged" not in str(result.trace.user_agent_events)


def ask_human(question: str) -> None:
    """Asks a person (long-running)."""


async def test_a_user_agent_is_asked_for_a_model_only_when_it_is_reached(monkeypatch, capfd):
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)
    persona = LlmAgent(name="patient", model="gemini-2.5-flash", instruction="You are ill.")
    never_asked = LlmAgent(name="expert", model="gemini-2.5-flash", instruction="Answer.")

    def case(name: str, loop: LlmAgent | None) -> EvalCase:
        return EvalCase(
            name=name,
            agent=LlmAgent(
                name="doctor",
                model=ScriptedLlm(["How are you?"]),
                tools=[LongRunningFunctionTool(ask_human)],
            ),
            first_message="hello",
            user_agents=UserAgents(loop=loop, tools={"ask_human": never_asked}),
        )

    alone = await run_eval(case("never-reached", None))
    assert alone.status == "passed", alone.explain()
    reached = await run_eval(case("reached", persona))
    assert (reached.status, reached.error.phase) == ("error", "setup")
    assert reached.error.message.startswith(
        "EvalCase `reached`: agent `patient` cannot run: model 'gemini-2.5-flash' needs a "
        "Gemini API key"
    )
    assert "Traceback" not in capfd.readouterr().err
