"""Persona settings that move a simulated user's behaviour, and a user that follows them.

`PersonaSettings` names five behaviours the realism report measures:

* ``cooperation``: the share of the agent's questions answered directly (the rest
  are dodged: "not sure, does that matter?");
* ``volunteering``: the chance, when the agent asked nothing, of giving the next fact
  unasked (else a short acknowledgement);
* ``verbosity``: about how many words a message has (short answers are padded with a
  polite tail, long ones are kept);
* ``patience``: messages after the first before the user gives up ("never mind");
* ``error_rate``: the chance an answer is wrong at first and corrected in the next
  message ("sorry, I meant ...").

`PersonaSettings.instruction()` says them in words for an LLM persona (append it to
a simulated user's instruction). `replay_with(session, settings, rng)` plays a stored
conversation again with a user that follows the settings exactly, against the agent's
recorded messages: the first message is kept, each later answer is the real user's own
(so its content is real) or a dodge, an acknowledgement, a mistake, as the settings
draw. A question asked through a long-running tool is answered the same way, as that
call's function response (``{"result": ...}``), and the agent's confirmations and offers
are questions, as the behaviour features read them. It needs no model, so calibration
(`_calibrate`) can try many settings.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import product

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from ._answers import dodges_or_refuses
from ._messages import conversation
from ._mine import says_something
from ._text import question_in

__all__ = ["PersonaSettings", "grid", "replay_with"]

_DODGE = "not sure, does that matter?"
_ACK = "ok"
_GIVE_UP = "never mind, forget it"
_TAIL = ["if", "that", "helps", "at", "all,", "thanks"]


@dataclass(frozen=True)
class PersonaSettings:
    """How a simulated user behaves (see the module doc)."""

    cooperation: float = 0.95
    volunteering: float = 0.5
    verbosity: int = 8
    patience: int = 12
    error_rate: float = 0.0

    def instruction(self) -> str:
        """The settings in words, for an LLM persona's instruction."""
        return (
            f"Answer the agent's questions directly about {round(100 * self.cooperation)} % "
            "of the time; otherwise say you are not sure or ask why it matters. "
            f"When the agent has not asked anything, volunteer the next detail about "
            f"{round(100 * self.volunteering)} % of the time. Write about {self.verbosity} "
            f"words per message. If your goal is not met after {self.patience} messages, "
            "give up and leave. "
            + (
                f"About {round(100 * self.error_rate)} % of your answers contain a mistake "
                "you correct in your next message."
                if self.error_rate
                else ""
            )
        ).strip()

    def label(self) -> str:
        """A short name: ``cooperation=0.7 volunteering=0.5 ...``."""
        return " ".join(f"{k}={v}" for k, v in self.__dict__.items())


def grid(
    cooperation: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    volunteering: tuple[float, ...] = (0.0, 0.5, 1.0),
    verbosity: tuple[int, ...] = (8,),
    patience: tuple[int, ...] = (12,),
    error_rate: tuple[float, ...] = (0.0,),
) -> list[PersonaSettings]:
    """Every combination of the values given (the defaults: 18 settings)."""
    return [
        PersonaSettings(*values)
        for values in product(cooperation, volunteering, verbosity, patience, error_rate)
    ]


def _is_fact(text: str) -> bool:
    """Whether a real user's message gives something (not a dodge, a refusal, small talk)."""
    lowered = text.lower()
    if not text or lowered.startswith(("sorry, i meant", _GIVE_UP)):
        return False
    return not dodges_or_refuses(text) and says_something(text)


def _said(text: str, settings: PersonaSettings) -> str:
    words = text.split()
    if len(words) >= settings.verbosity:
        return text
    return " ".join([*words, *_TAIL][: max(settings.verbosity, len(words))])


def _message(event: Event, asking: set[str]) -> str:
    """What `event` says as a message (`_messages`), with `asking` the questions asked so far.

    Its text, or a long-running tool's question, or the user's answer to one.
    """
    return " ".join(text for _, text in conversation([_asking(asking), event], "user"))


def _asking(ids: set[str]) -> Event:
    """A stand-in event that asked the questions `ids` (so their answers read as messages)."""
    calls = [types.Part(function_call=types.FunctionCall(id=i, name="ask")) for i in ids]
    return Event(author="agent", long_running_tool_ids=set(ids), content=types.Content(parts=calls))


def replay_with(session: Session, settings: PersonaSettings, rng: random.Random) -> list[Event]:
    """The conversation's events with its user side played by `settings` (see the module doc)."""
    said = [text for by_user, text in conversation(session.events, "user") if by_user]
    facts = [text for text in said if _is_fact(text)][1:]
    events: list[Event] = []
    started = asked = False
    sent, pending, asking = 0, "", set[str]()
    for event in session.events:
        text = _message(event, asking)
        if event.author != "user":
            events.append(event)
            asking |= set(event.long_running_tool_ids or ())
            asked = asked or question_in(text, prompts=True) is not None
            continue
        if not text:
            continue
        if not started:  # the goal, as the real user put it
            started = True
            events.append(event)
            continue
        if sent >= settings.patience:
            events.append(_user(_GIVE_UP, event))
            break
        sent += 1
        events.append(_user(_answer(settings, rng, asked, facts, pending), event))
        pending = "" if pending else _mistake(settings, rng, facts)
        asked = False
    return events


def _answer(
    settings: PersonaSettings, rng: random.Random, asked: bool, facts: list[str], pending: str
) -> str:
    if pending:
        return f"sorry, I meant {pending}"
    if asked and rng.random() >= settings.cooperation:
        return _DODGE
    if not asked and rng.random() >= settings.volunteering:
        return _ACK
    return _said(facts.pop(0) if facts else "that is all", settings)


def _mistake(settings: PersonaSettings, rng: random.Random, facts: list[str]) -> str:
    """The fact the next message corrects, when this one was a mistake (else nothing)."""
    if settings.error_rate and facts and rng.random() < settings.error_rate:
        return facts[0]
    return ""


def _user(text: str, like: Event) -> Event:
    """The user saying `text` where `like` spoke: a text, or the answer to an ``ask`` call."""
    parts = (like.content.parts if like.content else None) or []
    answered = next((p.function_response for p in parts if p.function_response), None)
    if answered is not None:
        response = types.FunctionResponse(
            id=answered.id, name=answered.name, response={"result": text}
        )
        return Event(
            author="user",
            invocation_id=like.invocation_id,
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
        )
    return Event(
        author="user",
        invocation_id=like.invocation_id,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )
