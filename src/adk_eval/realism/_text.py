"""Word-level rules shared by the behaviour features: words, content words, questions, facts.

Everything here is a plain rule on the text (regular expressions and small word lists,
English only), deterministic and cheap; `_features` documents what each rule misses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "AUXILIARIES",
    "STOPWORDS",
    "Question",
    "asks",
    "content_words",
    "has_number_or_date",
    "is_question",
    "proper_nouns",
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
    r"\byou\s+(?:please\s+)?(?:tell|give|provide|share|send|spell|describe|let me know)\b|"
    r"\b(?:prefer|preference|in mind|particular|specific|certain|sort of|type of|kind of)\b"
)
_NUMBER_CUES = re.compile(
    r"\b(?:how (?:many|much|old|long|soon|often)|when|what time|(?:what|which) (?:date|day)|"
    r"number|date|age|year|time|phone|amount|quantity|price)\b"
)
_CONFIRM = re.compile(
    r"\b(?:(?<!will )(?<!'ll )(?<!will then )(?:re)?confirm(?:ing)?\b|"
    r"(?:give|need your|your) confirmation\b|"
    r"check (?:the|that|this|your|if|it)\b|make sure\b|look over\b|take a look\b|"
    r"let me know if\b|how about\b|what about\b|if you (?:like|want|agree|wish|prefer)\b|"
    r"with your permission\b|^you(?:'d| would) like\b|^you want\b|should i\b)"
)
_ASK_VALUE = re.compile(
    r"\b(?:let me know (?!if)|(?:i'?ll|i will|i) need (?:to know|your)\b(?! confirmation)|"
    r"start by giving\b|(?:give|tell) me\b)"
)
_STATING = word_set("you you'd you're so that that's this it it's its okay ok then alright great")
_OFFER = re.compile(r"\b(?:how|what) about\b")
_RECEIPT = re.compile(r"\b(?:e-?mail|receipt|text message|by text|sms)\b")
_ANYTHING_ELSE = re.compile(
    r"\b(?:anything|something) else\b|\b(?:help|assist) (?:you )?(?:further|with)\b|"
    r"\bhow (?:else )?(?:can|may) i (?:help|assist)\b|\bwill that be all\b"
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
    """Whether a sentence asks: it ends with ``?``, or opens with an interrogative word.

    A sentence ending in ``!`` opens with one in vain ("Do enjoy your day!" asks nothing).
    """
    stripped = sentence.rstrip()
    if stripped.endswith("?"):
        return True
    opening = words(sentence)[:1]
    return bool(opening) and opening[0] in _INTERROGATIVES and not stripped.endswith("!")


def _prompts(sentence: str) -> bool:
    """Whether an agent's sentence asks for a reply without asking a question.

    A confirmation to check ("Please confirm: ...", "Check the order is right"), a
    statement to agree to ("You'd like 2 tickets"), an offer ("how about X", "if you
    like") or a request for a value ("let me know your ...", "give me the city").
    """
    lowered = sentence.lower()
    cue = _CONFIRM.search(lowered) or _ASK_VALUE.search(lowered)
    return bool(cue) and not _RECEIPT.search(lowered)


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
    open_ended: bool = False
    slots: int = 0


def question_in(text: str, *, prompts: bool = False) -> Question | None:
    """The question `text` asks, or None when no sentence of it is a question.

    With `prompts` (an agent's message), a sentence asking for a reply without a
    question counts too (see `_prompts`), as a yes/no question.
    """
    found = sentences(text)
    asking = [s for s in found if is_question(s) or (prompts and _prompts(s))]
    if not asking:
        return None
    last = asking[-1].lower()
    last_words = words(last)
    joined = " ".join(asking).lower()
    confirms = prompts and not _ASK_VALUE.search(last) and bool(_CONFIRM.search(last))
    offers = prompts and bool(_OFFER.search(last))  # "How about X?": take it or not
    stated = prompts and bool(last_words) and last_words[0] in _STATING  # "So 2 seats?"
    yes_no = offers or (
        not _WH.intersection(words(joined))
        and not _CONTENT_REQUEST.search(last)
        and not _ASK_VALUE.search(joined)
        and (confirms or stated or (bool(last_words) and last_words[0] in AUXILIARIES))
    )
    slots = 0 if yes_no else sum(_slots(sentence) for sentence in asking)
    return Question(
        " ".join(asking),
        yes_no,
        bool(_NUMBER_CUES.search(joined)),
        open_ended=bool(_ANYTHING_ELSE.search(joined)),
        slots=slots,
    )


_INFO_REQUEST = re.compile(
    r"\b(?:tell me|let me know|(?:like|want|need) to (?:know|see|view|check)|show me|"
    r"can i know|i wonder)\b|^(?:\w+\W+){0,3}(?:can|could|would|will) you (?:please )?show\b"
)
_ACTION_REQUEST = re.compile(
    r"^(?:(?:and|also|so|ok|okay|great|please|yes|no)\W+)*(?:can|could|would|will|may)\s+"
    r"(?:you|i|we)\s+(?:please\s+)?(?:also\s+)?(?!still\b|really\b|tell\b|show\b|say\b|"
    r"give me (?:the|their|its)\b|let me know\b|know\b)\w+"
)


def asks(text: str) -> bool:
    """Whether a user's message asks for information.

    A question or a request to be told ("tell me the fee", "I'd like to know when it
    opens") does; a request for an action put as a question ("Can I get a flat white?",
    "Could you book it?") does not.
    """
    for sentence in sentences(text.replace("\u2019", "'")):
        lowered = sentence.lower()
        if _INFO_REQUEST.search(lowered):
            return True
        clause = lowered.rsplit(",", 1)[-1].strip()
        if is_question(sentence) and not _ACTION_REQUEST.match(clause):
            return True
    return False


def _slots(sentence: str) -> int:
    """How many values a question asks for: its wh-words, or its parts joined by "and"."""
    said = words(sentence)
    return max(1, sum(word in _WH for word in said), 1 + said.count("and"))


def has_number_or_date(text: str) -> bool:
    """Whether `text` holds a digit or names a month or a weekday."""
    return bool(_NUMBER.search(text) or _DATE_WORD.search(text))


def proper_nouns(text: str) -> list[tuple[int, str]]:
    """Runs of capitalised words not opening a sentence ("New York" is one), with offsets.

    "I", stopwords, month and day names are left out of a run.
    """
    found: list[tuple[int, str]] = []
    for sentence in _SENTENCE.finditer(text):
        for match in _CAPITALISED.finditer(sentence.group()):
            opening = match.start() == len(sentence.group()) - len(sentence.group().lstrip())
            run = match.group().split()[1 if opening else 0 :]
            run = [name for name in run if _stem(name.lower()) not in _NOT_NAMES]
            if run:
                at = sentence.start() + match.start() + match.group().find(run[0])
                found.append((at, " ".join(run)))
    return found
