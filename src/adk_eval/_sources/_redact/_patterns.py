"""The built-in detectors of personal data: e-mail addresses, phone numbers, cards, id numbers.

Each detector is a function ``(text) -> list[Found]``: where a value starts and
ends, and its normalized form (two spellings of one value normalize alike, so
they get one marker). The detectors favour precision over recall: a false
positive replaces a date, a price or an order number with a marker and destroys
what an evaluation measures, so every candidate is checked beyond its shape:

* e-mail: a local part, ``@`` and a domain with a dot and a top-level name, or an
  address literal (``user@[192.168.0.1]``, ``user@[IPv6:2001:db8::1]``).
* phone: ``+`` and 8 to 15 digits (international), or a national number in
  separated groups: 10 to 12 digits led by a trunk ``0``, 9 to 12 with a
  parenthesized area code, or the North American 3-3-4 with valid area and exchange
  codes; or unbroken (``4155552671``, ``07700900123``) when Google's libphonenumber
  (`phonenumbers`, the ``redact`` extra) finds it valid in the North American plan
  or, led by ``0``, in one of eight countries' plans (without the extra, unbroken
  national numbers are left: ten digits in a row are as often an order number).
* card: 13 to 19 digits, contiguous or in groups of 3 to 6 led by 4 (the last
  group may be 2: ``3600 1234 5678 90``), that pass the Luhn check and do not
  start with 0.
* id: a US social security number ``123-45-6789`` or ``123 45 6789`` (one
  separator throughout, not inside a longer run of numbers; the numbers never
  issued excluded), or an IBAN of a known country at its length, passing the mod-97 check.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

__all__ = [
    "Found",
    "find_cards",
    "find_emails",
    "find_ids",
    "find_phones",
    "iban_valid",
    "luhn_valid",
    "phonenumbers_module",
]


class Found(NamedTuple):
    """A value a detector found: ``text[start:end]``, and its normalized form."""

    start: int
    end: int
    key: str


_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?"
    r"@(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w@-])"
    rf"|\[(?:(?:{_OCTET}\.){{3}}{_OCTET}|IPv6:[0-9A-Fa-f:.]{{2,45}})\])"
)
# A maximal run of digits in groups separated by one space or dash (a card's candidate).
_DIGIT_RUN = re.compile(
    r"(?<![\w+.,/:-])(?<!\d[ -])\d(?:[ -]?\d){12,}(?!\w|[ -]\d|[.,/:]\d)", re.ASCII
)
_GROUP = re.compile(r"\d+")
_PHONE_END = r"(?!\w|[-.,/:]\d)"
_PHONE_INTERNATIONAL = re.compile(
    r"(?<![\w+])\+\d+(?:(?:[ .-]\(?|\(|(?<=\)))\d+\)?)*" + _PHONE_END, re.ASCII
)
_PHONE_NATIONAL = re.compile(
    r"(?<![\w+.,/:-])(?:1[ .-])?(?:\(\d{2,5}\)[ .-]?|\d{2,5}[ .-])\d{2,8}(?:[ .-]\d{2,8}){0,3}"
    + _PHONE_END,
    re.ASCII,
)
# Ten digits (eleven led by 1) or a trunk 0 and 9 or 10: checked by libphonenumber's plans.
_PHONE_UNBROKEN = re.compile(
    r"(?<![\w+.,/:$#-])(?:1?[2-9]\d{9}|0\d{9,10})(?![\w]|[.,/:-]\d)", re.ASCII
)
_REGIONS = ("US", "GB", "FR", "DE", "AU", "IN", "IT", "ES", "NL")
"""Where an unbroken national number is tried: the North American plan, else these."""
_SEPARATOR = re.compile(r"[^\d()]+")
_SSN = re.compile(
    r"(?<![\w-])(?<!\d )(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}"
    r"(?![\w-]|\.\d| \d)",
    re.ASCII,
)
_IBAN = re.compile(r"\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,40}\b", re.ASCII)

_IBAN_REGISTRY = (
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 "
    "DE22 DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 "
    "GT28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 "
    "LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 "
    "PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 "
    "TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30"
)
_IBAN_LENGTHS = {entry[:2]: int(entry[2:]) for entry in _IBAN_REGISTRY.split()}
"""The IBAN countries and the length of their IBANs (the SWIFT IBAN registry)."""


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (payment card numbers do)."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """Whether a compact upper-case IBAN has its country's length and passes mod-97."""
    if _IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit():
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def find_emails(text: str) -> list[Found]:
    """E-mail addresses; the key is the address in lower case."""
    if "@" not in text:
        return []
    return [Found(m.start(), m.end(), m.group().lower()) for m in _EMAIL.finditer(text)]


def find_cards(text: str) -> list[Found]:
    """Payment card numbers (Luhn-checked); the key is the digits."""
    found: list[Found] = []
    for run in _DIGIT_RUN.finditer(text):
        offset = run.start()
        groups = [(m.start() + offset, m.end() + offset) for m in _GROUP.finditer(run.group())]
        found.extend(_cards_in(text, groups))
    return found


def _cards_in(text: str, groups: list[tuple[int, int]]) -> list[Found]:
    """The card numbers among consecutive digit groups: the longest first, left to right."""
    found: list[Found] = []
    first = 0
    while first < len(groups):
        best, digits = -1, ""
        for last in range(first, len(groups)):
            digits += text[groups[last][0] : groups[last][1]]
            if len(digits) > 19:
                break
            if len(digits) >= 13 and _card_shaped(groups[first : last + 1], digits):
                best = last
        if best < 0:
            first += 1
            continue
        start, end = groups[first][0], groups[best][1]
        found.append(Found(start, end, _digits(text[start:end])))
        first = best + 1
    return found


def _card_shaped(groups: list[tuple[int, int]], digits: str) -> bool:
    if digits[0] == "0" or not luhn_valid(digits):
        return False
    if len(groups) == 1:
        return True
    sizes = [end - start for start, end in groups]
    # 4-4-4-4, 4-6-5 (Amex), 4-6-4 (Diners), and a short last group as typed: 4-4-4-2
    return sizes[0] == 4 and all(3 <= size <= 6 for size in sizes[1:-1]) and 2 <= sizes[-1] <= 6


def find_phones(text: str) -> list[Found]:
    """Phone numbers, international and national; the key is the digits."""
    found: list[Found] = []
    for match in _PHONE_INTERNATIONAL.finditer(text):
        start, end = match.span()
        taken, last = 0, start
        for group in _GROUP.finditer(text, start, end):
            if taken + group.end() - group.start() > 15:
                end = last  # the numbers written after it are not part of it
                break
            taken, last = taken + group.end() - group.start(), group.end()
        if 8 <= taken <= 15:
            found.append(Found(start, end, _digits(text[start:end])))
    for match in _PHONE_NATIONAL.finditer(text):
        if _national(match.group()):
            found.append(Found(match.start(), match.end(), _digits(match.group())))
    for match in _PHONE_UNBROKEN.finditer(text):
        if _valid_somewhere(match.group()):
            found.append(Found(match.start(), match.end(), match.group()))
    return found


@functools.cache
def phonenumbers_module() -> Any | None:
    """Google's libphonenumber (the ``redact`` extra), imported once; None when not installed."""
    try:
        import phonenumbers  # 30 ms: only once a text has 10 or 11 digits in a row
    except ImportError:
        return None
    return phonenumbers


def _valid_somewhere(digits: str) -> bool:
    """Whether unbroken digits are a valid national number of one of `_REGIONS`."""
    phonenumbers = phonenumbers_module()
    if phonenumbers is None:
        return False  # without the extra, an unbroken national number is not told from an id
    regions = _REGIONS[1:] if digits[0] == "0" else _REGIONS[:1]
    for region in regions:
        try:
            number = phonenumbers.parse(digits, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number_for_region(number, region):
            return True
    return False


def _digits(text: str) -> str:
    return "".join(char for char in text if char.isdigit())


def _national(candidate: str) -> bool:
    """Whether a candidate in separated groups has the shape of a national phone number."""
    digits = _digits(candidate)
    rest = candidate[candidate.find(")") + 1 :].lstrip(" .-")
    if len(set(_SEPARATOR.findall(rest))) > 1:
        return False  # mixed separators: a date and a time, or numbers in a row
    if "(" in candidate:
        return 9 <= len(digits) <= 12
    if candidate[0] == "0":
        return 10 <= len(digits) <= 12
    sizes = [len(group) for group in _GROUP.findall(candidate)]
    if sizes[:1] == [1]:  # a leading 1, North America's country code
        sizes, digits = sizes[1:], digits[1:]
    return sizes == [3, 3, 4] and digits[0] in "23456789" and digits[3] in "23456789"


def find_ids(text: str) -> list[Found]:
    """US social security numbers and IBANs; the key is the compact upper-case value."""
    found = [Found(m.start(), m.end(), _digits(m.group())) for m in _SSN.finditer(text)]
    for match in _IBAN.finditer(text):
        start = match.start()
        length = _IBAN_LENGTHS.get(match.group()[:2].upper())
        if length is None:
            continue
        end, taken = start, 0
        while taken < length and end < match.end():
            taken += text[end] != " "
            end += 1
        iban = text[start:end].replace(" ", "").upper()
        boundary = end == match.end() or text[end] == " "
        if taken == length and boundary and iban_valid(iban):
            found.append(Found(start, end, iban))
    return found
