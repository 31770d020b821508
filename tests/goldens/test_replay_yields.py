"""Goldens of human-in-the-loop agents replay: yields are answered from the recording."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, LongRunningFunctionTool

from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents, run_eval
from adk_eval.goldens import (
    eval_case_from_golden,
    expected_trajectories,
    recorded_user_agent,
    to_golden,
)
from adk_eval.metrics import trajectory_match
from adk_eval.testing import ScriptedLlm, tool_call


def transfer(amount: int) -> dict:
    """Moves money (mocked)."""
    raise AssertionError("the real transfer never runs")


def ask_manager(question: str) -> None:
    """Asks a manager and waits (long-running)."""


def banker() -> LlmAgent:
    """An agent whose tool needs a confirmation, shaped like ADK's human_tool_confirmation."""
    return LlmAgent(
        name="banker",
        model=ScriptedLlm(
            [
                tool_call("transfer", {"amount": 100}),
                "Transferred.",
                tool_call("transfer", {"amount": 900}),
                "Not transferred.",
            ]
        ),
        tools=[FunctionTool(transfer, require_confirmation=True)],
    )


def approver() -> LlmAgent:
    """An agent with a long-running tool, shaped like ADK's human_in_loop."""
    return LlmAgent(
        name="approver",
        model=ScriptedLlm(
            [
                tool_call("ask_manager", {"question": "refund 50?"}),
                tool_call("ask_manager", {"question": "refund 500?"}),
                "Done: one refund approved.",
            ]
        ),
        tools=[LongRunningFunctionTool(ask_manager)],
    )


def hitl_case() -> EvalCase:
    manager = ScriptedUserAgent(name="manager", script=[{"approved": True}, {"approved": False}])
    return EvalCase(
        name="hitl",
        agent=approver(),
        user_agents=UserAgents(tools={"ask_manager": manager}),
        first_message="Two refunds please",
    )


TRANSFER_MOCK = {"transfer": ToolMock(lambda args, ctx: {"moved": args["amount"]})}


async def test_a_confirmation_agent_round_trips_through_export_and_replay():
    original = await run_eval(
        EvalCase(
            name="confirm",
            agent=banker(),
            tool_mocks=TRANSFER_MOCK,
            user_agents=UserAgents(
                loop=ScriptedUserAgent(name="client", script=["Now 900 please"]),
                tools={
                    "adk_request_confirmation": ScriptedUserAgent(
                        name="manager", script=[True, False]
                    )
                },
            ),
            first_message="Send 100",
        )
    )
    assert original.status == "passed", original.explain()
    golden = to_golden(original, "confirm")
    names = [c.name for inv in golden.conversation for c in inv.intermediate_data.tool_uses]
    assert names == ["transfer", "adk_request_confirmation"] * 2
    # the agent's own golden matches its run exactly, confirmation requests included
    assert trajectory_match("t", golden).evaluate(original.trace).passed

    replay = await run_eval(eval_case_from_golden(golden, banker(), tool_mocks=TRANSFER_MOCK))
    assert replay.status == "passed", replay.explain()
    responses = [c.response for c in replay.trace.tool_calls if c.name == "transfer"]
    assert responses[-2:] == [{"moved": 100}, {"error": "This tool call is rejected."}]
    assert replay.turns == original.turns


async def test_a_long_running_tool_agent_round_trips_through_export_and_replay():
    original = await run_eval(hitl_case())
    assert original.status == "passed", original.explain()
    golden = to_golden(original, "hitl")
    assert [c.name for c in expected_trajectories_of(golden)] == ["ask_manager", "ask_manager"]

    replay = await run_eval(eval_case_from_golden(golden, approver()))
    assert replay.status == "passed", replay.explain()
    answers = [c.response for c in replay.trace.tool_calls if c.name == "ask_manager"]
    assert answers == [{"approved": True}, {"approved": False}]
    assert replay.turns == original.turns == 2


async def test_the_recording_prefers_the_call_with_the_same_args_and_says_when_it_runs_out():
    original = await run_eval(hitl_case())
    golden = to_golden(original, "hitl")
    swapped = LlmAgent(
        name="approver",
        model=ScriptedLlm(
            [
                tool_call("ask_manager", {"question": "refund 500?"}),
                tool_call("ask_manager", {"question": "refund 50?"}),
                tool_call("ask_manager", {"question": "refund 5?"}),
                "done",
            ]
        ),
        tools=[LongRunningFunctionTool(ask_manager)],
    )
    result = await run_eval(
        EvalCase(
            name="more",
            agent=swapped,
            user_agents=UserAgents(tools={"ask_manager": recorded_user_agent(golden)}),
            first_message="Three refunds please",
        )
    )
    answers = [c.response for c in result.trace.tool_calls if c.response]
    assert answers == [{"approved": False}, {"approved": True}]
    assert result.status == "error"
    assert result.error is not None
    assert "golden `hitl` recorded 2 answer(s) to `ask_manager`" in result.error.message


def expected_trajectories_of(golden):
    from google.adk.evaluation.eval_set import EvalSet

    return expected_trajectories(EvalSet(eval_set_id="s", eval_cases=[golden]))["hitl"]
