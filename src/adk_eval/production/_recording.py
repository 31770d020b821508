"""What a stored session recorded, as shadow replay needs it: user turns, tool answers, state.

A `Recording` reads a session's events once:

* the user's turns: the text of each user-authored event (its first message first);
* the tool answers: each function call of the agents, with the response that
  answered it (matched by call id), keyed by tool name and arguments;
* the calls and replies of each turn (between two user turns), to compare with
  a new run's;
* the state: the final state, and the state the conversation started from as
  far as the events tell: the final state without the keys any event changed
  (a stored session records its final state only; keys the conversation set
  are what it produced).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.events import Event
from google.adk.sessions import Session

from .._state import scoped_view

__all__ = ["Recording", "call_key"]


def call_key(name: str, args: Mapping[str, Any] | None) -> str:
    """A tool call's identity for matching: its name and its arguments, canonical JSON."""
    return f"{name}{json.dumps(dict(args or {}), sort_keys=True, default=repr)}"


@dataclass(frozen=True)
class Recording:
    """What a stored session recorded (see the module doc).

    Attributes:
        user_turns: The user's messages, in order.
        answers: The recorded response of each call, by `call_key`.
        tools: Every tool the recording answered, by name: its responses in order.
        turn_calls: The agents' tool calls of each turn, as `call_key`s.
        turn_replies: The agents' texts of each turn.
        initial_state: The scoped state before the conversation, as far as the events tell.
        final_state: The scoped state at the end.
    """

    user_turns: Sequence[str]
    answers: Mapping[str, Any] = field(default_factory=dict)
    tools: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    turn_calls: Sequence[Sequence[str]] = ()
    turn_replies: Sequence[Sequence[str]] = ()
    initial_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    final_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, session: Session) -> Recording:
        """Reads `session`'s events."""
        responses = {
            response.id: response.response
            for event in session.events
            for response in event.get_function_responses()
            if response.id
        }
        answers: dict[str, Any] = {}
        tools: dict[str, list[Any]] = {}
        user_turns: list[str] = []
        turn_calls: list[list[str]] = []
        turn_replies: list[list[str]] = []
        changed: set[str] = set()
        for event in session.events:
            changed.update(event.actions.state_delta or {})
            text = _text(event)
            if event.author == "user":
                if text:
                    user_turns.append(text)
                    turn_calls.append([])
                    turn_replies.append([])
                continue
            for call in event.get_function_calls():
                key = call_key(call.name or "", call.args)
                if call.id in responses:
                    answers.setdefault(key, responses[call.id])
                    tools.setdefault(call.name or "", []).append(responses[call.id])
                if turn_calls:
                    turn_calls[-1].append(key)
            if text and turn_replies and not event.partial:
                turn_replies[-1].append(text)
        final = scoped_view(session.state)
        initial = {
            scope: values
            for scope, values in scoped_view(
                {k: v for k, v in session.state.items() if k not in changed}
            ).items()
            if values
        }
        return cls(
            user_turns=user_turns,
            answers=answers,
            tools=tools,
            turn_calls=turn_calls,
            turn_replies=turn_replies,
            initial_state=initial,
            final_state=final,
        )


def _text(event: Event) -> str:
    if event.content is None:
        return ""
    return "".join(part.text or "" for part in event.content.parts or [] if not part.thought)
