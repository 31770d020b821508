"""EvalTrace turns ADK events into typed items metrics can count and read."""

from __future__ import annotations

import pytest
from google.adk.sessions import Session

from adk_eval import EvalTrace
from adk_eval.testing import (
    function_response_event,
    state_event,
    text_event,
    tool_call_event,
    user_event,
)


def events():
    return [
        user_event("I have chest pain"),
        tool_call_event(
            "clinician", "ask", {"question": "How long?"}, call_id="a1", long_running=True
        ),
        function_response_event("user", "ask", {"answer": "30 min"}, call_id="a1"),
        tool_call_event("clinician", "escalate", {"level": "999"}, call_id="e1"),
        function_response_event(
            "clinician", "escalate", {"ok": True}, call_id="e1", state_delta={"escalation": "999"}
        ),
        state_event({"patient:revealed": ["hypertension"]}),
        text_event("clinician", "Call 999 now."),
    ]


def test_items_are_typed_and_ordered():
    trace = EvalTrace(events=events())
    kinds = [type(item).__name__ for item in trace.items]
    assert kinds == [
        "Message",
        "ToolCall",
        "ToolResponse",
        "ToolCall",
        "ToolResponse",
        "StateChange",
        "StateChange",
        "Message",
    ]


def test_tool_calls_carry_their_responses():
    ask, escalate = EvalTrace(events=events()).tool_calls
    assert (ask.name, ask.args, ask.long_running, ask.response) == (
        "ask",
        {"question": "How long?"},
        True,
        {"answer": "30 min"},
    )
    assert (escalate.name, escalate.long_running, escalate.response) == (
        "escalate",
        False,
        {"ok": True},
    )


def test_select_with_a_filter():
    trace = EvalTrace(events=events())
    assert len(trace.select("tool_call", lambda c: c.name == "ask")) == 1
    assert [m.text for m in trace.select("user_message")] == ["I have chest pain"]
    assert trace.final_response == "Call 999 now."
    assert len(trace.select("state_change")) == 2


def test_select_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="event_type must be one of"):
        EvalTrace(events=[]).select("tool_calls")


def test_from_session_reads_events_and_scoped_state():
    session = Session(
        id="s",
        app_name="app",
        user_id="u",
        events=events(),
        state={"escalation": "999", "patient:revealed": ["hypertension"]},
    )
    trace = EvalTrace.from_session(session)
    assert trace.final_state == {
        "session": {"escalation": "999"},
        "patient": {"revealed": ["hypertension"]},
    }
    assert trace.state("patient") == {"revealed": ["hypertension"]}
    assert len(trace.tool_calls) == 2
