"""event_count_metric: counts typed trace items and asserts on the count."""

from __future__ import annotations

import pytest

from adk_eval import EvalTrace
from adk_eval.metrics import event_count_metric
from adk_eval.testing import function_response_event, text_event, tool_call_event, user_event

EVENTS = [
    user_event("hi"),
    tool_call_event("c", "ask", {"q": 1}, call_id="1", long_running=True),
    function_response_event("user", "ask", {"a": 1}, call_id="1"),
    tool_call_event("c", "ask", {"q": 2}, call_id="2", long_running=True),
    function_response_event("user", "ask", {"a": 2}, call_id="2"),
    tool_call_event("c", "read", {"id": "p"}, call_id="3"),
    text_event("c", "done"),
]


async def test_counts_filtered_tool_calls():
    metric = event_count_metric(
        "efficient_triage",
        "tool_call",
        filter=lambda e: e.name == "ask",
        assertion=lambda n: n <= 5,
    )
    result = await metric.evaluate(EvalTrace(events=EVENTS))
    assert result.passed
    assert result.value == 2
    assert result.score == 1.0  # the count is the value; the score is pass/fail, 0..1
    assert result.evidence == ["2 tool_call (filtered); expected: n <= 5"]


async def test_fails_when_the_count_assertion_fails():
    metric = event_count_metric("one_call", "tool_call", assertion=lambda n: n == 1)
    result = await metric.evaluate(EvalTrace(events=EVENTS))
    assert not result.passed
    assert result.value == 3
    assert result.score == 0.0


async def test_async_assertion_and_message_kinds():
    async def exactly_one(n):
        return n == 1

    metric = event_count_metric("replies", "agent_message", assertion=exactly_one)
    assert (await metric.evaluate(EvalTrace(events=EVENTS))).passed


def test_bad_event_type_and_missing_assertion():
    with pytest.raises(ValueError, match="event_type must be one of"):
        event_count_metric("m", "tool_calls", assertion=lambda n: True)
    with pytest.raises(ValueError, match="needs an `assertion`"):
        event_count_metric("m", "tool_call")


def _inside_desk() -> EvalTrace:
    """A front agent's call of the `desk` AgentTool, and two calls its agent made inside it."""
    from adk_eval._trace import NestedEvent

    inner = [
        tool_call_event("billing", "refund", {"o": 1}, call_id="n1"),
        function_response_event("billing", "refund", {"ok": True}, call_id="n1"),
        tool_call_event("billing", "email", {"o": 1}, call_id="n2"),
        function_response_event("billing", "email", {"ok": True}, call_id="n2"),
    ]
    return EvalTrace(
        events=[
            user_event("hi"),
            tool_call_event("front", "desk", {"request": "refund"}, call_id="d1"),
            function_response_event("front", "desk", {"result": "done"}, call_id="d1"),
            text_event("front", "done"),
        ],
        nested_events=tuple(NestedEvent(("desk",), ("d1",), event) for event in inner),
    )


async def test_the_evidence_says_how_many_counted_calls_ran_inside_agent_tools():
    nested = event_count_metric("calls", "tool_call", assertion=lambda n: n <= 3, nested=True)
    result = await nested.evaluate(_inside_desk())
    assert result.value == 3
    assert result.evidence == [
        "3 tool_call; expected: n <= 3",
        "counted with nested=True: 2 of them ran inside AgentTool calls (desk)",
    ]
    top = event_count_metric("calls", "tool_call", assertion=lambda n: n <= 3)
    assert (await top.evaluate(_inside_desk())).evidence == ["1 tool_call; expected: n <= 3"]
    only_top = event_count_metric(
        "desk", "tool_call", filter=lambda c: c.name == "desk", assertion=bool, nested=True
    )
    evidence = (await only_top.evaluate(_inside_desk())).evidence
    assert len(evidence) == 1, evidence  # nothing nested among them: nothing more to say
