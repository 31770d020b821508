"""The verbs of `claimed_actions`: action verbs, their forms, and what each tool performs.

A *verb family* is a verb's base form (``refund``); its past forms (``refunded``)
are what a claim says. The families come from a built-in table of common
actions and from the tools (the verb a tool's name starts with, the first verb
of its description's first sentence, and the action nouns in its name:
``create_booking`` -> ``create``, ``book``). Families in one synonym group
back one another (``book``, ``reserve``, ``schedule``). What counts as a claim
in a message is `_text`'s.
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
        "send email mail text message forward notify alert inform share invite",
        "book reserve schedule arrange rebook",
        "create add insert open log file lodge submit register enroll post upload place "
        "schedule set",
        "cancel void revoke terminate annul",
        "delete remove erase purge",
        "update change modify edit amend set adjust correct reschedule rename move",
        "order purchase buy place",
        "pay charge bill settle",
        "transfer move",
        "save store record",
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
        "upgrade",
        "downgrade",
        "return",
        "close",
        "verify",
    )
)
"""Synonym groups: a verb of a group backs a claim of any other."""

LIGHT = _words("issue process initiate complete finalize execute make handle confirm")
"""Verbs that claim the action noun of their sentence (``processed your refund``)."""

_MAKING = LIGHT | _words("create add place submit open make")
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
    "describe count browse"
)
"""Verbs a tool name may start with that perform no action: they add no family."""


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

    Each gives its first word's verb (``refund_order``, "Sends an email"), unless
    that word only reads (``get``, ``lookup``, ``search``, ...): a word the
    built-in table does not know counts as a verb of its own (``escalate``).
    After a verb that makes something (``create``, ``process``, ``issue``, ...)
    or a first word that is no verb, the action nouns that follow count too
    (``create_booking``: ``create``, ``book``; "Issues a refund": ``issue``,
    ``refund``).
    """
    sentence = re.split(r"(?<=[.!?])\s|\n\s*\n", description.strip(), maxsplit=1)[0]
    found = _families_of(name_words(name))
    if sentence:
        found |= _families_of(re.findall(r"[a-z]+", sentence.lower()), strict=True)
    return frozenset(found)


def _families_of(words: list[str], *, strict: bool = False) -> set[str]:
    """The families of a name's or a sentence's words (see `tool_families`)."""
    if not words or words[0] in READ_ONLY or lemma(words[0]) in READ_ONLY:
        return set()
    verb = lemma(words[0])
    if verb is None and (strict or len(words[0]) < 3):
        return set()  # a description that does not start with a known verb says nothing
    found = {verb or words[0]}
    if verb is None or verb in _MAKING:
        found.update(NOUNS[n] for word in words[1:] if (n := noun_of(word)) is not None)
    return found


def noun_of(word: str) -> str | None:
    """The action noun `word` is (``refunds``: ``refund``), or None."""
    if word in NOUNS:
        return word
    if word.endswith("s") and word[:-1] in NOUNS:
        return word[:-1]
    return None
