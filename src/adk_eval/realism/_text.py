"""Word-level rules shared by the behaviour features: words, content words, questions, facts.

Everything here is a plain rule on the text (regular expressions and small word lists,
English only), deterministic and cheap; `_features` documents what each rule misses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "AUXILIARIES",
    "Question",
    "content_words",
    "fact_items",
    "has_number_or_date",
    "is_question",
    "question_in",
    "sentences",
    "word_set",
    "words",
]


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`, as a set (for word lists)."""
    return frozenset(text.split())


_WORD = re.compile(r"\w+(?:['.@-]\w+)*")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*|[.!?]+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")

STOPWORDS = word_set(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves im ive id ill dont doesnt didnt cant wont isnt arent wasnt thats
    whats theres lets also get got want like know need may might must shall one okay ok
    yes yeah yep no nope sure hi hello hey thanks thank please bye goodbye well oh um uh
    just really maybe actually still
    """
)
"""Words that carry no topic: English function words, pleasantries, yes/no, fillers."""

AUXILIARIES = word_set("am is are was were do does did can could will would should shall have has")
"""Words that open a yes/no question ("Is it ...?", "Can you ...?")."""

_INTERROGATIVES = AUXILIARIES - {"have", "has"} | word_set(
    "what when where why how who whom whose which"
)
"""Words that open a question even without a question mark."""

_WH = word_set("what when where why how who whom whose which")
_CONTENT_REQUEST = re.compile(
    r"\byou\s+(?:please\s+)?(?:tell|give|provide|share|send|spell|describe|let me know)\b"
)
_NUMBER_CUES = re.compile(
    r"\b(?:how (?:many|much|old|long|soon|often)|when|what time|(?:what|which) (?:date|day)|"
    r"number|date|age|year|time|phone|amount|quantity|price)\b"
)
_MONTHS = sorted(
    word_set(
        "january february march april june july august september october november december "
        "jan feb mar apr jun jul aug sep sept oct nov dec"
    )
)
_DAYS = sorted(word_set("monday tuesday wednesday thursday friday saturday sunday"))
_DATE_WORD = re.compile(r"\b(?:" + "|".join(_MONTHS + _DAYS) + r")\b|\bmay\s+\d", re.IGNORECASE)
_NOT_NAMES = frozenset(["i", *STOPWORDS, *_MONTHS, *_DAYS, "may"])


def words(text: str) -> list[str]:
    """The words of `text`, lowercased ("don't", "12.50" and e-mails are one word each)."""
    return _WORD.findall(text.replace("\u2019", "'").lower())


def _stem(word: str) -> str:
    word = word.removesuffix("'s").replace("'", "")
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The topic words of `text`: no stopwords, apostrophes dropped, a plural "s" cut."""
    stems = (_stem(word) for word in words(text))
    return {stem for stem in stems if stem and stem not in STOPWORDS}


def sentences(text: str) -> list[str]:
    """The sentences of `text` (split after ``.``, ``!``, ``?`` and at line ends)."""
    return [found.strip() for found in _SENTENCE.findall(text) if found.strip(" .!?")]


def is_question(sentence: str) -> bool:
    """Whether a sentence asks: it ends with ``?`` or opens with an interrogative word."""
    if sentence.rstrip().endswith("?"):
        return True
    opening = words(sentence)[:1]
    return bool(opening) and opening[0] in _INTERROGATIVES


@dataclass(frozen=True)
class Question:
    """The question an agent's message asks.

    Attributes:
        text: The asking sentences, joined.
        yes_no: It opens with an auxiliary ("Is it ...?", "Do you ...?") and asks for
            nothing else (no wh-word, no "could you tell me ...").
        wants_number: It asks for a number, a date or a time ("how many", "when",
            "order number", ...).
    """

    text: str
    yes_no: bool
    wants_number: bool


def question_in(text: str) -> Question | None:
    """The question `text` asks, or None when no sentence of it is a question."""
    asking = [sentence for sentence in sentences(text) if is_question(sentence)]
    if not asking:
        return None
    last = asking[-1].lower()
    last_words = words(last)
    yes_no = (
        bool(last_words)
        and last_words[0] in AUXILIARIES
        and not _WH.intersection(last_words)
        and not _CONTENT_REQUEST.search(last)
    )
    joined = " ".join(asking)
    return Question(joined, yes_no, bool(_NUMBER_CUES.search(joined.lower())))


def has_number_or_date(text: str) -> bool:
    """Whether `text` holds a digit or names a month or a weekday."""
    return bool(_NUMBER.search(text) or _DATE_WORD.search(text))


def _proper_nouns(text: str) -> list[str]:
    """Runs of capitalised words not opening a sentence ("New York" is one)."""
    found: list[str] = []
    for sentence in sentences(text):
        for match in _CAPITALISED.finditer(sentence):
            run = match.group().split()
            if match.start() == 0:
                run = run[1:]  # a sentence's first word is capitalised anyway
            run = [name for name in run if _stem(name.lower()) not in _NOT_NAMES]
            if run:
                found.append(" ".join(run))
    return found


def fact_items(text: str) -> int:
    """How many facts `text` states: e-mails, numbers, dates and proper nouns, one each.

    An e-mail is one item (its digits are not numbers too); a number is a run of digits
    with ``. , : / -`` inside ("12:30", "3/4/2025"); a date is a month or weekday name;
    a proper noun is a run of capitalised words not opening a sentence, other than "I",
    stopwords, month and day names ("Hi, Anna here" counts Anna; "Anna here" does not).
    """
    emails = _EMAIL.findall(text)
    rest = _EMAIL.sub(" ", text)
    return (
        len(emails)
        + len(_NUMBER.findall(rest))
        + len(_DATE_WORD.findall(rest))
        + len(_proper_nouns(rest))
    )
