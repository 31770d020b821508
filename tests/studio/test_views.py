"""The page's view model: one renderer of history, for ADK events and remote contents alike."""

from __future__ import annotations

from google.genai import types

from adk_eval.studio._protocol import content_to_json
from adk_eval.studio._store import RequestRow, SessionRow
from adk_eval.studio._views import entries_from_contents, session_view

CONTENTS = [
    types.Content(role="user", parts=[types.Part(text="What is 5+3?")]),
    types.Content(
        role="model",
        parts=[
            types.Part(text="Let me add."),
            types.Part(function_call=types.FunctionCall(id="c1", name="add", args={"a": 5})),
        ],
    ),
    types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(id="c1", name="add", response={"r": 8})
            ),
            types.Part(
                function_response=types.FunctionResponse(
                    id="c2", name="fetch", response={"error": {"type": "IOError", "message": "x"}}
                )
            ),
        ],
    ),
    types.Content(role="model", parts=[types.Part(text="8", thought=True), types.Part(text="8.")]),
]


def test_remote_contents_render_as_the_events_they_came_from():
    entries = entries_from_contents([content_to_json(c) for c in CONTENTS], "calc")
    assert entries == [
        {"kind": "user", "text": "What is 5+3?", "author": "user", "at": None},
        {"kind": "model_text", "text": "Let me add.", "author": "calc", "at": None},
        {
            "kind": "tool_call",
            "name": "add",
            "call_id": "c1",
            "args": {"a": 5},
            "long_running": False,
            "author": "calc",
            "at": None,
        },
        {
            "kind": "tool_result",
            "name": "add",
            "call_id": "c1",
            "response": {"r": 8},
            "author": "calc",  # as in ADK: the agent's, in the user's role
            "at": None,
        },
        {
            "kind": "tool_error",
            "name": "fetch",
            "call_id": "c2",
            "error_type": "IOError",
            "message": "x",
            "response": {"error": {"type": "IOError", "message": "x"}},
            "author": "calc",
            "at": None,
        },
        {"kind": "final", "text": "8.", "author": "calc", "at": None},
    ]


def test_a_remote_session_shows_its_latest_model_call_and_the_answer():
    row = SessionRow(id="remote-1", target="remote: calc", kind="remote", role="model")
    request = RequestRow(
        id="r1",
        session_id="remote-1",
        kind="model",
        agent_name="calc",
        payload={"contents": [content_to_json(CONTENTS[0])]},
        status="answered",
        answer={"type": "output", "value": {"sum": 8}},
        answered_at=12.0,
    )
    view = session_view(
        row, version=4, requests=[request], events=[], running_tools=[], target=None
    )
    assert view["entries"][-1] == {
        "kind": "final",
        "text": '{"sum": 8}',
        "author": "calc",
        "at": 12.0,
    }
    assert (view["version"], view["pending"], view["can_export"], view["agent"]) == (
        4,
        [],
        False,
        None,
    )
