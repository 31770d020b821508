"""How a user's message answers the agent's question, and whether it corrects something.

The rules, their order and their blind spots are described in `_features`' module
docstring; this module holds the phrase lists and applies them.
"""

from __future__ import annotations

import re
from typing import Literal

from ._text import (
    Question,
    content_words,
    has_number_or_date,
    is_question,
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
    r"\b(?:not sure|unsure|(?:doesn'?t|does not|don'?t|do not) matter|whatever|"
    r"(?:don'?t|do not) know|dunno|no idea|(?:don'?t|do not) care|who knows|hard to say|"
    r"depends|not important|never mind|nevermind)\b"
)
_SHIFT = re.compile(
    r"^(?:anyway|anyhow|by the way|btw|different question|another (?:question|thing)|"
    r"something else|forget that|let'?s talk about|instead|more importantly)\b"
)
_REQUEST = re.compile(r"^(?:please|(?:could|can|would|will) you)\b")

_CORRECTION = re.compile(
    r"\b(?:sorry,? i mean|i meant|i said|i mis(?:typed|spoke|read)|typo|correction|"
    r"no,? (?:it'?s|it is|that'?s|that is|i said|i meant|i mean)|"
    r"that'?s (?:wrong|not (?:right|correct|what i)|incorrect)|that is (?:wrong|incorrect)|"
    r"not (?!only\b)[\w' -]{1,40}?,? but\b)"
)
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


def _only_asks(text: str) -> bool:
    """Whether every sentence is a question that is not a polite request."""
    found = sentences(text)
    return bool(found) and all(
        is_question(sentence) and not _REQUEST.match(_lower(sentence)) for sentence in found
    )


def classify_answer(question: Question, reply: str | None) -> Answer:
    """How `reply` answers `question` (None: no reply came).

    The first rule that holds decides: a refusing phrase (refusing); a yes or no opening
    the reply to a yes/no question (direct); an evasive phrase (evasive); a number or date
    for a question wanting one, or a content word shared with the question (direct);
    only questions back, other than polite requests, or a change-of-subject opening
    (evasive); anything else (direct).
    """
    if reply is None:
        return "none"
    text = _lower(reply)
    if _REFUSING.search(text):
        return "refusing"
    if question.yes_no and opens_yes_no(text):
        return "direct"
    if _EVASIVE.search(text):
        return "evasive"
    if question.wants_number and has_number_or_date(reply):
        return "direct"
    if content_words(question.text) & content_words(reply):
        return "direct"
    if _only_asks(reply) or _SHIFT.match(text):
        return "evasive"
    return "direct"


def is_correction(text: str, answering: Question | None) -> bool:
    """Whether the user corrects themselves or the agent.

    A correction phrase ("sorry, I meant", "I said", "no, it's", "not X but Y", ...)
    anywhere, or a sentence opening on "actually" (after at most two words such as "oh",
    "wait", "sorry": "I actually like it" does not count). An "actually" right
    before a yes or a no, replying to a yes/no question ("Actually, yes"), is an answer,
    not a correction.
    """
    lowered = _lower(text)
    if _CORRECTION.search(lowered):
        return True
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
