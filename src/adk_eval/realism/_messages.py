"""A conversation's messages: who said what, questions asked through long-running tools included.

A message is an event's text (thought parts and partial chunks left out). An agent
that asks the user through a long-running tool (``ask(question=...)``: the tool
waits, the user's answer comes back as its function response) asks in the call's
arguments and is answered in the response, so those count as messages too: the
call (an id in its event's ``long_running_tool_ids``, by an author other than the
user) is an agent message whose text is its string arguments, and the user's
function response to it is a user message whose text is the response's strings
(``{"result": "Tuesday mornings"}``: "Tuesday mornings"). Every other tool call
and response carries no message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from google.adk.events import Event

__all__ = ["conversation"]


def _strings(value: Any) -> str:
    """The string leaves of `value`, in order, joined by spaces."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Mapping):
        found = (_strings(item) for item in value.values())
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        found = (_strings(item) for item in value)
    else:
        return ""
    return " ".join(text for text in found if text)


def _said(by_user: bool, value: Any) -> Iterator[tuple[bool, str]]:
    if text := _strings(value or {}):
        yield by_user, text


def conversation(events: Sequence[Event], user: str) -> Iterator[tuple[bool, str]]:
    """Each message of `events` as ``(by_user, text)``, in order (see the module doc).

    Args:
        events: The conversation's events.
        user: The author of the user's messages; every other author is the agent side.
    """
    asking: set[str] = set()
    for event in events:
        if event.partial or event.content is None:
            continue
        by_user = event.author == user
        parts = event.content.parts or []
        text = "".join(part.text or "" for part in parts if not part.thought).strip()
        if text:
            yield by_user, text
        long_running = event.long_running_tool_ids or set()
        for part in parts:
            call, response = part.function_call, part.function_response
            if call is not None and not by_user and call.id in long_running:
                asking.add(call.id)
                yield from _said(False, call.args)
            elif response is not None and by_user and response.id in asking:
                yield from _said(True, response.response)
