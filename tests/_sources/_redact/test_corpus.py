"""Redaction over a corpus of support, booking and shop messages: what it hides, what it keeps.

Each `Case` is a user's message (after the agent's, when the agent asked for the
value) holding one made-up value of a kind, in a format people write; the value
is found when none of its words or digit groups is left after redaction. `KEEP`
are messages with no personal data (times, dates, prices, postcodes, quantities,
order-free requests) that must come out unchanged. `test_recall_per_kind` and
`test_nothing_ordinary_is_touched` are the summary held in CI; a known miss is
an xfail with its reason.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from dataclasses import dataclass

import pytest
from google.adk.sessions import Session

from adk_eval._sources._redact._patterns import phonenumbers_module
from adk_eval._sources._redact._redactor import Redactor, redact_session
from adk_eval.testing import function_response_event, text_event, user_event

_MARKER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")
_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class Case:
    """A message holding `value` (of `kind`), and the agent's message before it."""

    kind: str
    text: str
    value: str
    agent: str = ""
    then: str = ""  # a second message by the user: the value split over the two
    limit: str | None = None  # a known miss (xfail, strict)
    extra: bool = False  # found with the ``redact`` extra only (libphonenumber)


CASES = [
    # e-mails, written and spoken
    Case("email", "you can send it to m.okafor@fastmail.com", "m.okafor@fastmail.com"),
    Case("email", "It's Tom.Hughes@Company.co.uk", "Tom.Hughes@Company.co.uk"),
    Case("email", "pierre dot dubois at gmail dot com", "pierre dot dubois at gmail dot com"),
    Case(
        "email",
        "my email is lena underscore ross at outlook dot com",
        "lena underscore ross at outlook dot com",
    ),
    Case("email", "rk 88 at yahoo dot co dot uk thanks", "rk 88 at yahoo dot co dot uk"),
    Case("email", "write to jo [at] acme [dot] org", "jo [at] acme [dot] org"),
    Case("email", "sam(at)brightside.io is best", "sam(at)brightside.io"),
    Case("email", "sure, nadia.k at hotmail.com", "nadia.k at hotmail.com", "What's your email?"),
    Case("email", "my email is sofia.reyes", "sofia.reyes@gmail.com", then="@gmail.com"),
    Case("email", "receipt to bo.li@ex-mail.de please", "bo.li@ex-mail.de"),
    # phone numbers, national and international
    Case("phone", "call me on (415) 555-2671", "(415) 555-2671"),
    Case("phone", "my cell: 312.555.0148", "312.555.0148"),
    Case("phone", "4155552671 is my number", "4155552671", extra=True),
    Case("phone", "+44 20 7946 0321, office hours", "+44 20 7946 0321"),
    Case("phone", "mobile 07700 900461", "07700 900461"),
    Case("phone", "reach me at +33 6 12 34 56 78", "+33 6 12 34 56 78"),
    Case("phone", "+49 (0)151 23456789 on WhatsApp", "+49 (0)151 23456789"),
    Case("phone", "It's +81 3-5555-1234", "+81 3-5555-1234", "A number we can reach you at?"),
    Case("phone", "+91 98765 43210", "+91 98765 43210"),
    Case("phone", "my number is 646 555", "646 555 0199", then="0199"),
    Case("phone", "1-800-555-0175 is the desk", "1-800-555-0175"),
    Case("phone", "text 0612345678 please", "0612345678", extra=True),
    # payment cards
    Case("card", "card number 4539 1488 0343 6467", "4539 1488 0343 6467"),
    Case("card", "use 5425-2334-3010-9903 exp 04/28", "5425-2334-3010-9903"),
    Case("card", "amex 3714 496353 98431", "3714 496353 98431"),
    Case("card", "diners 3056 9309 0259 04", "3056 9309 0259 04"),
    Case("card", "4916338506082832", "4916338506082832", "The card number, please?"),
    Case("card", "card is 4539 1488", "4539 1488 0343 6467", then="0343 6467"),
    # id numbers
    Case("id", "my SSN is 536-22-8841", "536-22-8841"),
    Case("id", "IBAN FR14 2004 1010 0505 0001 3M02 606", "FR14 2004 1010 0505 0001 3M02 606"),
    # account ids
    Case("account", "my account number is 3320918475", "3320918475"),
    Case("account", "user id: noah_kim_4412", "noah_kim_4412"),
    Case("account", "membership number 88120455", "88120455"),
    Case("account", "It's ACC-20448812.", "ACC-20448812", "What's the account number?"),
    Case("account", "frequent flyer number is UA88213390", "UA88213390"),
    Case("account", "customer id C-552901", "C-552901"),
    Case("account", "my user ID is noah_brandt_2207.", "noah_brandt_2207"),
    # order, booking and ticket ids
    Case("order", "order #W4410986 never arrived", "W4410986"),
    Case("order", "order 112-8834402-5590013 is late", "112-8834402-5590013"),
    Case("order", "my booking reference is K7XQ2P", "K7XQ2P"),
    Case("order", "confirmation number: HX882014", "HX882014"),
    Case("order", "Sure, it's 558201937.", "558201937", "Could you give me the order number?"),
    Case("order", "tracking 1Z999AA10123456784", "1Z999AA10123456784"),
    Case("order", "the reservation ABC123 needs to move", "ABC123"),
    Case("order", "ticket #48213 is still open", "48213"),
    # names
    Case("name", "Hi, my name is Ingrid Lindqvist.", "Ingrid Lindqvist"),
    Case("name", "This is Kwame Mensah calling about a refund", "Kwame Mensah"),
    Case("name", "Put it under Sarah J. Goldberg, please.", "Sarah J. Goldberg"),
    Case("name", "Please ask for Ms. Okonkwo at reception", "Okonkwo"),
    Case("name", "my wife Leila will pick it up", "Leila"),
    Case("name", "Thanks,\nDiego Castillo", "Diego Castillo"),
    Case("name", "Thanks,\nRuth Adeyemi Sent from my phone", "Ruth Adeyemi"),
    Case("name", "That's the one. Name: Omar Haddad", "Omar Haddad"),
    Case("name", "Could you call back later? Best, Zoe", "Zoe"),
    Case("name", "Carmen Ruiz.", "Carmen Ruiz", "Who is the booking for?"),
    Case("name", "It's Tanaka.", "Tanaka", "And your last name?"),
    Case("name", "first name Amara, last name Okafor", "Amara Okafor"),
    Case("name", "send $40 to Priya", "Priya"),
    Case("name", "call me Jonas", "Jonas"),
    Case("name", "the passenger is Mei Chen", "Mei Chen"),
    Case("name", "An appointment with Dr. Lee And Dr. Ng at 10 am?", "Lee Ng"),
    Case("name", "my name's de la Cruz", "de la Cruz", limit="a lower-case particle first"),
    Case("name", "Ana will bring the forms", "Ana", limit="a name nobody introduces needs a model"),
    # street addresses
    Case(
        "address",
        "ship it to 742 Evergreen Terrace, Springfield, IL 62704",
        "742 Evergreen Terrace, Springfield, IL 62704",
    ),
    Case("address", "I live at 1600 Pennsylvania Ave NW", "1600 Pennsylvania Ave NW"),
    Case("address", "pick me up at 55 W 42nd St Apt 4B", "55 W 42nd St Apt 4B"),
    Case(
        "address",
        "billing address 9 Old Mill Road, Leeds LS6 2AB",
        "9 Old Mill Road, Leeds LS6 2AB",
    ),
    Case("address", "deliver to 18 rue Lepic, 75018 Paris", "18 rue Lepic, 75018 Paris"),
    Case("address", "Hauptstraße 5, 10115 Berlin", "Hauptstraße 5, 10115 Berlin", "Your address?"),
    Case("address", "P.O. Box 4471", "P.O. Box 4471", "Where should we mail it?"),
    Case("address", "it's 221 baker street", "221 baker street"),
    Case("address", "3100 Main Street, Suite 200", "3100 Main Street, Suite 200"),
    Case(
        "address",
        "drop it at El Camino Real and Page Mill",
        "El Camino Real",
        limit="a street without a type or number",
    ),
    # dates of birth
    Case("birth_date", "my date of birth is 03/14/1985", "03/14/1985"),
    Case("birth_date", "DOB: 1979-11-02", "1979-11-02"),
    Case("birth_date", "I was born on July 4, 1990", "July 4, 1990"),
    Case("birth_date", "born the 2nd of May 1961", "the 2nd of May 1961"),
    Case("birth_date", "14.02.1972", "14.02.1972", "Can you confirm your date of birth?"),
    Case("birth_date", "It's 9 August 2001.", "9 August 2001", "And the passenger's birth date?"),
    Case("birth_date", "my birthday is Dec 3rd 1958", "Dec 3rd 1958"),
]

KEEP = [
    "Can I get a table for 4 at 7:30 pm on Friday?",
    "The flight leaves at 09:45 and lands at 13:10.",
    "I'd like to come on 12/24 or March 3rd, 2027.",
    "Check-in is 2026-05-14, check-out 2026-05-17.",
    "That'll be $14.50, or 12,99 € in Paris.",
    "A grande latte and two croissants for 8 dollars.",
    "The hotel is in the 94103 area, near SW1A 1AA.",
    "We need 3 rooms for 2 nights, 6 guests in total.",
    "Is there anything for under $1,200 a month?",
    "My order is a medium mocha with oat milk.",
    "The reservation is for 7 people at 8pm.",
    "Book it for Italian, somewhere downtown.",
    "this is Starbucks on Market, how can I help?",
    "Flight UA 1549 departs from gate 22.",
    "It's on the 3rd floor, room 512.",
    "The movie starts at 10:15 and runs 2 hours.",
    "I was born in the 80s, does that matter?",
    "Thanks, that's all I needed!",
    "The event is on Sunday the 14th at 4 in the afternoon.",
    "Order me 2 lattes and 1 espresso please.",
    "Apartments at 2 bedrooms, 1 bath, $2,400 per month.",
    "Version 3.2.1 shipped on 11/27/2026 at 10:30.",
    "What name should I use for the event?",
    "Set the alarm name to wake up, at 6:45.",
    "This is Vertigo and it starts at 9 pm.",
    "I'm OK with that.",
    "A table at Mr Chow's for 2.",
    "Play Miss You Much by Janet Jackson.",
    "Call it dentist visit on the calendar.",
    "The album This Is Acting came out in 2016.",
    "That's perfect.",
    "It's Union Square.",
    "it is Baseball.",
    "It is Jazz from 1998.",
    "Send 1790 bucks their way.",
    "Please confirm: Securing 1 room at the Hilton for 2 nights.",
    "It's a 20 minute drive, or 45 min drive at rush hour.",
    "That's all for today. Thanks! Bye!",
    "Move $300 from savings to Checking please.",
    "We walked 12 miles down the road.",
]

KEEP_KNOWN = [  # known false positives: (text, why)
    ("Would you like Dr. Strangelove or Vertigo?", "a film named like a doctor"),
    ("Look under Dermatology, please.", "a capitalized word after 'under' is taken for a name"),
]
KEEP_ANSWERS = [  # (the agent's question, an answer with no name in it)
    ("Shall I use the name on the card?", "That's fine."),
    ("Could I have your name, please?", "Sorry, why do you need it?"),
    ("What's your last name?", "I'd rather not say."),
]


def run(case: Case, redactor: Redactor) -> list[str]:
    """The user's messages of the case, redacted as a stored conversation is."""
    events = [text_event("agent", case.agent)] if case.agent else []
    events += [user_event(case.text), *([user_event(case.then)] if case.then else [])]
    session = Session(id="s", app_name="shop", user_id="u", events=events)
    clean, _ = redact_session(session, redactor)
    return [e.content.parts[0].text for e in clean.events if e.author == "user"]


def found(case: Case, redactor: Redactor) -> bool:
    """Whether none of the value's words or digit groups is left (beyond the message's own)."""
    left = Counter(_words(" ".join(_MARKER.sub(" ", text) for text in run(case, redactor))))
    context = Counter(_words(f"{case.text} {case.then}")) - Counter(_words(case.value))
    return all(left[word] <= context[word] for word in _words(case.value))


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


REDACTOR = Redactor(ner=None)
KNOWN = [case for case in CASES if case.limit]
HELD = {  # the recall each kind reaches on the corpus (known misses included)
    "email": 1.0,
    "phone": 1.0,
    "card": 1.0,
    "id": 1.0,
    "account": 1.0,
    "order": 1.0,
    "name": 16 / 18,
    "address": 9 / 10,
    "birth_date": 1.0,
}


EXTRA = phonenumbers_module() is not None
NEEDS_EXTRA = pytest.mark.skipif(
    not EXTRA, reason='needs the redact extra: pip install "adk-eval[redact]"'
)


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=[NEEDS_EXTRA] if c.extra else []) for c in CASES if not c.limit],
    ids=lambda c: f"{c.kind}:{c.text[:30]}",
)
def test_each_value_is_hidden(case):
    assert found(case, REDACTOR), run(case, REDACTOR)


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.xfail(reason=c.limit, strict=True)) for c in KNOWN],
    ids=lambda c: f"{c.kind}:{c.text[:30]}",
)
def test_known_misses(case):
    assert found(case, REDACTOR)


def test_recall_per_kind():
    """Each kind's recall on the corpus, held at the figures reached (with the extra, if here)."""
    reached = {}
    for kind in HELD:
        cases = [c for c in CASES if c.kind == kind and (EXTRA or not c.extra)]
        reached[kind] = sum(found(c, REDACTOR) for c in cases) / len(cases)
    assert all(reached[kind] >= HELD[kind] for kind in HELD), reached


@pytest.mark.parametrize("text", KEEP)
def test_nothing_ordinary_is_touched(text):
    for case in (Case("none", text, ""), Case("none", text, "", "What time works for you?")):
        assert run(case, REDACTOR) == [text]


@pytest.mark.parametrize(
    "text",
    [pytest.param(t, marks=pytest.mark.xfail(reason=why, strict=True)) for t, why in KEEP_KNOWN],
)
def test_known_false_positives(text):
    assert run(Case("none", text, ""), REDACTOR) == [text]


def test_a_value_in_a_dict_key_in_base64_and_in_a_field_named_for_it():
    encoded = base64.b64encode(b"order 558201937 for jo@acme.org").decode()
    answer = {"jo@acme.org": {"dob": "1979-11-02", "first_name": "Amara", "note": encoded}}
    session = Session(
        id="s",
        app_name="shop",
        user_id="u",
        events=[function_response_event("agent", "lookup", answer)],
    )
    clean, counts = redact_session(session, REDACTOR)
    response = clean.events[0].content.parts[0].function_response.response
    assert list(response) == ["<EMAIL_1>"]
    inner = response["<EMAIL_1>"]
    assert inner["dob"] == "<BIRTH_DATE_1>"
    assert inner["first_name"] == "<NAME_1>"
    assert base64.b64decode(inner["note"]).decode() == "order <ORDER_1> for <EMAIL_1>"
    assert counts.occurrences == {"email": 2, "order": 1, "name": 1, "birth_date": 1}


def test_a_split_value_gets_one_marker_in_both_messages():
    case = Case("card", "card is 4539 1488", "4539 1488 0343 6467", then="0343 6467")
    assert run(case, REDACTOR) == ["card is <CARD_1>", "<CARD_1>"]


@pytest.mark.parametrize(("agent", "text"), KEEP_ANSWERS)
def test_an_answer_to_a_name_question_that_is_no_name_is_kept(agent, text):
    assert run(Case("none", text, "", agent), REDACTOR) == [text]
