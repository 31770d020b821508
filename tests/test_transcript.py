"""The transcript judges read: turns, tool calls with results or errors, final state."""

from __future__ import annotations

from adk_eval import EvalTrace
from adk_eval._transcript import render_transcript
from adk_eval.testing import function_response_event, text_event, tool_call_event, user_event


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
