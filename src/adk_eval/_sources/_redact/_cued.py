"""Personal data known by what is said around it: names, dates of birth, account and order ids.

A name, a date of birth or an order number has no shape of its own: "Grace"
is a name after "my name is" and a word elsewhere, "03/14/1985" a date of
birth after "born" and an ordinary date elsewhere, "482913" an order number
after "order #" and a quantity elsewhere. So each detector here needs a cue,
found in one of three places:

* in the text itself, just before the value: "my name is Ana Silva", "this is
  Tom", "Ms. Kaur", "my wife Leila", "send $50 to Omar", a sign-off ("Thanks,
  Ana"); "DOB: 1985-03-14", "I was born on March 14, 1985"; "order number
  W2378156", "my user id is mia_li_3668", "booking reference K7XQ2P";
* in the message before (``before``): the agent asked "May I have your name?",
  "What's your date of birth?", "Could you give me your order number?", and the
  reply starts with the value ("Sure, it's Ana Silva.");
* in a field's name: the key a value is stored under (``first_name``, ``dob``,
  ``order_id``), handed over as ``before`` by the walk over dicts.

What they miss, by design: a name nobody introduces ("Ana will join us"
without "my wife"), a date of birth without a birth word near it, an id far
from its word ("order" then a sentence, then the number), and ids without a
digit (``KXQPTR``). A name model (`_ner`, optional) finds names without cues.
What they take that is not personal: a capitalized word after a cue that is
not a name ("this is Starbucks", "book it for Italian"); the common ones
(days, months, greetings, places' words) are left out by a stop list.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["DATE", "NAME_STOP", "asked", "find_birth_dates", "find_names", "find_references"]


class Cued(NamedTuple):
    """A value a cue points at: ``text[start:end]``, its kind and normalized form."""

    start: int
    end: int
    kind: str
    key: str


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"
DATE = (
    r"(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d\d)|\d{4}[/.-]\d{1,2}[/.-]\d{1,2}"
    rf"|{_MONTH}\s{_DAY}(?:,?\s{_YEAR})?|(?:the\s)?{_DAY}\s(?:of\s)?{_MONTH}(?:,?\s{_YEAR})?)"
    r"(?![\w/.-]\d)"
)
"""A calendar date: numeric (either order, any separator), or with the month's name."""

_TOKEN = r"(?:[A-Z]\.(?=\s)|[A-Z][a-z]*[A-Z][a-z]+|[A-Z][a-z]*(?:['\u2019-][A-Z]?[a-z]+)*)"
_PARTICLE = r"(?:van|von|de|da|del|der|di|le|la|bin|al|el|dos|du)"
_NAME = rf"{_TOKEN}(?:\s(?:{_PARTICLE}\s)?{_TOKEN}){{0,3}}"
_LOWER_NAME = r"[a-z][a-z'\u2019-]+(?:\s[a-z][a-z'\u2019-]+){0,2}"
_TITLE = r"(?:Mr|Mrs|Ms|Mx|Dr|Prof)\.?"  # not "Miss": "Miss Me More" is a song
_RELATIVE = (
    r"(?:husband|wife|son|daughter|partner|friend|mother|father|mom|mum|dad|brother|sister"
    r"|boss|colleague|fianc[eé]e?|boyfriend|girlfriend|kid|child|guest|grandma|grandpa"
    r"|grandmother|grandfather|aunt|uncle|cousin|niece|nephew|roommate|coworker)"
)
# "name" is a cue for a person's name after a person's word ("my name", "last name") or
# as a form's label; an event's, a song's or an alarm's name is not.
_STRONG = re.compile(
    r"(?:\b(?:(?:full|first|last|middle|maiden|family|given|sur)\s?name"
    r"|(?:my|his|her|their|our|your|passenger's|guest's|patient's)\s(?:full\s)?name)"
    r"(?:'s|\s(?:is|was|will be|would be)|:|\s-|,)?|(?:^|\n|(?<=[.!?]\s))\s*name\s?:)"
    r"\s*(?:(?:it's|its)\s+)?",
    re.IGNORECASE,
)
_SAID = re.compile(r"(?:is|was|be|:|'s|its)\s*$", re.IGNORECASE)  # a lower-case name may follow
# "this is", "it's", "I'm" are as often before a film, a place or "OK": a name after them
# must end its clause (`_ENDS`), and "This Is" in title case is a title, not a cue.
_PLAIN = re.compile(r"\b(?:this is|i'm|i am)\s+", re.IGNORECASE)
_ENDS = re.compile(r"\s*(?:$|[.,!?;:)\n-]|(?:calling|speaking|here|from|again)\b)", re.IGNORECASE)
# "It's Union Plaza." names a place as often as a person: after "it's", only "calling" will do.
_IT_IS = re.compile(r"\b(?:it's|it is)\s+", re.IGNORECASE)
_CALLING = re.compile(r"\s+(?:calling|speaking|here)\b", re.IGNORECASE)
_WEAK = re.compile(
    rf"(?:\b(?:call me|under(?: the name)?(?: of)?|ask for"
    rf"|passenger(?: is)?|(?:my|our|his|her) {_RELATIVE}(?:'s name is|,| is| named)?)"
    rf"|\b{_TITLE}|\b(?:send|sent|transfer|pay|paid|wire|give|owe)\b[^.?!\n]{{0,40}}?\bto"
    rf"|\bbook(?:ing)?(?: it| a table| a room| this| that| the table)? for"
    r")\s+",
    re.IGNORECASE,
)
_SIGN_OFF = re.compile(
    r"(?:^|\n|[.!?]\s)\s*(?:thanks|thank you|best|regards|best regards|kind regards|cheers"
    r"|sincerely|yours|love|warmly)\s*[,!.-]?\s*(?:\n\s*|\s)",
    re.IGNORECASE,
)
_HERE = re.compile(rf"(?:^|(?<=[.!?]\s))({_NAME}) here\b")
_NAME_STOP_WORDS = (
    "I Im I'm The A An This That These Those It Its There Here Yes No Not Just Sure Ok "
    "OK Okay Hi Hello Hey Thanks Thank Please Good Great Fine Looking Going Interested "
    "Also Actually Calling Trying Wondering Well So Oh Yeah Today Tomorrow Tonight "
    "Morning Evening Afternoon Night Monday Tuesday Wednesday Thursday Friday Saturday "
    "Sunday January February March April May June July August September October November "
    "December Mon Tue Wed Thu Fri Sat Sun Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov "
    "Dec Coffee Table Room Flight Order Account Booking Reservation Ticket Card Email "
    "Phone All Both Everyone Someone Anyone Nobody My Your Our His Her Their We You They "
    "What When Where Why How Who Which Can Could Would Should Will Do Does Did Is Are "
    "Was Be Uber Lyft Starbucks Amazon Google Visa Mastercard Amex Paypal PayPal Venmo "
    "Zelle American Italian Chinese Mexican Indian Thai French Japanese Korean Spanish "
    "Greek Vietnamese German English Economy Business First Premium Basic Regular Large "
    "Small Medium Grande Venti Tall Iced Hot Decaf Latte Mocha Espresso Americano "
    "Cappuccino Chai Tea New North South East West San Los Las Santa St Mount Lake Fort "
    "Saint Street Avenue Road Airport Hotel Restaurant Bank Center Park And Or Of Dr Mr Mrs Ms "
    "Sorry Excuse Pardon Wait Hmm Um Uh Nope Nah Certainly Definitely Perfect Awesome Cool Nice "
    "Bye Goodbye Checking Savings"
)
NAME_STOP = frozenset(_NAME_STOP_WORDS.split())
"""Capitalized words that follow a name's cue and are not names (checked per word)."""
_LOWER_STOP_WORDS = (
    "and or but please thanks thank you i im it its is was the a an my me for to of in "
    "on at with yes no not just sure ok okay yeah yep hi hello hey here there this that "
    "here's it's i'm what why how who when where which so well also now then name"
)
_LOWER_STOP = frozenset(_LOWER_STOP_WORDS.split())
_PREAMBLE = re.compile(
    r"^\W*(?:(?:sure|yes|yeah|yep|ok|okay|of course|certainly|absolutely|no problem|right"
    r"|hi|hello)\b[,.!]?\s*)*(?:(?:it's|it is|its|that's|that is|that would be|that'd be"
    r"|the name is|the name's|my name is|my (?:full |first |last )?name's|name's|this is|i'm"
    r"|i am|under|put it under|it should be under|for|they're|it was|mine is|my \w+ is)\s+)?",
    re.IGNORECASE,
)
_ASKS = {
    "name": re.compile(
        r"\b(?:(?:full|first|last|middle|given|family|sur|maiden|your|his|her|their|contact"
        r"|customer|passenger|passenger's|guest|guest's|patient|holder|recipient|receiver)"
        r"\s?name\b|(?:what|which) name\b|name (?:on|for|under) (?:the|your|this)\b"
        r"|who (?:is|'s) the "
        r"(?:booking|reservation|order|table|appointment|ticket) for|who (?:should|shall) i "
        r"(?:put|book|make))",
        re.IGNORECASE,
    ),
    "birth_date": re.compile(r"\b(?:date of birth|birth ?date|birthday|d\.?o\.?b\b|born)", re.I),
    "account": re.compile(
        r"\b(?:account|user ?id|customer (?:id|number)|member(?:ship)?|loyalty|frequent flyer"
        r"|policy)\b",
        re.IGNORECASE,
    ),
    "order": re.compile(
        r"\b(?:order|confirmation|reservation|booking|reference|tracking|ticket|invoice"
        r"|transaction|case|claim)\s?(?:number|id|code|no\b|#)|\bconfirmation\b",
        re.IGNORECASE,
    ),
}
_BIRTH = re.compile(
    r"\b(?:date of birth|birth ?date|birthday|d\.?o\.?b\.?|born(?: on)?)"
    r"(?:\s?(?:is|was|:|-|=|on|of)\s?)*\s*",  # 'the' stays: "the 2nd of May" is the date
    re.IGNORECASE,
)
_DATE = re.compile(DATE, re.IGNORECASE)
_REFERENCE_CUE = re.compile(
    r"\b(?:(?P<order>order|confirmation|reservation|booking|reference|ref|tracking|ticket"
    r"|invoice|transaction|pnr|record locator|locator|claim)"
    r"|(?P<account>account|acct|user|customer|membership|member|loyalty|policy|patient"
    r"|subscriber|frequent flyer))"
    r"(?:\s?(?:number|no\b\.?|num|#|id|code|ref(?:erence)?|is|was|:|-|=|it's|will be))*\s*",
    re.IGNORECASE,
)
_REFERENCE = re.compile(r"#?[A-Za-z0-9][A-Za-z0-9_/-]*[A-Za-z0-9]|#?\d{5,}")
_NOT_REFERENCE = re.compile(
    rf"^(?:\d{{1,2}}(?::\d\d)?(?:[ap]m)?|\d+(?:st|nd|rd|th)|{DATE}[\w-]*|\d{{1,3}}(?:[.,]\d+)+)$",
    re.IGNORECASE,
)
_NAME_AT = re.compile(_NAME + r"(?![\w'\u2019])")
_LOWER_NAME_AT = re.compile(_LOWER_NAME)


def asked(before: str) -> frozenset[str]:
    """The kinds of value `before` (the message before, or a field's name) asks for."""
    if not before:
        return frozenset()
    words = before.replace("_", " ")
    return frozenset(kind for kind, pattern in _ASKS.items() if pattern.search(words))


def find_names(text: str, before: str = "") -> list[Cued]:
    """Names after a cue in the text, a sign-off, or at the start of an answer to 'name?'."""
    found: list[Cued] = []
    for cue in _STRONG.finditer(text):
        found.extend(_name_at(text, cue.end(), lower=bool(_SAID.search(cue.group()))))
    for cue in _WEAK.finditer(text):
        found.extend(_name_at(text, cue.end(), lower=False))
    for cue in _PLAIN.finditer(text):
        if not cue.group().startswith("This Is"):
            found.extend(_ending(text, _name_at(text, cue.end(), lower=False)))
    for cue in _IT_IS.finditer(text):
        names = _name_at(text, cue.end(), lower=False)
        found.extend(name for name in names if _CALLING.match(text, name.end))
    for cue in _SIGN_OFF.finditer(text):
        # a signature: on its own line ("Thanks,\nAna Silva ...") or ending the message
        name = _name_at(text, cue.end(), lower=False)
        if name and ("\n" in cue.group().lstrip() or not text[name[0].end :].strip(" .!\n")):
            found.extend(name)
    for match in _HERE.finditer(text):
        found.extend(_name_at(text, match.start(1), lower=False))
    if "name" in asked(before):
        at = _PREAMBLE.match(text).end()  # type: ignore[union-attr]
        # a lower-case answer only when it is all the answer ("ana silva", not "that's fine")
        lower = len(text[at:].split()) <= 3 and "that" not in text[:at].lower()
        found.extend(_ending(text, _name_at(text, at, lower=lower)))
    return found


def _ending(text: str, names: list[Cued]) -> list[Cued]:
    """The names that end their clause ("It's Ana." yes, "It's Thriller and ..." no)."""
    return [name for name in names if _ENDS.match(text, name.end)]


def _name_at(text: str, at: int, *, lower: bool) -> list[Cued]:
    """The name starting at `at`, if one does (capitalized; lower case too if `lower`)."""
    match = _NAME_AT.match(text, at)
    if match is not None:
        words = match.group().split()
        while words and words[-1].rstrip(".") in NAME_STOP:
            words.pop()
        if not words or words[0].rstrip(".") in NAME_STOP or words[-1][-2:] in ("'s", "\u2019s"):
            return []  # a stop word, or a possessive: "Mom's Cafe" is a place
        end = at + len(" ".join(words))
        return [Cued(at, end, "name", " ".join(words).lower())]
    if not lower:
        return []
    match = _LOWER_NAME_AT.match(text, at)
    if match is None:
        return []
    words = match.group().split()
    kept: list[str] = []
    for word in words:
        if word in _LOWER_STOP:
            break
        kept.append(word)
    if not kept:
        return []
    end = at + len(" ".join(kept))
    if end < len(text) and text[end].isalnum():
        return []
    return [Cued(at, end, "name", " ".join(kept))]


def find_birth_dates(text: str, before: str = "") -> list[Cued]:
    """Dates after a birth word ('born', 'DOB'), or answering a question about one."""
    found = []
    starts = [cue.end() for cue in _BIRTH.finditer(text)]
    if "birth_date" in asked(before):
        starts.append(_PREAMBLE.match(text).end())  # type: ignore[union-attr]
    for at in starts:
        date = _DATE.match(text, at)
        if date is not None:
            found.append(Cued(date.start(), date.end(), "birth_date", date.group().lower()))
    return found


def find_references(text: str, before: str = "") -> list[Cued]:
    """Account and order ids after their word ('order #', 'user id'), or answering for one."""
    found = []
    for cue in _REFERENCE_CUE.finditer(text):
        kind = "order" if cue.group("order") else "account"
        found.extend(_reference_at(text, cue.end(), kind))
    wanted = asked(before)
    for kind in ("account", "order"):
        if kind in wanted:
            found.extend(_reference_at(text, _PREAMBLE.match(text).end(), kind))  # type: ignore[union-attr]
    return found


def _reference_at(text: str, at: int, kind: str) -> list[Cued]:
    """An id starting at `at`: 5 characters or more, a digit among them, no date or time."""
    match = _REFERENCE.match(text, at)
    if match is None:
        return []
    value = match.group()
    bare = value.lstrip("#")
    alnum = sum(char.isalnum() for char in bare)
    if alnum < 5 or not any(char.isdigit() for char in bare) or _NOT_REFERENCE.match(bare):
        return []
    if bare.isdigit() and len(bare) < 5:
        return []
    return [Cued(match.start(), match.end(), kind, bare.upper())]
