"""The verbs of `claimed_actions`: action verbs, their forms, and what each tool performs.

A *verb family* is a verb's base form (``refund``); its past forms (``refunded``)
are what a claim says. The families come from a built-in table of common
actions and from the tools (`tool_families`: the verb of a tool's name, the
first verb of its description's first sentence, lemmatised, and the action
nouns they make: ``create_booking`` -> ``create``, ``book``; "Navigates to a
URL" -> ``navigate``). Families in one synonym group back one another (cancel,
delete, remove, void; book, insert, create, place; save, screenshot, store;
update, upgrade, downgrade, add; send, issue, submit, notify; ...). What counts
as a claim in a message is `_text`'s; which call backs it, `_calls`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

__all__ = [
    "BUILTIN",
    "BUILTIN_FORMS",
    "LIGHT",
    "NOUNS",
    "forms_of",
    "lemma",
    "name_words",
    "noun_of",
    "past_forms",
    "related",
    "tool_families",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GROUPS: tuple[frozenset[str], ...] = tuple(
    _words(group)
    for group in (
        "refund reimburse",
        "send email mail text message forward notify alert inform share invite issue submit",
        "book reserve schedule arrange rebook insert create place",
        "create add insert enter input type open log file lodge submit register enroll post "
        "upload schedule set",
        "submit place finish finalize",
        "cancel void revoke terminate annul delete remove erase deactivate",
        "delete remove erase purge",
        "update change modify edit amend set adjust correct reschedule rename move upgrade "
        "downgrade add",
        "order purchase buy place",
        "pay charge bill settle",
        "transfer move",
        "save store record screenshot capture write",
        "navigate goto visit open",
        "reset",
        "approve authorize accept",
        "reject decline deny",
        "escalate assign",
        "replace exchange swap",
        "block lock freeze suspend disable deactivate",
        "unblock unlock unfreeze enable activate reactivate",
        "subscribe enroll register",
        "unsubscribe",
        "renew extend",
        "return",
        "close",
        "verify",
    )
)
"""Synonym groups: a verb of a group backs a claim of any other."""

LIGHT = _words("issue process initiate complete finalize execute make handle confirm")
"""Verbs that claim the action noun of their sentence (``processed your refund``)."""

_MAKING = LIGHT | _words("create add insert place submit open make finish")
"""Verbs whose object names the action done (``create_booking``)."""

BUILTIN = frozenset().union(*_GROUPS) | LIGHT
"""The built-in action verbs (base forms)."""

NOUNS: Mapping[str, str] = {
    "refund": "refund",
    "reimbursement": "reimburse",
    "booking": "book",
    "reservation": "reserve",
    "appointment": "book",
    "cancellation": "cancel",
    "payment": "pay",
    "transfer": "transfer",
    "deletion": "delete",
    "removal": "remove",
    "purchase": "purchase",
    "replacement": "replace",
    "exchange": "exchange",
    "subscription": "subscribe",
    "registration": "register",
    "enrollment": "enroll",
    "renewal": "renew",
    "upgrade": "upgrade",
    "downgrade": "downgrade",
    "reset": "reset",
    "escalation": "escalate",
    "email": "send",
    "transaction": "pay",
    "order": "order",
    "change": "change",
}
"""Action nouns, by the verb family they name."""

_IRREGULAR: Mapping[str, tuple[str, ...]] = {
    "send": ("sent",),
    "pay": ("paid",),
    "make": ("made",),
    "buy": ("bought",),
    "set": ("set",),
    "reset": ("reset",),
    "put": ("put",),
    "cancel": ("cancelled", "canceled"),
    "freeze": ("froze", "frozen"),
    "unfreeze": ("unfroze", "unfrozen"),
    "write": ("wrote", "written"),
    "rewrite": ("rewrote", "rewritten"),
    "forward": ("forwarded",),
    "open": ("opened",),
    "enroll": ("enrolled",),
    "label": ("labelled", "labeled"),
}

READ_ONLY = _words(
    "get fetch find search list lookup look query read show view retrieve load check "
    "describe count browse calculate compute estimate think"
)
"""Verbs a tool name may start with that perform no action: they add no family."""

MONEY = _words("pay charge bill refund reimburse")
"""Money moved: what an acting call does on the way when no tool of the run moves it."""

_DESCRIBING = _words("returns gives provides shows displays lists outputs answers")
"""First words of a description that say what a tool tells, not what it does."""

_NOT_VERBS = _words("a an the this that these those it its tool function helper use used")
"""First words of a description that are no verb."""

_OBJECT_ENDS = _words("to for in on at with from into by via using as of when if and")
"""Words that end the object of a description's verb (``Adds an item to the order``)."""


@cache
def past_forms(base: str) -> tuple[str, ...]:
    """The past tense and participle forms of `base` (regular ones, over-generated)."""
    if base in _IRREGULAR:
        return _IRREGULAR[base]
    if base.endswith("e"):
        return (base + "d",)
    if base.endswith("y") and len(base) > 1 and base[-2] not in "aeiou":
        return (base[:-1] + "ied",)
    forms = [base + "ed"]
    vowels = [letter in "aeiou" for letter in base[-3:]]
    if vowels == [False, True, False] and base[-1] not in "wxy":  # ship -> shipped
        forms.append(base + base[-1] + "ed")
    return tuple(forms)


def forms_of(bases: Iterable[str]) -> dict[str, str]:
    """Past form -> base form, for `bases`."""
    return {form: base for base in bases for form in past_forms(base)}


BUILTIN_FORMS = forms_of(BUILTIN)
"""Past form -> base form, of the built-in verbs."""


@cache
def related(family: str) -> frozenset[str]:
    """`family` and the families of its synonym groups."""
    return frozenset({family}).union(*(group for group in _GROUPS if family in group))


def lemma(word: str, known: Iterable[str] = BUILTIN) -> str | None:
    """The base form among `known` (and the built-in verbs) of `word`, or None."""
    word = word.lower()
    bases = set(known) | BUILTIN
    if word in bases:
        return word
    forms = BUILTIN_FORMS if not set(known) - BUILTIN else forms_of(bases)
    if word in forms:
        return forms[word]
    candidates = []
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s"):
        candidates.append(word[:-1])
    if word.endswith("ing"):
        candidates += [word[:-3], word[:-3] + "e", word[:-4]]
    return next((c for c in candidates if c in bases), None)


def name_words(name: str) -> list[str]:
    """The words of a tool name: ``refund_order``, ``sendEmail``, ``book-table``."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)]


def tool_families(name: str, description: str = "") -> frozenset[str]:
    """The verb families a tool performs, from its name and its description's first sentence.

    A name gives its verb: its first word, or the first known verb after a prefix
    that is none (``browser_goto``: ``goto``); nothing when that verb
    only reads (``get``, ``lookup``, ``search``, ...). A word the built-in table does
    not know counts as a verb of its own (``escalate``). After a verb that makes
    something (``create``, ``process``, ``issue``, ...) or a first word that is no
    known verb, the name's last word counts too when it is an action noun
    (``create_booking``: ``create``, ``book``; ``add_order_item``: ``add`` only).

    A description gives its first verb, lemmatised (``Navigates ...``: ``navigate``),
    the known verbs joined to it by ``and`` (``Finishes the order and sends it``),
    and after a making verb the action nouns of its object (``Issues a refund to
    the customer``: ``issue``, ``refund``); nothing when it opens by telling
    (``Returns ...``, ``Lists ...``) or with a verb that only reads.
    """
    sentence = re.split(r"(?<=[.!?])\s|\n\s*\n", description.strip(), maxsplit=1)[0]
    found = _name_families(name_words(name))
    if sentence:
        found |= _described(re.findall(r"[a-z]+", sentence.lower()))
    return frozenset(found)


def _name_families(words: list[str]) -> set[str]:
    """The families of a tool name's words (see `tool_families`)."""
    if not words or _reads(words[0]):
        return set()
    verb = lemma(words[0])
    if verb is None and len(words[0]) < 3:
        return set()
    found = {verb or words[0]}
    if verb is None:
        later = next((v for w in words[1:] if (v := lemma(w)) is not None), None)
        if later is not None:
            return set() if _reads(later) else {later}  # the first word was a prefix
    if (verb is None or verb in _MAKING) and len(words) > 1:
        noun = noun_of(words[-1])
        found.update([NOUNS[noun]] if noun is not None else [])
    return found


def _described(words: list[str]) -> set[str]:
    """The families of a description's first sentence, in lower-case words."""
    if not words or words[0] in _DESCRIBING or words[0] in _NOT_VERBS or _reads(words[0]):
        return set()
    verb = lemma(words[0]) or _third_person(words[0])
    if verb is None or _reads(verb):
        return set()
    found = {verb}
    if verb in _MAKING:
        rest = words[1:]
        object_ = rest[: next((i for i, w in enumerate(rest) if w in _OBJECT_ENDS), len(rest))]
        found.update(NOUNS[n] for word in object_ if (n := noun_of(word)) is not None)
    for i, word in enumerate(words[:-1]):
        joined = lemma(words[i + 1]) if word == "and" else None
        if joined is not None and not _reads(joined):
            found.add(joined)
    return found


def _reads(word: str) -> bool:
    return word in READ_ONLY or lemma(word, READ_ONLY) in READ_ONLY


def _third_person(word: str) -> str | None:
    """The base form of a description's opening verb the table does not know (``navigates``)."""
    if len(word) < 4 or not word.endswith("s") or word.endswith("ss"):
        return None
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("shes", "ches", "xes", "sses", "zes")):
        return word[:-2]
    return word[:-1]


def noun_of(word: str) -> str | None:
    """The action noun `word` is (``refunds``: ``refund``), or None."""
    if word in NOUNS:
        return word
    if word.endswith("s") and word[:-1] in NOUNS:
        return word[:-1]
    return None
