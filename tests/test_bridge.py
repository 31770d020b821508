"""Bridge defaults (the README's) and custom transforms, sync and async."""

from __future__ import annotations

import json

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import Session
from google.adk.tools import LongRunningFunctionTool

from adk_eval import STOP, Bridge, EvalCase, ScriptedUserAgent, UserAgents, YieldInfo, run_eval
from adk_eval._bridge import default_format_prompt, default_format_response
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call


def ask(question: str) -> None:
    """Asks the patient."""


def session() -> Session:
    return Session(id="s", app_name="a", user_id="u")


def test_default_prompt_for_a_tool_yield_is_name_and_json_args():
    info = YieldInfo(
        type="tool", invocation_id="i", tool_name="ask", call_id="c", args={"question": "Age?"}
    )
    assert default_format_prompt(session(), info) == 'Tool: ask\nArgs: {"question": "Age?"}'


def test_default_prompt_for_a_loop_yield_is_the_last_assistant_text():
    info = YieldInfo(type="loop", invocation_id="i", awaiting_input=True, text="How can I help?")
    assert default_format_prompt(session(), info) == "How can I help?"


def test_default_response_is_the_output_as_is():
    info = YieldInfo(type="loop", invocation_id="i")
    assert default_format_response({"a": 1}, session(), info) == {"a": 1}


async def test_custom_bridge_sync_prompt_and_async_response():
    prompts: list[str] = []

    def format_prompt(main: Session, info: YieldInfo) -> str:
        if info.type == "tool" and info.tool_name == "ask":
            beliefs = main.state.get("beliefs", {})
            return f'The clinician asks: "{info.args["question"]}" [beliefs: {json.dumps(beliefs)}]'
        return default_format_prompt(main, info)

    async def format_response(output, user_session: Session, info: YieldInfo):
        if info.type == "tool":
            return f"patient says: {output}"  # not a dict: wrapped for ADK
        return output

    def patient_step(ctx):
        prompts.append(ctx.prompt)
        return "30 minutes" if ctx.turn == 0 else STOP

    seen: list[LlmRequest] = []
    steps = [tool_call("ask", {"question": "How long?"}), "Thanks. Anything else?"]

    def respond(request):
        seen.append(request)
        return steps[model_turn_index(request)]

    agent = LlmAgent(
        name="c", model=ScriptedLlm(responder=respond), tools=[LongRunningFunctionTool(ask)]
    )
    patient = ScriptedUserAgent(name="patient", step=patient_step)
    result = await run_eval(
        EvalCase(
            name="bridge",
            agent=agent,
            first_message="hi",
            initial_state={"session": {"beliefs": {"pain": "severe"}}},
            user_agents=UserAgents(loop=patient, tools={"ask": patient}),
            bridge=Bridge(format_prompt=format_prompt, format_response=format_response),
        )
    )

    assert result.status == "passed", result.explain()
    assert prompts == [
        'The clinician asks: "How long?" [beliefs: {"pain": "severe"}]',
        "Thanks. Anything else?",
    ]
    assert result.trace.tool_calls[0].response == {"result": "patient says: 30 minutes"}


async def test_a_bridge_returning_a_non_string_prompt_is_a_user_agent_error():
    agent = LlmAgent(name="c", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(
            name="bad-bridge",
            agent=agent,
            first_message="hi",
            user_agents=UserAgents(loop=ScriptedUserAgent(name="p", script=["x"])),
            bridge=Bridge(format_prompt=lambda main, info: 42),
        )
    )

    assert result.status == "error"
    assert result.error.phase == "user_agent"
    assert "format_prompt must return a str, got int" in result.error.message


def test_with_state_change_rejects_changes_that_are_not_scoped():
    import pytest

    from adk_eval import EvalSetupError, with_state_change

    with pytest.raises(EvalSetupError, match=r"with_state_change changes\['patient'\]"):
        with_state_change({"ok": True}, {"patient": ["hypertension"]})
