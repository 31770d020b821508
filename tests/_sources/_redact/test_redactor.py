"""Redaction of production sessions: what each detector finds and leaves, markers, counts."""

from __future__ import annotations

import re

import pytest
from google.adk.events import Event, EventActions
from google.adk.sessions import Session
from google.genai import types

from adk_eval._errors import EvalSetupError
from adk_eval._sources._redact._patterns import iban_valid, luhn_valid
from adk_eval._sources._redact._redactor import (
    MarkerTable,
    RedactionCounts,
    Redactor,
    redact_session,
    redact_text,
)
from adk_eval.testing import function_response_event, text_event, tool_call_event, user_event


def redacted(text: str, redactor: Redactor | None = None) -> str:
    return redact_text(text, redactor or Redactor(), MarkerTable())


def session_of(*events: Event, state: dict[str, object] | None = None) -> Session:
    return Session(id="s-1", app_name="shop", user_id="u-1", events=list(events), state=state or {})


POSITIVES = [
    ("mail me at Jane.Doe@Example.co.uk today", "mail me at <EMAIL_1> today"),
    ("a+tag@mail.example.com.", "<EMAIL_1>."),
    ("call +44 20 7946 0958 now", "call <PHONE_1> now"),
    ("call +1 (555) 234-5678", "call <PHONE_1>"),
    ("whatsapp +4915112345678", "whatsapp <PHONE_1>"),
    ("+44 20 7946 0958 2026 more", "<PHONE_1> 2026 more"),  # 15 digits at most
    ("+44 (0)20 7946 0958", "<PHONE_1>"),
    ("(555) 234-5678 is my cell", "<PHONE_1> is my cell"),
    ("555-234-5678 or 555.234.5678", "<PHONE_1> or <PHONE_1>"),
    ("toll free 1-800-555-0199", "toll free <PHONE_1>"),
    ("office 020 7946 0958, mobile 07700 900123", "office <PHONE_1>, mobile <PHONE_2>"),
    ("Berlin 030 1234567, Paris 01 23 45 67 89", "Berlin <PHONE_1>, Paris <PHONE_2>"),
    ("card 4111 1111 1111 1111 exp 12/27", "card <CARD_1> exp 12/27"),
    ("4111-1111-1111-1111", "<CARD_1>"),
    ("number 4242424242424242.", "number <CARD_1>."),
    ("amex 3782 822463 10005", "amex <CARD_1>"),
    ("qty 3 4111111111111111", "qty 3 <CARD_1>"),
    ("ssn 123-45-6789", "ssn <ID_1>"),
    ("ssn 123 45 6789.", "ssn <ID_1>."),
    ("123-45-6789 = 123 45 6789", "<ID_1> = <ID_1>"),
    ("write to user@[192.168.0.1] please", "write to <EMAIL_1> please"),
    ("USER@[192.168.0.1] or user@[192.168.0.1]", "<EMAIL_1> or <EMAIL_1>"),
    ("ops@[IPv6:2001:db8::1]", "<EMAIL_1>"),
    ("IBAN DE89 3704 0044 0532 0130 00 please", "IBAN <ID_1> please"),
    ("iban gb82west12345698765432", "iban <ID_1>"),
    ("order A-17, ticket #48213", "order A-17, ticket #<ORDER_1>"),  # a ticket's number
]

NEGATIVES = [
    "the parcel arrives on 2026-11-27",
    "dates 27/11/2026, 11.27.2026 and 01.02.2026 10:30",
    "meet at 10:30 or 09:15:00",
    "it costs $1,234.56 or 1.234.567,89 EUR",
    "order A-17, ref 2026-11-27-0042",
    "version 1.2.3 and 10.0.2.15",
    "1234567812345678 is not a card (Luhn)",
    "0000 0000 0000 0000 starts with 0",
    "DE89 3704 0044 0532 0130 01 has a bad checksum",
    "XX89370400440532013000 is no country",
    "write to user@ or @home or a@b",
    "ssn-like 000-12-3456 and 666-12-3456 were never issued",
    "ssn-like 000 12 3456, 900 12 3456 and 123 00 4567",
    "mixed separators 123-45 6789 and 123 45-6789",
    "a longer run 1 123 45 6789 and 123 45 6789 12",
    "no address user@[300.1.2.3], user@[10.0.0] or [192.168.0.1]",
    "local 555-0123 and 123-456-7890",
    "a 20-digit number 41111111111111111111",
    "build 20261127103000 and sha 3f2a9b1c4d5e6f708192a3b4c5d6e7f8",
    "quantities 1 234 567 890 and 12 345",
]


@pytest.mark.parametrize(("text", "expected"), POSITIVES)
def test_finds_each_kind(text, expected):
    assert redacted(text) == expected


@pytest.mark.parametrize("text", NEGATIVES)
def test_leaves_what_is_not_personal_data(text):
    assert redacted(text) == text


def test_luhn_and_iban_checks():
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert iban_valid("GB82WEST12345698765432")
    assert not iban_valid("GB82WEST12345698765433")
    assert not iban_valid("GB82WEST1234569876543")  # one character short for GB


def test_the_same_value_gets_the_same_marker_however_written():
    text = (
        "Jane@Example.com and jane@example.com; 4111 1111 1111 1111 = 4111-1111-1111-1111; "
        "(555) 234-5678 = 555-234-5678; bob@example.com; 5555 5555 5555 4444"
    )
    assert redacted(text) == (
        "<EMAIL_1> and <EMAIL_1>; <CARD_1> = <CARD_1>; <PHONE_1> = <PHONE_1>; <EMAIL_2>; <CARD_2>"
    )


def test_kinds_choose_the_detectors():
    text = "jane@example.com, 4111 1111 1111 1111, +44 20 7946 0958, 123-45-6789"
    assert redacted(text, Redactor(kinds=("card",))) == (
        "jane@example.com, <CARD_1>, +44 20 7946 0958, 123-45-6789"
    )
    assert redacted(text, Redactor(kinds="email")).startswith("<EMAIL_1>, 4111")


def conversation() -> Session:
    return session_of(
        user_event("I'm jane@example.com, card 4111 1111 1111 1111"),
        tool_call_event(
            "shop",
            "charge",
            {
                "customer": {"email": "JANE@example.com", "phones": ["+44 20 7946 0958", 7]},
                "card": "4111111111111111",
                "amount": 1234.56,
                "jane@example.com": True,
            },
            call_id="call-jane@example.com",
        ),
        function_response_event(
            "shop",
            "charge",
            {"receipt": {"sent_to": "jane@example.com", "lines": [["card", "4111111111111111"]]}},
            call_id="call-jane@example.com",
            state_delta={"contact": {"email": "jane@example.com"}, "count": 1},
        ),
        Event(
            author="shop",
            invocation_id="inv-1",
            error_message="gateway refused 4111 1111 1111 1111",
            actions=EventActions(state_delta={"last_phone": "+44 20 7946 0958"}),
        ),
        text_event("shop", "Done, the receipt went to jane@example.com."),
        state={
            "contact": {"email": "jane@example.com"},
            "visits": 3,
            "notes": ["call 555-234-5678"],
        },
    )


def test_a_session_is_redacted_everywhere_a_reader_could_see_it():
    clean, _ = redact_session(conversation(), Redactor())
    user, call, response, error, reply = clean.events
    assert user.content.parts[0].text == "I'm <EMAIL_1>, card <CARD_1>"
    args = call.content.parts[0].function_call.args
    assert args == {
        "customer": {"email": "<EMAIL_1>", "phones": ["<PHONE_1>", 7]},
        "card": "<CARD_1>",
        "amount": 1234.56,
        "<EMAIL_1>": True,  # keys too
    }
    assert response.content.parts[0].function_response.response == {
        "receipt": {"sent_to": "<EMAIL_1>", "lines": [["card", "<CARD_1>"]]}
    }
    assert response.actions.state_delta == {"contact": {"email": "<EMAIL_1>"}, "count": 1}
    assert error.error_message == "gateway refused <CARD_1>"
    assert error.actions.state_delta == {"last_phone": "<PHONE_1>"}
    assert reply.content.parts[0].text == "Done, the receipt went to <EMAIL_1>."
    assert clean.state == {
        "contact": {"email": "<EMAIL_1>"},
        "visits": 3,
        "notes": ["call <PHONE_2>"],
    }


def test_ids_and_authors_are_kept():
    session = conversation()
    clean, _ = redact_session(session, Redactor())
    for before, after in zip(session.events, clean.events, strict=True):
        assert (after.id, after.invocation_id, after.author) == (
            before.id,
            before.invocation_id,
            before.author,
        )
    call = clean.events[1].content.parts[0].function_call
    assert call.id == "call-jane@example.com"
    assert clean.events[2].content.parts[0].function_response.id == "call-jane@example.com"
    assert (clean.id, clean.app_name, clean.user_id) == ("s-1", "shop", "u-1")


def test_the_input_session_is_untouched():
    session = conversation()
    before = session.model_dump()
    clean, _ = redact_session(session, Redactor())
    assert session.model_dump() == before
    assert clean is not session
    assert clean.model_dump() != before


def test_each_conversation_numbers_its_markers_from_one():
    first = session_of(user_event("a@example.com then b@example.com"))
    second = session_of(user_event("b@example.com, and a@example.com"))
    redactor = Redactor()
    assert redact_session(first, redactor)[0].events[0].content.parts[0].text == (
        "<EMAIL_1> then <EMAIL_2>"
    )
    assert redact_session(second, redactor)[0].events[0].content.parts[0].text == (
        "<EMAIL_1>, and <EMAIL_2>"
    )


def test_thoughts_code_transcriptions_and_compaction_are_redacted():
    compacted = types.Content(role="model", parts=[types.Part(text="user jane@example.com")])
    event = Event(
        author="shop",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="thinking about jane@example.com", thought=True),
                types.Part(executable_code=types.ExecutableCode(code="send('jane@example.com')")),
                types.Part(
                    code_execution_result=types.CodeExecutionResult(
                        output="sent to +44 20 7946 0958"
                    )
                ),
            ],
        ),
        input_transcription=types.Transcription(text="my number is +44 20 7946 0958"),
        custom_metadata={"caller": "jane@example.com"},
        actions=EventActions(
            compaction={
                "start_timestamp": 1.0,
                "end_timestamp": 2.0,
                "compacted_content": compacted,
            }
        ),
    )
    clean, _ = redact_session(session_of(event), Redactor())
    [thought, code, result] = clean.events[0].content.parts
    assert (thought.text, thought.thought) == ("thinking about <EMAIL_1>", True)
    assert code.executable_code.code == "send('<EMAIL_1>')"
    assert result.code_execution_result.output == "sent to <PHONE_1>"
    assert clean.events[0].input_transcription.text == "my number is <PHONE_1>"
    assert clean.events[0].custom_metadata == {"caller": "<EMAIL_1>"}
    assert clean.events[0].actions.compaction.compacted_content.parts[0].text == "user <EMAIL_1>"


def test_extra_regexes_have_their_own_markers():
    redactor = Redactor(extra=[("account", r"ACC-\d{6}"), ("member_id", re.compile(r"M\d{4}"))])
    text = "ACC-123456, M0042 and ACC-123456 again; jane@example.com"
    assert redacted(text, redactor) == "<ACCOUNT_1>, <MEMBER_ID_1> and <ACCOUNT_1> again; <EMAIL_1>"


def test_a_user_function_finds_values_and_wins_overlaps():
    def names(text: str) -> list[tuple[int, int, str]]:
        return [
            (m.start(), m.end(), "name") for m in re.finditer(r"Jane Doe|jane@example\.com", text)
        ]

    assert redacted("Jane Doe (jane@example.com), bob@example.com", Redactor(function=names)) == (
        "<NAME_1> (<NAME_2>), <EMAIL_1>"
    )


@pytest.mark.parametrize(
    "found", [[(5, 2, "name")], [(0, 99, "name")], [(0, 2, "two words")], [(0, 2, 3)]]
)
def test_a_user_function_returning_nonsense_is_a_setup_error(found):
    with pytest.raises(EvalSetupError, match="start, end, kind"):
        redacted("hello world", Redactor(function=lambda text: found))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"kinds": ("email", "passport")}, "unknown kinds"),
        ({"extra": [("account", "ACC-(")]}, "regex"),
        ({"extra": [("two words", "x")]}, "must be a word"),
    ],
)
def test_a_bad_configuration_is_a_setup_error(arguments, message):
    with pytest.raises(EvalSetupError, match=message):
        Redactor(**arguments)


def test_redacting_twice_changes_nothing_more():
    once, _ = redact_session(conversation(), Redactor())
    twice, counts = redact_session(once, Redactor())
    assert twice.model_dump() == once.model_dump()
    assert counts.total == 0


def test_none_changes_nothing():
    session = conversation()
    clean, counts = redact_session(session, Redactor.none())
    assert not Redactor.none().enabled
    assert clean.model_dump() == session.model_dump()
    assert clean is not session
    assert counts.total == 0
    assert counts.sessions == 1
    assert counts.describe() == "redacted nothing in 1 session"


def test_counts_occurrences_and_distinct_values():
    _, counts = redact_session(conversation(), Redactor())
    assert dict(counts) == {"email": 7, "phone": 3, "card": 4}
    assert counts.distinct == {"email": 1, "phone": 2, "card": 1}
    assert counts["card"] == 4
    assert counts.total == 14
    assert counts.describe() == "redacted 7 e-mails, 3 phone numbers, 4 card numbers in 1 session"


def test_counts_add_up_over_sessions():
    one = RedactionCounts({"email": 2}, {"email": 1}, 1)
    two = RedactionCounts({"id": 1, "email": 1, "member": 1}, {"id": 1, "email": 1, "member": 1}, 3)
    total = sum([one, two])
    assert total == RedactionCounts(
        {"email": 3, "id": 1, "member": 1}, {"email": 2, "id": 1, "member": 1}, 4
    )
    assert list(total) == ["email", "id", "member"]
    assert total.describe() == "redacted 3 e-mails, 1 id number, 1 member value in 4 sessions"
    assert hash(total) == hash(one + two)
