"""The English rules of `claimed_actions`: what a claim looks like in an agent's message.

A claim is a past form of a known verb (`_verbs`) said as done:

* by the speaker: ``I refunded``, ``I've just refunded``, ``we have sent``,
  ``billing has refunded`` (not ``you have ...``);
* as done to something: ``has been booked``, ``is now cancelled``
  (``is``/``are`` only with now, all, already, successfully, officially;
  ``was``/``were`` only with successfully or just: ``your flight was cancelled``
  reports), ``successfully saved``;
* alone: ``Booked!``, ``Done — refunded``, ``Cancelled the booking``,
  ``Email sent.``, ``Appointment booked for Maya on May 3`` (after a label only
  when the label is an opener or says ``I``: ``Done: refunded``, not
  ``Status: Cancelled``).

It is not a claim after a negation or a modal in its clause (``I couldn't``,
``hasn't been``, ``will be``, ``can be``, ``I'll have it``), nor after a condition
in its sentence (``if``, ``once``, ``when``, ``unless``, ``until``, ``whether``),
nor when done by someone named after it (``cancelled by the airline``), nor an
idiom (``you're all set``), a field's name (``Total paid: $40``), a reference or
a state (``as previously booked``, ``with the insurance removed``), or what the
user is asked to see to (``Please ensure your card is stored``; but ``Please
check that I've entered it``). A question is no claim, but what a sentence says
before its question is (``I've refunded it, anything else?``, ``I typed it in
how does it look?``). A light verb (``processed``, ``issued``, ``made``,
``confirmed``, ``completed``) claims the action noun of its own phrase (``your
refund has been processed`` claims a refund; ``a certificate was issued for
your reservation`` no reservation); without one it claims only a verb some
tool performs (or one of its family).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ._verbs import BUILTIN_FORMS, LIGHT, NOUNS, noun_of, related

__all__ = ["Claim", "find_claims", "sentences"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ADVERBS = _words(
    "just now already also successfully all both actually finally officially fully "
    "indeed previously automatically manually immediately properly correctly "
    "completely"
)
_STRONG = _words("now all already successfully officially")
_PERFECT = _words("have has had i've we've they've")
_CONDITIONS = _words("if once unless until whether when whenever")
_MODALS = _words(
    "will shall would could can may might should must going gonna let be want wants "
    "need needs about planning trying ready"
)
_NEGATIONS = _words("not never cannot unable nothing neither nor failed fails unsuccessful without")
_ASSURE = _words("confirm see tell assure verify")  # "I can confirm it has been..."
_CLAUSE = _words(", but so however")  # modality and negation end here
_PART = _words("and or then &")  # a new part of a clause (for "... and sent it")
_OPENERS = _words(
    "done all set great ok okay sure perfect alright yes good news success excellent "
    "thanks thank you also then just now successfully both there thing"
)
_AFTER_BARE = _words(
    "your the it them a an this that these those for to you on in with at and all "
    "both everything successfully back out up off as per via by from into my our his "
    "her their its today now already just right # ,"
)
_SUBJECTS = _words("i you we they he she")
_ASKING = _words(
    "is are was were has have had do does did can could would will shall should may might "
    "what which who when where why how"
)  # a sentence opening with one of these asks
_PASSIVE = _words("been is are was were")
_JOINS = _words("and or then & but so however")  # where a light verb's subject starts
_OBJECT_ENDS = _words("to for in on at with from into by via using as of")
_DETAILS = _words("for on at to with via in under from until")  # "Appointment booked for ..."
_ASKING_USER = _words("ensure make check verify double")  # "Please ensure X is stored"
_SET_AFTER = _words("all now is are be get got am")
_OPENS_QUESTION = _words(
    "what which who where why how could would can do does did shall should anything"
)  # a question inside a sentence starts here ("..., could you check it?")
_BY_US = _words("me us our my")  # "cancelled by the airline" is a report, "by our team" not
_DASHES = "\u2014\u2013"  # em and en dash
_MONTH = re.compile(r"\bmay(?=\s+\d)|(?<=\b(?:on|in|of) )may\b")  # "on May 17": no modal
_TOKEN = re.compile(rf"[a-z]+(?:'[a-z]+)*|\d+|[,;:&{_DASHES}]|\s-\s")


@dataclass(frozen=True)
class Claim:
    """An action an agent said was done.

    Attributes:
        family: The verb family claimed (``refund``).
        word: The word that claims it, as written (``refunded``).
        quote: The sentence that says it.
        about: The words of its own clause (what the action was done to).
    """

    family: str
    word: str
    quote: str
    about: tuple[str, ...] = ()


def sentences(text: str) -> Iterator[str]:
    """The sentences of `text` (split after ``.``, ``!``, ``?`` and at line breaks)."""
    for piece in re.split(r"(?<=[.!?])\s+|\n+", text):
        if piece.strip():
            yield piece.strip()


def find_claims(text: str, forms: Mapping[str, str], tool_verbs: Iterable[str]) -> list[Claim]:
    """The claims in `text`, in order (see the module doc).

    Args:
        text: What an agent said.
        forms: Past form -> verb family, for every verb that can be claimed.
        tool_verbs: The families some tool performs (a light verb with no action
            noun claims only these).
    """
    claims: list[Claim] = []
    verbs = frozenset(tool_verbs)
    for sentence in sentences(text):
        normal = sentence.lower().replace("\u2019", "'").replace("\u2018", "'")
        normal = _MONTH.sub("month", normal.replace("e-mail", "email"))
        raw = _TOKEN.findall(normal)
        tokens = [_kind(t) for t in raw]
        if sentence.rstrip(" \"')*").endswith("?"):
            tokens = _before_question(tokens)
        for index, token in enumerate(tokens):
            family = forms.get(token)
            if family is None or _in_label(raw, index) or not _claims_at(tokens, index, family):
                continue
            if family in LIGHT:
                found = _own_noun(tokens, index)
                if found is None and not related(family) & verbs:
                    continue
                family = found or family
            claims.append(Claim(family, token, sentence[:200], _clause_of(tokens, index)))
    return claims


def _in_label(raw: list[str], index: int) -> bool:
    """Whether the past form at `index` names a field: ``Total paid: $40``, ``Created on: May 2``.

    A label that is the past form alone (``**Refunded:** $54.20``) is a claim, and so
    is a sentence that opens a list (``These have been cancelled:``).
    """
    stops = [j for j in range(index + 1, min(index + 3, len(raw))) if _kind(raw[j]) == ","]
    if not stops or raw[stops[0]] != ":":
        return False
    start = max((i + 1 for i in range(index) if _kind(raw[i]) == ","), default=0)
    lead = [t for t in raw[start:index] if t not in _OPENERS]
    if len(lead) > 3 or set(lead) & (_PERFECT | _PASSIVE | _SUBJECTS | _ADVERBS):
        return False  # "The reservations have been cancelled:" opens a list of them
    return bool(lead) or stops[0] > index + 1


def _own_noun(tokens: list[str], index: int) -> str | None:
    """The action noun a light verb at `index` claims: of its subject when passive, else its object.

    ``The refund has been processed``, ``I've issued a refund to you``; not a noun
    further on (``a certificate ... has been issued for the delay on your reservation``).
    """
    start = max((i + 1 for i in range(index) if tokens[i] in _JOINS), default=0)
    subject = tokens[start:index]
    rest = tokens[index + 1 :]
    end = next((i for i, t in enumerate(rest) if t in _OBJECT_ENDS or t in _CLAUSE), len(rest))
    object_ = rest[:end]
    passive = bool(set(subject) & _PASSIVE) or any(t.endswith(("'s", "'re")) for t in subject)
    for words in (subject, object_) if passive else (object_, subject):
        found = next((NOUNS[n] for t in words if (n := noun_of(t)) is not None), None)
        if found is not None:
            return found
    return None


def _clause_of(tokens: list[str], index: int) -> tuple[str, ...]:
    """The words of the clause (or part of one) the token at `index` is in."""
    bounds = _CLAUSE | _PART
    start = max((i + 1 for i in range(index) if tokens[i] in bounds), default=0)
    end = next((i for i in range(index + 1, len(tokens)) if tokens[i] in bounds), len(tokens))
    return tuple(tokens[start:end])


def _before_question(tokens: list[str]) -> list[str]:
    """What a question says before its closing question: ``I've refunded it, anything else?``.

    The question opens at a question word or an asking modal
    (``I have typed it all up how does this look?``), else after the last comma.
    """
    if not tokens or tokens[0] in _ASKING:
        return []
    opens = next((i for i in range(1, len(tokens)) if tokens[i] in _OPENS_QUESTION), None)
    if opens is not None:
        return tokens[:opens]
    return tokens[: len(tokens) - tokens[::-1].index(",") - 1] if "," in tokens else []


def _kind(token: str) -> str:
    if token.isdigit():
        return "#"
    if token in (";", ":") or token in _DASHES or token.strip() == "-":
        return ","
    return token


def _claims_at(tokens: list[str], index: int, family: str) -> bool:
    """Whether the past form at `index` is said as done (see the module doc)."""
    if any(t in _CONDITIONS for t in tokens[:index]) or _idiom(tokens, index):
        return False
    clause = max((i + 1 for i in range(index) if tokens[i] in _CLAUSE), default=0)
    asks = _asks_user(tokens) or _asks_user(tokens[clause:])
    if asks and not {"i", "we", "i've", "we've"} & set(tokens[:index]):
        return False  # "Please ensure your card is stored": the user's to do
    after = tokens[index + 1 : index + 3]
    if after[:1] == ["by"] and not set(after[1:]) & _BY_US:
        return False  # "cancelled by the airline": someone else did it
    if family == "save" and after[:1] == ["you"]:
        return False  # "I've saved you $40"
    for i in range(clause, index):
        token = tokens[i]
        modal = token in _MODALS or token.endswith(("'ll", "'d"))
        if modal and token in ("can", "could") and index > i + 1 and tokens[i + 1] in _ASSURE:
            modal = False
        if modal or token in _NEGATIONS or token.endswith("n't"):
            return False
    before = index - 1
    skipped: set[str] = set()
    while before >= 0 and (tokens[before] in _ADVERBS or _went_ahead(tokens, before)):
        skipped.add(tokens[before])
        before -= 3 if _went_ahead(tokens, before) else 1
    if "successfully" in skipped:
        return True
    previous = tokens[before] if before >= 0 else ","
    if previous == "as":
        return False  # "as previously booked", "as requested": what was, not what was done
    if previous in ("i", "we"):
        return True
    if previous in _PERFECT:
        return _perfect(tokens, before)
    if previous == "been":
        k = before - 1
        while k >= 0 and tokens[k] in _ADVERBS:
            k -= 1
        return k >= 0 and _perfect(tokens, k)
    if previous in ("is", "are") or previous.endswith(("'s", "'re")):
        return bool(skipped & _STRONG)
    if previous in ("was", "were"):
        return "just" in skipped  # "your flight was cancelled": a report
    return _alone(tokens, index, family, clause)


def _idiom(tokens: list[str], index: int) -> bool:
    """``You're all set``, ``is set for Tuesday``: ``set`` after a copula tells a state."""
    if tokens[index] != "set" or index == 0:
        return False
    previous = tokens[index - 1]
    return previous in _SET_AFTER or previous.endswith(("'re", "'s"))


def _asks_user(tokens: list[str]) -> bool:
    """Whether the sentence asks the user to see to something (``Please ensure ...``)."""
    opening = tokens[1:2] if tokens[:1] == ["please"] else tokens[:1]
    return bool(opening) and opening[0] in _ASKING_USER


def _opened(tokens: list[str], clause: int) -> bool:
    """Whether the clause before `clause` (if any) opens a claim: ``Done:``, ``Here's what I did:``.

    A label does not (``Status: Cancelled``, ``#A1043 — Cancelled``): it reports.
    """
    if clause == 0:
        return True
    start = max((i + 1 for i in range(clause - 1) if tokens[i] in _CLAUSE), default=0)
    label = tokens[start : clause - 1]
    return all(t in _OPENERS for t in label) or bool({"i", "we"} & set(label))


def _perfect(tokens: list[str], at: int) -> bool:
    """Whether `at` is a perfect's auxiliary whose subject is not the user (``you have``)."""
    token = tokens[at]
    if token == "you've" or (at > 0 and tokens[at - 1] in ("you", "they")):
        return False
    return token in _PERFECT or token.endswith(("'s", "'ve"))


def _went_ahead(tokens: list[str], at: int) -> bool:
    return at >= 2 and tokens[at - 2 : at + 1] in (
        ["went", "ahead", "and"],
        ["gone", "ahead", "and"],
    )


def _alone(tokens: list[str], index: int, family: str, clause: int) -> bool:
    """Said alone: ``Booked!``, ``Done: refunded``, ``... and sent it``, ``Email sent.``."""
    start = max((i + 1 for i in range(clause, index) if tokens[i] in _PART), default=clause)
    lead = tokens[start:index]
    after = tokens[index + 1] if index + 1 < len(tokens) else ","
    if tokens[index] == family:
        return False  # "set", "reset": the base form too, an order as much as a claim
    if lead[:1] in (["with"], ["without"]):
        return False  # "with the insurance removed, ...": a state
    if all(t in _OPENERS for t in lead):
        return after in _AFTER_BARE and _opened(tokens, clause)
    # "Email sent." "Your refund processed!" "Appointment booked for Maya on May 3"
    telegraphic = 0 < len(lead) <= 4 and (after == "," or after in _DETAILS)
    return telegraphic and not any(t in _SUBJECTS or t in BUILTIN_FORMS for t in lead)
