"""The built-in kinds of personal data: what finds each, in which order, and what it is called.

Each kind's detector is ``(text, before) -> [(start, end, key), ...]``: where a
value is and its normalized form (two spellings of one value normalize alike,
so they get one marker). ``before`` is what the text answers: the message
before it, or the name of the field it is stored under (`_cued` reads it; the
detectors that find values by their shape ignore it).

Where two finds overlap, the kind listed first in `DETECTORS` wins: e-mails,
cards, ids, account and order ids (an order number that is also a valid phone
number is an order number: its word says so), dates of birth, street
addresses, phone numbers, names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from ._cued import find_birth_dates, find_names, find_references
from ._patterns import find_cards, find_emails, find_ids, find_phones
from ._places import find_addresses, find_spoken_emails

__all__ = ["DETECTORS", "KINDS", "NOUNS", "Detector"]

Detector = Callable[[str, str], list[tuple[int, int, str]]]
"""A built-in detector: ``(text, before) -> [(start, end, key), ...]``."""

KINDS: tuple[str, ...] = (
    "email",
    "phone",
    "card",
    "id",
    "account",
    "order",
    "name",
    "address",
    "birth_date",
)
"""The built-in kinds of personal data, all on by default (the order counts are told in)."""

NOUNS: dict[str, tuple[str, str]] = {
    "email": ("e-mail", "e-mails"),
    "phone": ("phone number", "phone numbers"),
    "card": ("card number", "card numbers"),
    "id": ("id number", "id numbers"),
    "account": ("account id", "account ids"),
    "order": ("order or booking id", "order or booking ids"),
    "name": ("name", "names"),
    "address": ("street address", "street addresses"),
    "birth_date": ("date of birth", "dates of birth"),
}
"""Each kind as counts tell it: one, many."""


def _emails(text: str, before: str) -> list[tuple[int, int, str]]:
    return [*find_emails(text), *find_spoken_emails(text)]


def _shape(find: Callable[[str], Sequence[tuple[int, int, str]]]) -> Detector:
    """A detector that finds values by their shape alone (``before`` does not change them)."""

    def detector(text: str, before: str) -> list[tuple[int, int, str]]:
        return list(find(text))

    return detector


def _cued(find: Callable[[str, str], Sequence[tuple[int, int, str, str]]], kind: str) -> Detector:
    """The finds of one kind from a cued detector that finds several."""

    def detector(text: str, before: str) -> list[tuple[int, int, str]]:
        return [(start, end, key) for start, end, found, key in find(text, before) if found == kind]

    return detector


_references = functools.lru_cache(maxsize=8)(find_references)
"""Account and order ids are found together: their two detectors read each text once."""


def _names(text: str, before: str) -> list[tuple[int, int, str]]:
    return [(start, end, key) for start, end, _, key in find_names(text, before)]


def _birth_dates(text: str, before: str) -> list[tuple[int, int, str]]:
    return [(start, end, key) for start, end, _, key in find_birth_dates(text, before)]


DETECTORS: dict[str, Detector] = {
    "email": _emails,
    "card": _shape(find_cards),
    "id": _shape(find_ids),
    "account": _cued(_references, "account"),
    "order": _cued(_references, "order"),
    "birth_date": _birth_dates,
    "address": _shape(find_addresses),
    "phone": _shape(find_phones),
    "name": _names,
}
"""The built-in detectors by kind, in the order their finds win an overlap."""
