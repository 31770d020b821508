"""The turn seam shared by `run_eval` and the studio: one test per function."""

from __future__ import annotations

import datetime as dt

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from adk_eval._errors import EvalSetupError
from adk_eval._turns import (
    DEFAULT_USER_ID,
    PendingCall,
    agent_app,
    app_name_for,
    classify_run,
    content_text,
    event_text,
    jsonable,
    parts_text,
    resume_message,
    tool_error_response,
    tool_response,
    user_content,
)
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    text_event,
    tool_call_event,
    user_event,
)


def _agent(name: str = "helper") -> LlmAgent:
    return LlmAgent(name=name, model=ScriptedLlm(["hi"]))


def test_text_leaves_thoughts_out_and_is_empty_without_content():
    parts = [types.Part(text="thinking", thought=True), types.Part(text="Hello"), types.Part()]
    assert parts_text(parts) == "Hello"
    assert parts_text(None) == ""
    assert content_text(types.Content(role="model", parts=parts)) == "Hello"
    assert content_text(None) == ""
    assert event_text(text_event("agent", "Hi there")) == "Hi there"
    assert event_text(Event(author="agent")) == ""


def test_jsonable_turns_what_json_cannot_hold_into_its_repr():
    moment = dt.date(2026, 11, 22)
    assert jsonable({"when": moment, "n": [1, 2.5], "ok": True}) == {
        "when": repr(moment),
        "n": [1, 2.5],
        "ok": True,
    }


@pytest.mark.parametrize(
    ("name", "expected"),
    [("math_agent", "math_agent"), ("my agent!", "my_agent"), ("1st", "a_1st"), ("user", "a_user")],
)
def test_app_name_for_keeps_valid_names_and_cleans_the_rest(name, expected):
    assert app_name_for(name) == expected


class _Named(BasePlugin):
    pass


def test_agent_app_puts_the_harness_plugins_before_the_apps_own():
    ours, theirs = _Named(name="ours"), _Named(name="theirs")
    plain = agent_app(_agent("math_agent"), [ours])
    assert plain.name == "math_agent"
    assert [p.name for p in plain.plugins] == ["ours"]
    assert plain.resumability_config is None
    user_app = App(name="shop", root_agent=_agent(), plugins=[theirs])
    wrapped = agent_app(user_app, [ours], name="studio_shop", resumable=True)
    assert [p.name for p in wrapped.plugins] == ["ours", "theirs"]
    assert wrapped.name == "studio_shop"
    assert wrapped.resumability_config is not None
    assert wrapped.resumability_config.is_resumable
    assert [p.name for p in user_app.plugins] == ["theirs"]  # the user's App is not changed


def test_agent_app_refuses_what_is_not_an_agent():
    with pytest.raises(EvalSetupError, match="needs an ADK agent, Workflow or App, got str"):
        agent_app("agent", [])  # type: ignore[arg-type]


def test_classify_run_finds_unanswered_long_running_calls_and_the_last_text():
    events = [
        user_event("book it"),
        text_event("booker", "Let me check."),
        tool_call_event("booker", "ask", {"q": "when?"}, call_id="c1", long_running=True),
        tool_call_event("booker", "lookup", {"id": 1}, call_id="c2"),
        function_response_event("booker", "lookup", {"ok": True}, call_id="c2"),
        tool_call_event("booker", "approve", call_id="c3", long_running=True, invocation_id="i2"),
        function_response_event("booker", "approve", {"ok": True}, call_id="c3"),
    ]
    end = classify_run(events)
    assert end.pending == [
        PendingCall(
            call_id="c1", name="ask", args={"q": "when?"}, invocation_id="inv-1", author="booker"
        )
    ]
    assert (end.text, end.author) == ("Let me check.", "booker")


def test_classify_run_without_agent_text_keeps_the_last_invocation():
    end = classify_run([user_event("hi", invocation_id="i9")])
    assert (end.pending, end.text, end.author, end.invocation_id) == ([], "", None, "i9")
    assert classify_run([]).invocation_id == ""


def test_tool_response_wraps_values_and_answers_confirmations():
    assert tool_response("lookup", {"a": 1}) == {"a": 1}
    assert tool_response("lookup", "done") == {"result": "done"}
    assert tool_response("lookup", True) == {"result": True}
    assert tool_response("adk_request_confirmation", False) == {"confirmed": False}


def test_tool_error_response_names_the_type_and_the_message():
    assert tool_error_response(ValueError("bad id")) == {
        "error": {"type": "ValueError", "message": "bad id"}
    }
    assert tool_error_response("cancelled after 1.0s", "ToolCancelled") == {
        "error": {"type": "ToolCancelled", "message": "cancelled after 1.0s"}
    }
    assert tool_error_response("boom") == {"error": {"type": "ToolError", "message": "boom"}}


def test_user_content_and_resume_message_build_user_messages():
    assert user_content("hello") == types.Content(role="user", parts=[types.Part(text="hello")])
    content = types.Content(role="user", parts=[types.Part(text="as is")])
    assert user_content(content) is content
    calls = [PendingCall("c1", "ask", {}, "i1", "a"), PendingCall("c2", "approve", {}, "i1", "a")]
    message = resume_message([(calls[0], {"answer": "Bob"}), (calls[1], {"confirmed": True})])
    assert message.role == "user"
    assert [(p.function_response.id, p.function_response.name) for p in message.parts or []] == [
        ("c1", "ask"),
        ("c2", "approve"),
    ]
    assert not any(p.text for p in message.parts or [])
    assert DEFAULT_USER_ID == "eval_user"
