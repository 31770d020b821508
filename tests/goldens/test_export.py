"""to_golden: one invocation per user turn, tool errors as error responses."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.evaluation.eval_set import EvalSet
from google.adk.sessions import Session

from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents, run_eval
from adk_eval.goldens import snake_case, to_eval_case, to_golden
from adk_eval.goldens._export import golden_eval_id
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    state_event,
    text_event,
    tool_call,
    tool_call_event,
    user_event,
)
from examples.calculator.agent import add, multiply, root_agent


async def two_turn_run():
    return await run_eval(
        EvalCase(
            name="calc",
            agent=root_agent,
            first_message="What is 2+3?",
            tool_mocks={"add": add, "multiply": multiply},
            initial_state={"user": {"plan": "free"}},
            user_agents=UserAgents(loop=ScriptedUserAgent(name="asker", script=["And 4*5?"])),
        )
    )


async def test_a_run_becomes_one_invocation_per_user_turn():
    result = await two_turn_run()
    golden = to_golden(result)

    assert golden.eval_id.startswith("calculator_20")
    first, second = golden.conversation
    assert first.user_content.parts[0].text == "What is 2+3?"
    assert first.final_response.parts[0].text == "The answer is 5."
    assert [(c.name, c.args) for c in first.intermediate_data.tool_uses] == [
        ("add", {"a": 2, "b": 3})
    ]
    assert [r.response for r in first.intermediate_data.tool_responses] == [{"result": 5}]
    assert second.user_content.parts[0].text == "And 4*5?"
    assert second.final_response.parts[0].text == "The answer is 20."
    assert golden.session_input.app_name == "calculator"
    assert golden.session_input.state == {"user:plan": "free"}
    assert golden.final_session_state == {"user:plan": "free"}
    # a valid member of an EvalSet
    EvalSet.model_validate({"eval_set_id": "s", "eval_cases": [golden.model_dump()]})


async def test_tool_errors_become_typed_error_responses():
    def lookup(q: str) -> dict:
        """Looks up."""
        return {}

    agent = LlmAgent(
        name="Looker",
        model=ScriptedLlm(
            [tool_call("lookup", {"q": "x"}), tool_call("nope"), "gave up"], check_calls=False
        ),
        tools=[lookup],
    )
    result = await run_eval(
        EvalCase(
            name="errors",
            agent=agent,
            first_message="find x",
            tool_mocks={
                "lookup": ToolMock.returning({"error": {"type": "Timeout", "message": "slow"}})
            },
        )
    )
    golden = to_golden(result, eval_id="fixed-id")

    assert golden.eval_id == "fixed-id"
    responses = [r.response for r in golden.conversation[0].intermediate_data.tool_responses]
    assert responses[0] == {"error": {"type": "Timeout", "message": "slow"}}
    assert responses[1]["error"]["type"] == "ToolError"
    assert "no tool with that name" in responses[1]["error"]["message"]


def test_a_session_works_too_and_hidden_state_events_are_skipped():
    session = Session(
        id="s",
        app_name="app",
        user_id="u",
        state={"escalated": True, "_adk_internal": 1},
        events=[
            user_event("help", invocation_id="i1"),
            tool_call_event("bot", "escalate", {"level": 1}, call_id="c", invocation_id="i1"),
            function_response_event(
                "bot", "escalate", {"ok": True}, call_id="c", invocation_id="i1"
            ),
            state_event({"x": 1}),
            text_event("bot", "Escalated.", invocation_id="i1"),
        ],
    )
    golden = to_golden(session, agent_name="HelpDesk", app_name="helpdesk")

    [invocation] = golden.conversation
    assert invocation.invocation_id == "i1"
    assert invocation.final_response.parts[0].text == "Escalated."
    assert golden.final_session_state == {"escalated": True}
    assert golden.session_input.app_name == "helpdesk"
    assert golden.eval_id.startswith("help_desk_")


def test_no_user_turn_is_an_error():
    session = Session(id="s", app_name="a", user_id="u", events=[text_event("bot", "hi")])
    with pytest.raises(ValueError, match="no user message"):
        to_golden(session)


def test_ids_are_the_snake_case_agent_name_and_a_timestamp():
    assert snake_case("MathAgent") == "math_agent"
    assert snake_case("math-agent 2") == "math_agent_2"
    assert golden_eval_id("MathAgent", 1_766_500_200) == "math_agent_2025-12-23T14-30-00"


# ADK 2.13 deprecates SequentialAgent for Workflow; real agents still use it.
@pytest.mark.filterwarnings("ignore:SequentialAgent is deprecated:DeprecationWarning")
async def test_a_runs_golden_is_named_after_the_root_agent_not_the_first_to_speak():
    intake = LlmAgent(name="intake", model=ScriptedLlm(["Noted."]))
    billing = LlmAgent(name="billing", model=ScriptedLlm(["Refunded."]))
    root = SequentialAgent(name="front_desk", sub_agents=[intake, billing])
    result = await run_eval(EvalCase(name="t", agent=root, first_message="refund"))
    assert [e.author for e in result.events if e.author != "user"] == ["intake", "billing"]
    golden = to_golden(result)
    assert golden.eval_id.startswith("front_desk_20")
    assert golden.session_input.app_name == "front_desk"


async def test_the_old_to_eval_case_name_still_exports_but_warns():
    result = await run_eval(
        EvalCase(
            name="alias", agent=LlmAgent(name="a", model=ScriptedLlm(["hi"])), first_message="yo"
        )
    )
    with pytest.warns(DeprecationWarning, match="use to_golden"):
        golden = to_eval_case(result, eval_id="same")
    assert golden.model_dump(exclude={"creation_timestamp"}) == to_golden(
        result, eval_id="same"
    ).model_dump(exclude={"creation_timestamp"})


async def test_a_call_without_args_is_exported_without_args_as_adk_records_it():
    from google.genai import types

    def ping() -> dict:
        """Pings."""
        return {"ok": True}

    bare = types.Part(function_call=types.FunctionCall(name="ping"))  # the model sent no args
    agent = LlmAgent(
        name="pinger", model=ScriptedLlm([bare, tool_call("ping", {}), "done"]), tools=[ping]
    )
    result = await run_eval(
        EvalCase(name="ping", agent=agent, first_message="ping", tool_mocks={"ping": ping})
    )
    golden = to_golden(result)
    uses = golden.conversation[0].intermediate_data.tool_uses
    assert [u.args for u in uses] == [None, {}]
    dumped = golden.model_dump(mode="json", exclude_none=True, by_alias=True)
    assert "args" not in dumped["conversation"][0]["intermediateData"]["toolUses"][0]
