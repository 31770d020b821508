"""Made-up personal data in realistic formats and phrasings, drawn from a seed.

`redaction_recall.py` puts these into real user turns and counts what redaction
replaces. Each kind has its values (formats people write: international phone
numbers, cards grouped 4-4-4-2, spoken e-mails, dates of birth in several orders,
ids near "order" or "account") and its phrasings: a sentence added to a real
turn, or an agent's question answered in the next message (the value's cue is
in the other message), or the value split over two messages. Only the seed is
committed; the texts are drawn again each run.

The lists were written before the rules that find these values, from how people
write in support chats, booking dialogues and forms, not from the rules.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

_FIRST_WORDS = (
    "Pierre Aisha Jamal Mei Olga Carlos Priya Tom Sarah Kwame Yuki Fatima Liam Noah Emma "
    "Sofia Diego Hannah Omar Chloe Raj Ingrid Mateo Zoe Dmitri Amara Lucas Grace Hiroshi "
    "Leila Ethan Nadia Samuel Ana Kofi Isabelle Wei Jonas Maya Arjun Elena Tariq Ruth "
    "Bjorn Camille Daniel Keisha Luis Margaret Oscar"
)
FIRST = _FIRST_WORDS.split()
_LAST_WORDS = (
    "Dubois Khan Washington Chen Petrova Mendoza Sharma Baker Goldberg Mensah Tanaka "
    "Haddad O'Brien Schmidt Rossi Garcia Novak Nguyen Kowalski Okafor Lindqvist "
    "Fernandes Murphy Yamamoto Ali Thompson Rodriguez Kim Adeyemi Johansson Moreau Patel "
    "Silva MacDonald Cohen Hughes Ivanova Brennan Castillo Park Fischer Anderson Mwangi "
    "Hoffman Santos Kaur Fitzgerald Lee Ortiz Whitaker"
)
LAST = _LAST_WORDS.split()
_STREETS_WORDS = (
    "Main|Oak|Maple|Elm|Washington|Lincoln|Park|Cedar|Pine|Lake|Hill|Sunset|Mission|"
    "Church|Highland|Jefferson|Madison|Franklin|Valencia|Broadway|Market|Chestnut|Walnut|"
    "Spring|Willow|Martin Luther King Jr|Old Mill|Forest Hills|Green Valley|5th|42nd|1st|"
    "Third|Riverside|Bayview|Wood|Ridge|College|Mill Creek|Lakeshore"
)
STREETS = _STREETS_WORDS.split("|")
_SUFFIXES_WORDS = (
    "Street St St. Avenue Ave Ave. Road Rd Boulevard Blvd Lane Ln Drive Dr Court Ct Way "
    "Place Pl Terrace Circle Parkway Pkwy Highway Trail"
)
SUFFIXES = _SUFFIXES_WORDS.split()
CITIES = (
    ("Springfield", "IL"),
    ("Austin", "TX"),
    ("Portland", "OR"),
    ("San Jose", "CA"),
    ("Denver", "CO"),
    ("Brooklyn", "NY"),
    ("Seattle", "WA"),
    ("Atlanta", "GA"),
    ("Columbus", "OH"),
    ("Miami", "FL"),
)
_MONTHS_WORDS = (
    "January February March April May June July August September October November December"
)
MONTHS = _MONTHS_WORDS.split()
DOMAINS = ("gmail", "yahoo", "outlook", "hotmail", "icloud", "proton", "example", "acme-mail")
TLDS = ("com", "net", "org", "co.uk", "fr", "de", "io")
US_AREAS = ("415", "212", "312", "617", "646", "713", "206", "305", "404", "503", "720", "818")


@dataclass(frozen=True)
class Insertion:
    """One value put into a real turn: the kind, the value, and the messages around it.

    Attributes:
        kind: The kind of the value (``name``, ``phone``, ...).
        value: The value as written (every part of it must be redacted).
        form: The phrasing: ``sentence`` (one message), ``answer`` (the agent
            asked for it in the message before), ``split`` (over two messages).
        agent: The agent's message before the user's ('' to keep the real one).
        user: The user's message(s) holding the value, the real turn included.
        context: The user's words without the value (what may stay).
    """

    kind: str
    value: str
    form: str
    agent: str
    user: tuple[str, ...]
    context: str


def _name(rng: random.Random) -> tuple[str, str, str]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    middle = rng.random() < 0.15
    full = f"{first} {rng.choice('ABCDEJKLMRST')}. {last}" if middle else f"{first} {last}"
    return first, last, full


def name(rng: random.Random) -> tuple[str, str, str]:
    """A name, a phrasing with a placeholder, and the agent's question ('' for none)."""
    first, last, full = _name(rng)
    title = rng.choice(("Mr.", "Ms.", "Mrs.", "Dr.", "Mr", "Ms"))
    choices: list[tuple[str, str, str]] = [
        (full, "My name is {v}.", ""),
        (full, "This is {v}.", ""),
        (full, "Hi, I'm {v}.", ""),
        (first, "Hi, I'm {v}.", ""),
        (full, "The reservation is under {v}.", ""),
        (last, "It should be under the name {v}.", ""),
        (full, "Name: {v}", ""),
        (full, "{v} here.", ""),
        (full, "Please put it under {v}.", ""),
        (last, "Please ask for " + title + " {v} at the front desk.", ""),
        (full, "Thanks,\n{v}", ""),
        (first, "Best, {v}", ""),
        (full, "Could you book it for {v}?", ""),
        (f"{first}", "My husband {v} will join us.", ""),
        (first, "You can call me {v}.", ""),
        (f"{first} {last}", "First name {first}, last name {last}.", ""),
        (full, "It's {v} calling about my booking.", ""),
        (full, "The passenger is {v}.", ""),
        (first, "I'd like to send $50 to {v}.", ""),
        (full, "{v}", "May I have your full name, please?"),
        (full, "Sure, it's {v}.", "What name should I put the reservation under?"),
        (full, "{v}.", "Who is the booking for?"),
        (last, "{v}", "And your last name?"),
    ]
    value, phrase, agent = rng.choice(choices)
    return value, phrase, agent


def phone(rng: random.Random) -> tuple[str, str, str]:
    """A phone number in one of the formats people write, and a phrasing."""
    area = rng.choice(US_AREAS)
    ex, line = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(0, 9)}", rng.randint(1000, 9999)
    forms = [
        f"({area}) {ex}-{line}",
        f"{area}-{ex}-{line}",
        f"{area}.{ex}.{line}",
        f"{area}{ex}{line}",
        f"+1 {area} {ex} {line}",
        f"1-{area}-{ex}-{line}",
        f"{area} {ex} {line}",
        f"+1 ({area}) {ex}-{line}",
        f"+44 20 7{rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        f"020 7{rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        f"07{rng.randint(400, 999)} {rng.randint(100000, 999999)}",
        f"+44 7{rng.randint(400, 999)} {rng.randint(100000, 999999)}",
        f"+33 6 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} "
        f"{rng.randint(10, 99)}",
        f"06 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} "
        f"{rng.randint(10, 99)}",
        f"+49 30 {rng.randint(1000000, 9999999)}",
        f"+49 (0)151 {rng.randint(10000000, 99999999)}",
        f"+91 98{rng.randint(100, 999)} {rng.randint(10000, 99999)}",
        f"+81 3-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"+61 4{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}",
        f"+86 138 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        f"+52 55 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
    ]
    phrases = [
        ("My number is {v}.", ""),
        ("Call me at {v}.", ""),
        ("You can text me on {v}", ""),
        ("Phone: {v}", ""),
        ("my cell is {v} if you need it", ""),
        ("Reach me at {v} after 5.", ""),
        ("{v}", "What's the best number to reach you?"),
        ("It's {v}.", "Can I get a phone number for the reservation?"),
    ]
    phrase, agent = rng.choice(phrases)
    return rng.choice(forms), phrase, agent


def _luhn_digit(digits: str) -> str:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return str(-total % 10)


def card(rng: random.Random) -> tuple[str, str, str]:
    """A Luhn-valid card number grouped as people type it, and a phrasing."""
    prefix, length, groups = rng.choice(
        [
            ("4", 16, (4, 4, 4, 4)),
            ("5", 16, (4, 4, 4, 4)),
            ("6011", 16, (4, 4, 4, 4)),
            ("37", 15, (4, 6, 5)),
            ("36", 14, (4, 6, 4)),
            ("36", 14, (4, 4, 4, 2)),
            ("4", 16, (16,)),
            ("5", 16, (4, 4, 4, 4)),
        ]
    )
    body = prefix + "".join(str(rng.randint(0, 9)) for _ in range(length - len(prefix) - 1))
    digits = body + _luhn_digit(body)
    parts, at = [], 0
    for size in groups:
        parts.append(digits[at : at + size])
        at += size
    value = rng.choice((" ", " ", "-")).join(parts)
    phrases = [
        ("My card number is {v}.", ""),
        ("Charge it to my visa {v}, exp 08/27.", ""),
        ("card: {v}", ""),
        ("Use {v} please", ""),
        ("{v}", "What's the card number?"),
        ("It's {v}, CVV 123.", "Please give me the card details."),
    ]
    phrase, agent = rng.choice(phrases)
    return value, phrase, agent


def email(rng: random.Random) -> tuple[str, str, str]:
    """An e-mail address, written or spoken, and a phrasing."""
    first, last = rng.choice(FIRST).lower(), rng.choice(LAST).lower().replace("'", "")
    domain, tld = rng.choice(DOMAINS), rng.choice(TLDS)
    number = str(rng.randint(1, 99))
    spoken_tld = tld.replace(".", " dot ")
    forms = [
        f"{first}.{last}@{domain}.{tld}",
        f"{first[0]}{last}{number}@{domain}.{tld}",
        f"{first.title()}.{last.title()}@{domain.title()}.{tld}",
        f"{first} dot {last} at {domain} dot {spoken_tld}",
        f"{first}{last} at {domain} dot {spoken_tld}",
        f"{first} underscore {last} at {domain} dot {spoken_tld}",
        f"{first[0]} dot {last} {number} at {domain} dot {spoken_tld}",
        f"{first}.{last} at {domain}.{tld}",
        f"{first} [at] {domain} [dot] {tld}",
        f"{first}(at){domain}.{tld}",
        f"{first}{number} at {domain} dot {spoken_tld}",
    ]
    phrases = [
        ("My email is {v}.", ""),
        ("Email me at {v}", ""),
        ("send the receipt to {v} please", ""),
        ("you can reach me at {v}", ""),
        ("{v}", "What's your email address?"),
        ("It's {v}", "Which email should we send the confirmation to?"),
    ]
    phrase, agent = rng.choice(phrases)
    return rng.choice(forms), phrase, agent


def address(rng: random.Random) -> tuple[str, str, str]:
    """A street address (mostly US, some UK, French and German), and a phrasing."""
    number = str(rng.choice((rng.randint(1, 99), rng.randint(100, 999), rng.randint(1000, 9999))))
    street = f"{number} {rng.choice(STREETS)} {rng.choice(SUFFIXES)}"
    unit = rng.choice(("", "", "", ", Apt 4B", " Apt. 12", ", Suite 200", " #7", ", Unit 3"))
    city, state = rng.choice(CITIES)
    zip_code = f"{rng.randint(10000, 99999)}"
    forms = [
        street,
        street + unit,
        f"{street}{unit}, {city}, {state} {zip_code}",
        f"{street}, {city} {state}",
        f"{number} {rng.choice(('N', 'S', 'E', 'W', 'North', 'West'))} "
        f"{rng.choice(STREETS)} {rng.choice(SUFFIXES)}",
        f"{rng.randint(1, 300)} {rng.choice(('Baker', 'High', 'Church', 'Station'))} "
        f"{rng.choice(('Street', 'Road', 'Lane'))}, London "
        f"{rng.choice(('NW1', 'SE15', 'E2', 'N7'))} {rng.randint(1, 9)}XE",
        f"{rng.randint(1, 80)} rue {rng.choice(('de Rivoli', 'Lepic', 'du Bac'))}, "
        f"750{rng.randint(10, 20)} Paris",
        f"{rng.choice(('Hauptstraße', 'Bergstrasse', 'Lindenweg'))} {rng.randint(1, 120)}, "
        f"{rng.randint(10000, 99999)} Berlin",
        f"P.O. Box {rng.randint(10, 9999)}",
    ]
    phrases = [
        ("I live at {v}.", ""),
        ("My address is {v}", ""),
        ("Please ship it to {v}.", ""),
        ("Can you deliver to {v}?", ""),
        ("Pick me up at {v}", ""),
        ("billing address: {v}", ""),
        ("{v}", "What's the delivery address?"),
        ("It's {v}.", "Where should the driver pick you up?"),
    ]
    phrase, agent = rng.choice(phrases)
    return rng.choice(forms), phrase, agent


def birth_date(rng: random.Random) -> tuple[str, str, str]:
    """A date of birth in one of several orders and spellings, and a phrasing."""
    year, month, day = rng.randint(1935, 2008), rng.randint(1, 12), rng.randint(1, 28)
    name = MONTHS[month - 1]
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(day, "th")
    forms = [
        f"{month:02}/{day:02}/{year}",
        f"{month}/{day}/{year % 100:02}",
        f"{day:02}/{month:02}/{year}",
        f"{year}-{month:02}-{day:02}",
        f"{name} {day}, {year}",
        f"{day} {name} {year}",
        f"{name[:3]} {day}{suffix} {year}",
        f"the {day}{suffix} of {name}, {year}",
        f"{day:02}.{month:02}.{year}",
        f"{name} {day}{suffix}, {year}",
    ]
    phrases = [
        ("My date of birth is {v}.", ""),
        ("DOB: {v}", ""),
        ("I was born on {v}.", ""),
        ("born {v}", ""),
        ("my birthday is {v}", ""),
        ("His date of birth is {v}.", ""),
        ("birth date {v}", ""),
        ("{v}", "Can you confirm your date of birth?"),
        ("It's {v}.", "And the passenger's date of birth?"),
    ]
    phrase, agent = rng.choice(phrases)
    return rng.choice(forms), phrase, agent


def account(rng: random.Random) -> tuple[str, str, str]:
    """An account, order, booking or user id in a common shape, near its word."""
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    digits = lambda n: "".join(str(rng.randint(0, 9)) for _ in range(n))  # noqa: E731
    code = "".join(rng.choice(letters + "0123456789") for _ in range(6))
    if not any(c.isdigit() for c in code):
        code = code[:5] + str(rng.randint(0, 9))
    user = f"{rng.choice(FIRST).lower()}_{rng.choice(LAST).lower().replace(chr(39), '')}"
    forms = [
        ("order", digits(9)),
        ("order", f"#W{digits(7)}"),
        ("order", f"{digits(3)}-{digits(7)}-{digits(7)}"),
        ("order", f"ORD-{rng.randint(2019, 2026)}-{digits(5)}"),
        ("account", digits(10)),
        ("account", f"ACC-{digits(8)}"),
        ("account", f"{digits(4)}-{digits(4)}-{digits(2)}"),
        ("confirmation", code),
        ("confirmation", f"{rng.choice(letters)}{rng.choice(letters)}{digits(6)}"),
        ("user", f"{user}_{digits(4)}"),
        ("tracking", f"1Z{digits(3)}{rng.choice(letters)}{rng.choice(letters)}{digits(10)}"),
        ("member", digits(8)),
    ]
    word, value = rng.choice(forms)
    phrases = {
        "order": [
            ("My order number is {v}.", ""),
            ("order {v} hasn't arrived yet", ""),
            ("I want to return order {v}", ""),
            ("{v}", "Could you give me your order number?"),
        ],
        "account": [
            ("My account number is {v}.", ""),
            ("account: {v}", ""),
            ("It's {v}.", "What's the account number?"),
        ],
        "confirmation": [
            ("My confirmation code is {v}.", ""),
            ("the reservation {v} needs to change", ""),
            ("booking reference {v}", ""),
            ("{v}", "What's your confirmation number?"),
        ],
        "user": [
            ("My user ID is {v}.", ""),
            ("user id: {v}", ""),
            ("Sure, it's {v}.", "Could you please provide your user ID?"),
        ],
        "tracking": [("The tracking number is {v}.", ""), ("tracking {v}", "")],
        "member": [
            ("My membership number is {v}.", ""),
            ("member ID {v}", ""),
            ("{v}", "Do you have a loyalty number?"),
        ],
    }[word]
    phrase, agent = rng.choice(phrases)
    return value, phrase, agent


KINDS: dict[str, Callable[[random.Random], tuple[str, str, str]]] = {
    "email": email,
    "phone": phone,
    "card": card,
    "account": account,
    "name": name,
    "address": address,
    "birth_date": birth_date,
}
"""Each kind's generator: ``rng -> (value, phrasing with {v}, agent's question or '')``."""

SPLITTABLE = ("card", "phone", "email")
"""Kinds whose values people sometimes send over two messages."""


def draw(kind: str, rng: random.Random, real_turn: str) -> Insertion:
    """One insertion of `kind` around `real_turn` (a user turn from a dataset)."""
    value, phrase, agent = KINDS[kind](rng)
    if kind in SPLITTABLE and rng.random() < 0.1:
        cut = _split_point(value, rng)
        first, second = value[:cut].rstrip(), value[cut:].lstrip()
        return Insertion(kind, value, "split", "", (f"{real_turn} {first}", second), real_turn)
    words = value.split()
    text = phrase.replace("{v}", value).replace("{first}", words[0]).replace("{last}", words[-1])
    context = re.sub(r"\{(?:v|first|last)\}", " ", phrase)
    if agent:
        return Insertion(kind, value, "answer", agent, (text,), context)
    together = f"{text} {real_turn}" if rng.random() < 0.5 else f"{real_turn} {text}"
    return Insertion(kind, value, "sentence", "", (together,), f"{context} {real_turn}")


def _split_point(value: str, rng: random.Random) -> int:
    """Where a value is cut in two messages: at a space, or in the middle of an e-mail."""
    spaces = [i for i, c in enumerate(value) if c in " -"]
    if spaces:
        return rng.choice(spaces)
    at = value.find("@")
    return at if at > 0 else len(value) // 2
