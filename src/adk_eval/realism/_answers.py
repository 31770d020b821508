"""How a user's message answers the agent's question, and whether it corrects something.

The rules, their order and their blind spots are described in `_features`' module
docstring; this module holds the phrase lists and applies them.
"""

from __future__ import annotations

import re
from typing import Literal

from ._facts import fact_items, no_preference
from ._text import (
    Question,
    content_words,
    has_number_or_date,
    sentences,
    word_set,
    words,
)

__all__ = [
    "Answer",
    "classify_answer",
    "is_correction",
    "is_quitting",
    "opens_yes_no",
    "dodges_or_refuses",
]

Answer = Literal["direct", "evasive", "refusing", "none"]
"""How the user answered an agent's question (``none``: the conversation ended first)."""

_YES_NO = word_set(
    "yes yeah yep yup ya sure no nope nah correct right ok okay absolutely definitely "
    "certainly indeed exactly true false negative affirmative"
)

_REFUSING = re.compile(
    r"\b(?:(?:i'?d|i would) rather not|prefer not|none of your business|no comment|"
    r"not (?:going|gonna) to (?:say|tell|share|give)|(?:won'?t|will not) (?:say|tell|share|give)|"
    r"(?:don'?t|do not) want to (?:say|tell|share|give)|not telling|"
    r"(?:can'?t|cannot) (?:say|tell you|share)|(?:i'?d|i would) not (?:say|tell|share))\b"
)
_EVASIVE = re.compile(
    r"\b(?:not sure|unsure|(?:don'?t|do not) know|dunno|no idea|who knows|hard to say|"
    r"depends|never mind|nevermind|(?:don'?t|do not) (?:have|remember) (?:it|that))\b"
)
_NOT_SURE = re.compile(r"^\W*(?:i'?m |i am )?(?:not sure|unsure)\b")
_WHY = re.compile(
    r"^why\W*$|\b(?:why (?:do|does|would|should|is)|what for\b|does (?:it|that) matter|"
    r"is (?:it|that) (?:necessary|needed|required))"
)
_SHIFT = re.compile(
    r"^(?:anyway|anyhow|by the way|btw|different question|another (?:question|thing)|"
    r"something else|forget that|let'?s talk about|instead|more importantly)\b"
)

_CORRECTION = re.compile(
    r"\b(?:sorry,? i mean|i meant|i said|i mis(?:typed|spoke|read)|typo|correction|"
    r"changed? my mind|no,? (?:it'?s|it is|that'?s|that is|i said|i meant|i mean)"
    r"(?! all\b| it\b| everything\b| fine\b| ok)|"
    r"that'?s (?:wrong|not (?:right|correct|what i)|incorrect)|"
    r"that is (?:wrong|incorrect|not (?:right|correct))|"
    r"not (?!only\b|at the moment\b|right now\b|now\b|yet\b|really\b)[\w' -]{1,40}?,? but\b)"
)
_REJECTING = re.compile(r"^\W*(?:no|nope|not quite|(?:i'?m )?sorry)\b")
_ACTUALLY = re.compile(
    r"^(?:(?:oh|wait|no|sorry|um|uh|hmm|oops|ah|and|but|well)\W+){0,2}actually\b\W*(\w+)?"
)

_QUITTING = re.compile(
    r"\b(?:bye|goodbye|never ?mind|forget (?:it|about it)|i give up|give up|don'?t bother|"
    r"i'?ll go elsewhere|this is useless|waste of (?:my )?time)\b"
)
_GIVING_UP = re.compile(
    r"\b(?:never ?mind|forget (?:it|about it)|i give up|give up|don'?t bother|"
    r"i'?ll go elsewhere|this is useless|waste of (?:my )?time)\b"
)


def _lower(text: str) -> str:
    return text.replace("\u2019", "'").lower()


def opens_yes_no(text: str) -> bool:
    """Whether one of the first three words is a yes or a no ("Actually, yes" does)."""
    return bool(_YES_NO.intersection(words(text)[:3]))


def classify_answer(question: Question, reply: str | None) -> Answer:
    """How `reply` answers `question` (None: no reply came).

    The first rule that holds decides: a refusing phrase (refusing); a yes or no opening
    the reply to a yes/no question, or no preference ("I don't care", "any is fine")
    (direct); not knowing ("not sure", "no idea") or questioning the question ("why do
    you need that?") (evasive); a number or date for a question wanting one, a content
    word shared with the question, or any reply to "anything else?" (direct); a
    change-of-subject opening ("by the way", "anyway") (evasive); anything else,
    a question back pursuing the goal included (direct).
    """
    if reply is None:
        return "none"
    text = _lower(reply)
    if _REFUSING.search(text):
        return "refusing"
    if _NOT_SURE.match(text):  # "not sure" opens on no yes
        return "evasive"
    if (question.yes_no and opens_yes_no(text)) or no_preference(text):
        return "direct"
    if _EVASIVE.search(text) or _WHY.search(text):
        return "evasive"
    if question.wants_number and has_number_or_date(reply):
        return "direct"
    if content_words(question.text) & content_words(reply) or question.open_ended:
        return "direct"
    if _SHIFT.match(text):
        return "evasive"
    return "direct"


def is_correction(text: str, answering: Question | None) -> bool:
    """Whether the user corrects themselves or the agent.

    A correction phrase ("sorry, I meant", "I said", "no, it's", "not X but Y", "I changed
    my mind", ...) anywhere; a reply opening on "no" or "sorry" that gives a value, to a
    yes/no question or a confirmation ("No, make it 4 people"); or a sentence opening on
    "actually" (after at most two words such as "oh", "wait", "sorry": "I actually like
    it" does not count). An "actually" right
    before a yes or a no, replying to a yes/no question ("Actually, yes"), is an answer,
    not a correction.
    """
    lowered = _lower(text)
    if _CORRECTION.search(lowered):
        return True
    confirming = answering is not None and answering.yes_no and not answering.open_ended
    if confirming and _REJECTING.match(lowered) and fact_items(text):
        return True  # "No, make it 4 people" to "A table for 3?"
    for sentence in sentences(lowered):
        found = _ACTUALLY.match(sentence)
        if found is None:
            continue
        after = found.group(1)
        confirms = after in _YES_NO and answering is not None and answering.yes_no
        if not confirms:
            return True
    return False


def is_quitting(text: str, *, explicit_only: bool) -> bool:
    """Whether the message leaves: "bye", "never mind", "forget it", "I give up", ...

    Args:
        text: The user's message.
        explicit_only: Count only giving up ("never mind", "forget it", ...), not a
            plain goodbye (which also ends conversations that went well).
    """
    pattern = _GIVING_UP if explicit_only else _QUITTING
    return bool(pattern.search(_lower(text)))


def dodges_or_refuses(text: str) -> bool:
    """Whether a message, read alone, dodges ("not sure") or refuses ("I'd rather not")."""
    lowered = _lower(text)
    return bool(_EVASIVE.search(lowered) or _REFUSING.search(lowered))
