"""Conversations still being written: left out of a score unless asked for.

A stored session is **open** when both hold:

* it was last updated less than `OPEN_FOR` seconds ago (10 minutes), and
* its last event (of those that hold a message, a tool call or a tool
  response; bookkeeping events are passed over) does not end the agent's turn:
  it is the user's (a message, or a person's answer, the agent has not answered
  yet), a partial reply still streaming, a tool call without its response yet
  (a tool running, or one waiting for a person), or a tool response the agent
  has not followed up.

Both are needed: a conversation whose agent stopped mid-turn an hour ago is not
being written any more, it ended there, and is scored as what it is (it most
likely fails, as it should); a conversation updated a second ago whose agent
has replied is between turns, and what it holds so far is scored.
"""

from __future__ import annotations

from google.adk.events import Event
from google.adk.sessions import Session

__all__ = ["OPEN_FOR", "still_open"]

OPEN_FOR = 600.0
"""Seconds after its last update that a conversation stopped mid-turn counts as open."""


def still_open(session: Session, now: float, window: float = OPEN_FOR) -> str | None:
    """Why `session` is still being written (see the module doc); None when it is not.

    Args:
        session: The stored session.
        now: The time to judge it at (POSIX seconds).
        window: How recent its last update must be for it to be open.
    """
    if now - session.last_update_time >= window:
        return None
    last = next((event for event in reversed(session.events) if _speaks(event)), None)
    if last is None:
        return "it holds no message yet"
    if last.partial:
        return "its last reply is still streaming"
    if last.author == "user":
        return "the agent has not answered the user's last message yet"
    if last.get_function_calls():
        return "a tool call has no response yet"
    if last.get_function_responses():
        return "the agent has not followed up its last tool response yet"
    return None


def _speaks(event: Event) -> bool:
    """Whether an event holds part of the conversation, not only bookkeeping."""
    return event.content is not None and bool(event.content.parts)
