"""Behaviour features of the user side of one conversation, by rules (no model).

`features(events)` measures how the user behaved, with the same code for a real
(production) conversation and a simulated one, so the two can be compared feature by
feature; `FEATURE_KINDS` names each comparable feature's kind (count, rate, mean, flag).

**Messages.** A user message is an event by `user` with text (thought parts left out;
partial streaming chunks and empty texts skipped). Every other author's text is the agent
side; consecutive agent texts (around tool calls) make one agent message. A question asked
through a long-running tool is a message too: the call's string arguments are the agent's
(``ask(question="Which days suit you?")``) and the user's function response to it is the
user's (``{"result": "Tuesdays"}``), see `_messages`. Other tool calls and responses carry
no message. Words are runs of letters and digits
("don't", "12.50" and e-mails are one word each); content words are words outside a
small English stopword list (function words, pleasantries, yes/no, fillers), with
apostrophes dropped and a plural "s" cut.

**The rules** (and what each misses):

* ``turns``: the user messages. ``words_total`` / ``words_per_message``: their words and
  the mean per message (0.0 without user messages).
* ``questions_asked``: user messages asking for information: a sentence that ends in
  ``?`` or opens with an interrogative (what, when, is, do, can, ...), or a request to be
  told ("tell me the fee", "I'd like to know when it opens", "show me"); a request for
  an action put as a question ("Can I get a flat white?", "Could you book it?") asks
  none. Misses questions without these shapes.
* Agent questions: an agent message with a question, or a sentence asking for a reply
  without one: a confirmation to check ("Please confirm: ...", "Check the order is
  right", "Confirming your 10:15 visit"; not "a nurse will confirm it by text"), a
  statement to agree to ("You'd like 2 tickets"), an offer ("how about X", "if you
  like"), a request for a value ("let me know your ...", "give me the city"). It is
  *yes/no* when its asking sentences have no wh-word and the last opens with an
  auxiliary (and asks for no content: "could you tell me", "do you have a preference")
  or is a confirmation or offer; it *asks for* as many values as its wh-words or its
  parts joined by "and"; it *wants a number* when it says how many/much/long, when,
  what time/date/day, number, date, age, year, time, phone, amount, price; it is *open*
  when it asks "anything else?". The user's next message answers it, classified by the
  first rule that holds: a refusing phrase ("I'd rather not", "prefer not", "none of
  your business", "won't say") is ``refusing``; a yes/no word among the reply's first
  three words, for a yes/no question, or no preference ("I don't care", "any is fine",
  "doesn't matter", "I don't mind") is ``direct``; not knowing ("not sure", "don't
  know", "no idea") or questioning the question ("why do you need that?") is
  ``evasive``; a number or date for a question wanting one, a content word shared with
  the question, or any reply to an open question is ``direct``; a reply opening on a
  change of subject ("anyway", "by the way") is ``evasive``; any other reply, a
  question back pursuing the goal included, is ``direct``; no reply (the conversation
  ended) is ``none``. ``answered_directly_rate`` is direct / agent questions (None when
  the agent asked nothing): a rate per question asked, so an agent that asks more does
  not weigh on it. Misses: a change of subject without a marker word is direct.
* ``corrections``: user messages with a correction phrase ("sorry, I meant", "I meant",
  "I said", "I changed my mind", "no, it's", "that's wrong", "not X but Y", "typo"), a
  reply opening on "no" or "sorry" that gives a value to a yes/no question or a
  confirmation ("No, make it 4 people"), or a sentence opening on "actually" (after at
  most two of "oh", "wait", "no", "sorry", ...; "I actually like it" is no correction).
  "Actually, yes/no" replying to a yes/no question is an answer, not a correction;
  "No, it's 456" replying to "Is it 123?" is both a direct answer and a correction.
  Misses corrections without such words ("456." alone).
* ``volunteered``: fact items the user gave unasked (`_facts.fact_items`): an e-mail, a
  number, a date or time ("the 9th of March", "Tuesday at 10 am" is one), a proper noun,
  a count in words ("for two", "forty four dollars"), a constraint in words ("cheap",
  "in the north", "decaf", "round trip", "with a garage") or a place after a
  preposition ("to the airport"); an item the agent's message just named (an offered
  option) or the user already gave is not new. The first user message counts its
  items; a later one counts all its new items when the agent's last message asked for
  no value (no question, a yes/no question or confirmation, "anything else?"), else its
  new items beyond the values asked for. ``volunteered_rate`` is volunteered / the
  user's chances: their first message and every message the agent left free; None
  without one. Misses descriptions without a value ("it arrived damaged") and values
  outside the word lists; counts a word of the lists used otherwise.
* ``topic_changes``: user messages, from the second on, that open a new goal: one
  naming a kind of service (a cab, a flight, a song, a payment, ...: `_facts.domains`)
  the current goal did not name (nor the agent's message just before); after the
  agent said a task is done ("booked", "was successful"), a request for another; or
  a message opening on a new-goal marker ("also", "by the way", "I also need") with no
  word of the agent's message. A closing ("thanks, bye") and a refusal never are; a
  new attribute of the same goal ("What is the address?") is not. Misses a new goal
  of a kind outside the list, said without a marker.
* ``repetitions``: user messages of 3 or more words whose word set has a Jaccard
  similarity of at least 0.8 with an earlier user message's (shorter ones, "yes",
  "thanks", repeat by nature).
* ``abandoned``: the user leaves without the goal. With ``goal_reached`` True: never.
  False: the last message is the user's, or the user's last message says goodbye or
  gives up ("bye", "never mind", "forget it", "I give up"). None (unknown): only the
  user's last message giving up explicitly ("never mind", "forget it", "I give up"; a
  plain "bye" also ends conversations that went well, so it does not count).
* ``outcome``: ``goal_reached`` as given (None: unknown).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from google.adk.events import Event

from ._answers import classify_answer, is_correction, is_quitting
from ._facts import (
    domains,
    fact_items,
    is_closing,
    new_goal_marker,
    reports_done,
    requests,
)
from ._messages import conversation
from ._text import Question, asks, content_words, question_in, words

__all__ = ["FEATURE_KINDS", "UserBehaviour", "features"]

Kind = Literal["count", "rate", "mean", "flag"]

FEATURE_KINDS: dict[str, Kind] = {
    "turns": "count",
    "words_total": "count",
    "words_per_message": "mean",
    "questions_asked": "count",
    "agent_questions": "count",
    "answers_direct": "count",
    "answers_evasive": "count",
    "answers_refusing": "count",
    "answers_none": "count",
    "answered_directly_rate": "rate",
    "corrections": "count",
    "volunteered": "count",
    "volunteered_rate": "mean",
    "topic_changes": "count",
    "repetitions": "count",
    "abandoned": "flag",
    "outcome": "flag",
}
"""Each comparable feature of `UserBehaviour` and its kind; a None value (a rate with
nothing to divide, an unknown outcome) is missing, not zero."""


@dataclass(frozen=True)
class UserBehaviour:
    """How the user side of one conversation behaved (see the module's rules).

    Attributes:
        turns: User messages.
        words_total: Words in them.
        words_per_message: Mean words per user message (0.0 without messages).
        questions_asked: User messages asking a question.
        agent_questions: Agent messages asking a question.
        answers_direct: Agent questions the user's next message answered.
        answers_evasive: ... dodged ("not sure", a question back, a change of subject).
        answers_refusing: ... refused ("I'd rather not").
        answers_none: ... left unanswered (the conversation ended).
        answered_directly_rate: answers_direct / agent_questions (None: none asked).
        corrections: User messages correcting themselves or the agent.
        volunteered: Fact items given before being asked.
        volunteered_rate: volunteered / the user's chances to volunteer: their messages
            not answering an agent's question for a value (None: no chance).
        topic_changes: User messages on a new topic.
        repetitions: User messages near-identical to an earlier one.
        abandoned: The user left without the goal.
        outcome: Whether the goal was reached (None: unknown).
    """

    turns: int = 0
    words_total: int = 0
    words_per_message: float = 0.0
    questions_asked: int = 0
    agent_questions: int = 0
    answers_direct: int = 0
    answers_evasive: int = 0
    answers_refusing: int = 0
    answers_none: int = 0
    answered_directly_rate: float | None = None
    corrections: int = 0
    volunteered: int = 0
    volunteered_rate: float | None = None
    topic_changes: int = 0
    repetitions: int = 0
    abandoned: bool = False
    outcome: bool | None = None

    def values(self) -> dict[str, int | float | bool | None]:
        """The comparable features by name (the keys of `FEATURE_KINDS`)."""
        every = asdict(self)
        return {name: every[name] for name in FEATURE_KINDS}


@dataclass(frozen=True)
class _Message:
    by_user: bool
    text: str


def _messages(events: Sequence[Event], user: str) -> list[_Message]:
    """The conversation's messages, consecutive agent messages joined into one."""
    found: list[_Message] = []
    for by_user, text in conversation(events, user):
        if not by_user and found and not found[-1].by_user:
            found[-1] = _Message(False, f"{found[-1].text}\n{text}")
        else:
            found.append(_Message(by_user, text))
    return found


def _jaccard(left: set[str], right: set[str]) -> float:
    return len(left & right) / len(left | right) if left | right else 0.0


def _volunteers(text: str, first: bool, asked: Question | None, agent: str, said: set[str]) -> int:
    """Fact items of `text` the agent did not ask for (new ones: not restated, not offered)."""
    items = [item for item in fact_items(text) if item not in said and item not in agent]
    said.update(items)
    if first or _free(asked):
        return len(items)
    assert asked is not None
    return max(0, len(items) - asked.slots)


def _free(asked: Question | None) -> bool:
    """Whether the user's reply is free to volunteer: no question asked for a value."""
    return asked is None or asked.yes_no or asked.open_ended


def _changes_topic(
    text: str, index: int, agent: str, goal: set[str], asked: Question | None
) -> bool:
    """Whether `text` opens a new goal.

    It names a kind of service the current `goal` did not (nor the agent's message just
    before); or, after the agent said a task is done, asks for another; or opens on a
    new-goal marker ("also", "by the way") with no word of the agent's message.
    """
    if index < 1 or is_closing(text):
        return False
    if asked is not None and classify_answer(asked, text) == "refusing":
        return False
    named = domains(text) - domains(agent)
    shared = content_words(text) & content_words(agent)
    done = reports_done(agent)
    if named and not named <= goal:
        return bool(goal) or done
    if done and requests(text) and (named or "another" in words(text) or not shared):
        return True  # a task done, then another
    return new_goal_marker(text) and not shared


def _walk(messages: Sequence[_Message]) -> Counter[str]:
    """The counts of `UserBehaviour` a walk through the conversation makes, by field name."""
    tally: Counter[str] = Counter()
    asked: Question | None = None  # the open agent question, until the user replies
    last_agent = ""
    agent_asked: Question | None = None  # what the agent's last message asked
    users: list[str] = []
    said: set[str] = set()  # fact items said so far
    goal: set[str] = set()  # the kinds of service the current goal names
    for message in messages:
        if not message.by_user:
            last_agent = message.text
            agent_asked = question_in(message.text, prompts=True)
            asked = agent_asked
            tally["agent_questions"] += asked is not None
            continue
        text = message.text
        if asked is not None:
            tally[f"answers_{classify_answer(asked, text)}"] += 1
        tally["questions_asked"] += asks(text)
        tally["corrections"] += is_correction(text, asked)
        lowered = last_agent.lower()
        tally["volunteered"] += _volunteers(text, not users, agent_asked, lowered, said)
        tally["chances"] += not users or _free(agent_asked)
        changed = _changes_topic(text, len(users), last_agent, goal, asked)
        tally["topic_changes"] += changed
        goal = domains(text) if changed else goal | (domains(text) - domains(last_agent))
        tally["repetitions"] += _repeats(text, users)
        users.append(text)
        asked = None
    if asked is not None:
        tally["answers_none"] += 1
    return tally


def _repeats(text: str, earlier: Sequence[str]) -> bool:
    mine = words(text)
    if len(mine) < 3:
        return False
    seen = set(mine)
    return any(_jaccard(seen, set(words(before))) >= 0.8 for before in earlier)


def _abandoned(messages: Sequence[_Message], goal_reached: bool | None) -> bool:
    users = [message.text for message in messages if message.by_user]
    if goal_reached is True or not users:
        return False
    if goal_reached is None:
        return is_quitting(users[-1], explicit_only=True)
    return messages[-1].by_user or is_quitting(users[-1], explicit_only=False)


def features(
    events: Sequence[Event], *, user: str = "user", goal_reached: bool | None = None
) -> UserBehaviour:
    """The behaviour features of the user side of one conversation.

    Args:
        events: The conversation's events (an ADK session's ``events``), in order.
        user: The author of the user's messages (every other author is the agent side).
        goal_reached: Whether the conversation reached its goal (None: unknown).

    Returns:
        The features, by the rules of this module's docstring.
    """
    messages = _messages(events, user)
    users = [message.text for message in messages if message.by_user]
    total = sum(len(words(text)) for text in users)
    counts = _walk(messages)
    asked, chances = counts["agent_questions"], counts.pop("chances", 0)
    return UserBehaviour(
        turns=len(users),
        words_total=total,
        words_per_message=total / len(users) if users else 0.0,
        answered_directly_rate=counts["answers_direct"] / asked if asked else None,
        volunteered_rate=counts["volunteered"] / chances if chances else None,
        abandoned=_abandoned(messages, goal_reached),
        outcome=goal_reached,
        **counts,
    )
