"""The open-conversation rule: updated in the last 10 minutes and stopped mid-turn."""

from __future__ import annotations

import pytest
from google.adk.events import Event, EventActions
from google.adk.sessions import Session
from google.genai import types

from adk_eval._sources._open import OPEN_FOR, still_open

NOW = 1_800_000_000.0


def said(author: str, part: types.Part, *, partial: bool = False) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[part])
    return Event(author=author, invocation_id="inv-1", content=content, partial=partial)


USER = said("user", types.Part(text="Where is A1?"))
REPLY = said("shop", types.Part(text="Shipped."))
STREAMING = said("shop", types.Part(text="Ship"), partial=True)
CALL = said("shop", types.Part(function_call=types.FunctionCall(id="c1", name="lookup", args={})))
RESPONSE = said(
    "shop",
    types.Part(function_response=types.FunctionResponse(id="c1", name="lookup", response={})),
)
BOOKKEEPING = Event(
    author="shop", invocation_id="inv-1", actions=EventActions(state_delta={"n": 1})
)


def session(*events: Event, ago: float = 5.0) -> Session:
    return Session(
        app_name="shop", user_id="ann", id="s1", events=list(events), last_update_time=NOW - ago
    )


@pytest.mark.parametrize(
    ("events", "why"),
    [
        ((USER,), "the agent has not answered the user's last message yet"),
        ((USER, CALL), "a tool call has no response yet"),
        ((USER, CALL, RESPONSE), "the agent has not followed up its last tool response yet"),
        ((USER, STREAMING), "its last reply is still streaming"),
        ((), "it holds no message yet"),
        ((USER, REPLY), None),
        ((USER, CALL, RESPONSE, REPLY, BOOKKEEPING), None),  # bookkeeping is passed over
    ],
)
def test_a_recent_conversation_is_open_while_its_agents_turn_is_unfinished(events, why):
    assert still_open(session(*events), NOW) == why


def test_a_conversation_that_stopped_mid_turn_long_ago_is_not_open_but_scored():
    assert still_open(session(USER, CALL, ago=OPEN_FOR), NOW) is None
    assert still_open(session(USER, CALL, ago=60.0), NOW, window=30.0) is None
