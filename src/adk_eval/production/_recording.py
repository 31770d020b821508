"""What a stored session recorded, as shadow replay needs it: user turns, tool answers, state.

A `Recording` reads a session's events once:

* the user's turns: the text of each user-authored event (its first message first);
* the tool answers: each function call of the agents, with the response that
  answered it (matched by call id) and the state change recorded with that
  response (what the tool wrote: an `AgentTool`'s agent's ``output_key``, say),
  keyed by tool name and arguments; calls of
  ADK's own machinery (transfers, ``exit_loop``, structured output) are not
  answers, ADK runs them; calls a person answered (confirmations, input
  requests, long-running tools: their response is in a user event) are kept
  apart, as the user's answers;
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
from .._tools._tree import FRAMEWORK_YIELD_TOOLS

__all__ = ["FRAMEWORK_CALLS", "Recording", "call_key"]

FRAMEWORK_CALLS = frozenset(
    {
        "transfer_to_agent",
        "exit_loop",
        "set_model_response",
        "finish_task",
        "load_artifacts",
        "load_memory",
    }
)
"""Calls ADK's machinery runs (a replay lets ADK run them again, never a recorded answer)."""


def call_key(name: str, args: Mapping[str, Any] | None) -> str:
    """A tool call's identity for matching: its name and its arguments, canonical JSON.

    The calls ADK makes to ask the user (confirmations, input requests) carry the
    id of the call they stand for, new in every run: ids are left out of theirs.
    """
    stable = _without_ids(dict(args or {})) if name in FRAMEWORK_YIELD_TOOLS else dict(args or {})
    return f"{name}{json.dumps(stable, sort_keys=True, default=repr)}"


def _without_ids(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


@dataclass(frozen=True)
class Recording:
    """What a stored session recorded (see the module doc).

    Attributes:
        user_turns: The user's messages, in order.
        answers: The recorded response of each call, by `call_key`.
        state_changes: The state change recorded with each call's response (ADK's
            flat keys), by `call_key`; a response event answering several calls
            at once records one change, given to each of them.
        tools: Every tool the recording answered, by name: its responses in order.
        user_answers: The calls a person answered (a user event holds the response),
            by tool name: ``(call_key, response)`` in order.
        turn_calls: The agents' tool calls of each turn, as `call_key`s.
        turn_replies: The agents' texts of each turn.
        initial_state: The scoped state before the conversation, as far as the events tell.
        final_state: The scoped state at the end.
    """

    user_turns: Sequence[str]
    answers: Mapping[str, Any] = field(default_factory=dict)
    state_changes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tools: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    user_answers: Mapping[str, Sequence[tuple[str, Any]]] = field(default_factory=dict)
    turn_calls: Sequence[Sequence[str]] = ()
    turn_replies: Sequence[Sequence[str]] = ()
    initial_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    final_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, session: Session) -> Recording:
        """Reads `session`'s events: the responses first, then each call with its own."""
        responses, deltas, by_user = _responses(session)
        answers: dict[str, Any] = {}
        state_changes: dict[str, dict[str, Any]] = {}
        tools: dict[str, list[Any]] = {}
        user_answers: dict[str, list[tuple[str, Any]]] = {}
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
                name = call.name or ""
                key = call_key(name, call.args)
                if call.id in by_user or name in FRAMEWORK_YIELD_TOOLS:
                    if call.id in responses:
                        user_answers.setdefault(name, []).append((key, responses[call.id]))
                elif call.id in responses and name not in FRAMEWORK_CALLS:
                    answers.setdefault(key, responses[call.id])
                    if deltas.get(call.id):
                        state_changes.setdefault(key, deltas[call.id])
                    tools.setdefault(name, []).append(responses[call.id])
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
            state_changes=state_changes,
            tools={name: found for name, found in tools.items() if name not in user_answers},
            user_answers=user_answers,
            turn_calls=turn_calls,
            turn_replies=turn_replies,
            initial_state=initial,
            final_state=final,
        )


def _responses(
    session: Session,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], set[str]]:
    """By call id: each recorded response, its state change, and which a person answered.

    A person's answer (a confirmation, an input request, a long-running tool's
    result) is a response in a user event.
    """
    responses: dict[str, Any] = {}
    deltas: dict[str, dict[str, Any]] = {}
    by_user: set[str] = set()
    for event in session.events:
        for response in event.get_function_responses():
            if response.id:
                responses[response.id] = response.response
                deltas[response.id] = dict(event.actions.state_delta or {})
                if event.author == "user":
                    by_user.add(response.id)
    return responses, deltas, by_user


def _text(event: Event) -> str:
    if event.content is None:
        return ""
    return "".join(part.text or "" for part in event.content.parts or [] if not part.thought)
