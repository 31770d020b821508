"""The transcript judges read: turns, tool calls with results or errors, stops, final state."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval import EvalCase, EvalTrace, ToolMock, run_eval
from adk_eval._transcript import render_transcript, transcript_lines
from adk_eval.metrics import never_called
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    text_event,
    tool_call,
    tool_call_event,
    user_event,
)


def test_renders_turns_calls_results_errors_and_state():
    trace = EvalTrace(
        events=[
            user_event("hello"),
            tool_call_event("bot", "lookup", {"q": "x"}, call_id="1"),
            function_response_event("bot", "lookup", {"error": "not found"}, call_id="1"),
            tool_call_event("bot", "ask", {"q": "y"}, call_id="2", long_running=True),
            text_event("bot", "x" * 50),
        ],
        final_state={"session": {"k": 1}, "user": {}},
    )
    text = render_transcript(trace, max_chars_per_entry=20)
    assert text.splitlines() == [
        "[user] hello",
        '[bot] calls lookup({"q": "x"})',
        '[lookup error] "not found"',
        '[bot] calls ask({"q": "y"})',
        "[ask result] (no response)",
        "[bot] " + "x" * 20 + "… [30 more characters]",
        "",
        "Final state:",
        '  session: {"k": 1}',
    ]


def test_state_can_be_left_out():
    assert "Final state" not in render_transcript(EvalTrace(events=[]), include_state=False)


def refund_order(order: str) -> dict:
    """Refunds an order."""
    raise AssertionError("mocked or refused: never runs")


def _desk(mocks: dict, invariants: list) -> EvalCase:
    """`front` calls the `billing` AgentTool, whose agent calls `refund_order`."""
    billing = LlmAgent(
        name="billing",
        model=ScriptedLlm([tool_call("refund_order", {"order": "A1"}), "Refunded."]),
        tools=[refund_order],
    )
    front = LlmAgent(
        name="front",
        model=ScriptedLlm([tool_call("billing", {"request": "refund A1"}), "All done."]),
        tools=[AgentTool(billing)],
    )
    return EvalCase(
        name="desk",
        agent=front,
        first_message="refund A1",
        tool_mocks=mocks,
        invariants=invariants,
    )


@pytest.mark.parametrize(
    ("mocks", "invariants", "stop"),
    [
        ({}, [], "adk_eval stopped the run: Tool `refund_order` was called by agent `billing`"),
        (
            {"refund_order": ToolMock.returning({"ok": True})},
            [never_called("refund_order")],
            "adk_eval stopped the run: invariant never_called(refund_order) broken",
        ),
    ],
    ids=["unmocked", "invariant"],
)
async def test_a_stop_inside_an_agent_tool_shows_as_the_stop_not_as_its_result(
    mocks, invariants, stop
):
    result = await run_eval(_desk(mocks, invariants))
    assert result.status in ("error", "failed")

    full = render_transcript(result.trace, include_state=False).splitlines()
    assert full[1] == '[front] calls billing({"request": "refund A1"})'
    assert full[2] == '    [billing] calls refund_order({"order": "A1"})'
    assert full[3].startswith(f'    [refund_order error] "{stop}')
    assert full[4].startswith(f"[billing stopped] {stop}"), full
    assert len(full) == 5, full

    brief = transcript_lines(result.trace, brief=True)
    assert brief[1].startswith(
        f'front -> billing({{"request": "refund A1"}}) = stopped inside it: {stop}'
    ), brief
    assert "All done." not in "\n".join(brief)
