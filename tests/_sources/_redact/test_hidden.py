"""Personal data in dict keys, text blobs and base64 strings is redacted; other values stay."""

from __future__ import annotations

import base64
import random
import uuid

import pytest
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from adk_eval._sources._redact._redactor import MarkerTable, Redactor, redact_session, redact_text
from adk_eval.testing import function_response_event, tool_call_event


def session_of(*events: Event, state: dict[str, object] | None = None) -> Session:
    return Session(id="s-1", app_name="shop", user_id="u-1", events=list(events), state=state or {})


def b64(text: str, *, urlsafe: bool = False, padded: bool = True) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    encoded = encode(text.encode()).decode()
    return encoded if padded else encoded.rstrip("=")


def redacted(text: str) -> str:
    return redact_text(text, Redactor(), MarkerTable())


def test_personal_data_in_a_dict_key_is_redacted_and_keys_never_merge():
    call = tool_call_event(
        "shop", "notify", {"jane@example.com": True, "JANE@example.com": 2, "plain": 3}
    )
    answer = function_response_event(
        "shop",
        "notify",
        {"sent": {"+44 20 7946 0958": "ok"}},
        state_delta={"user:jane@example.com": 1},
    )
    clean, counts = redact_session(session_of(call, answer), Redactor())
    args = clean.events[0].content.parts[0].function_call.args
    assert args == {"<EMAIL_1>": True, "<EMAIL_1> (2)": 2, "plain": 3}
    response = clean.events[1].content.parts[0].function_response.response
    assert response == {"sent": {"<PHONE_1>": "ok"}}
    assert clean.events[1].actions.state_delta == {"user:<EMAIL_1>": 1}
    assert dict(counts) == {"email": 3, "phone": 1}


def test_a_text_blob_is_decoded_redacted_and_encoded_again():
    note = types.Blob(
        mime_type="text/plain", data=b"reach me at jane@example.com", display_name="n"
    )
    latin = types.Blob(
        mime_type="text/plain; charset=latin-1", data="caf\xe9 +44 20 7946 0958".encode("latin-1")
    )
    image = types.Blob(mime_type="image/png", data=b"\x89PNG jane@example.com")
    broken = types.Blob(mime_type="text/plain", data=b"\xff\xfe jane@example.com")
    named = types.Blob(
        mime_type="text/plain", data=b"hi", display_name="jane@example.com notes.txt"
    )
    response = types.FunctionResponse(
        name="fetch",
        response={"ok": True},
        parts=[
            types.FunctionResponsePart(
                inline_data=types.FunctionResponseBlob(
                    mime_type="text/csv", data=b"email\njane@example.com\n"
                )
            )
        ],
    )
    parts = [types.Part(inline_data=blob) for blob in (note, latin, image, broken, named)]
    event = Event(
        author="user",
        content=types.Content(role="user", parts=[*parts, types.Part(function_response=response)]),
    )

    clean, counts = redact_session(session_of(event), Redactor())

    blobs = [part.inline_data for part in clean.events[0].content.parts[:5]]
    assert blobs[0].data == b"reach me at <EMAIL_1>"
    assert blobs[1].data == "caf\xe9 <PHONE_1>".encode("latin-1")
    assert blobs[2].data == image.data  # not text: kept
    assert blobs[3].data == broken.data  # not valid in its charset: kept (see the docs)
    assert blobs[4].display_name == "<EMAIL_1> notes.txt"
    inner = clean.events[0].content.parts[5].function_response.parts[0].inline_data
    assert inner.data == b"email\n<EMAIL_1>\n"
    assert dict(counts) == {"email": 3, "phone": 1}


@pytest.mark.parametrize(
    ("encode", "name"),
    [
        (lambda t: b64(t), "padded"),
        (lambda t: b64(t, urlsafe=True, padded=False), "url-safe, unpadded"),
    ],
)
def test_a_base64_value_that_decodes_to_personal_data_is_redacted_inside(encode, name):
    secret = '{"email": "jane@example.com", "card": "4111 1111 1111 1111"}?>'
    clean = encode('{"email": "<EMAIL_1>", "card": "<CARD_1>"}?>')
    assert redacted(encode(secret)) == clean, name
    text = f"attached data:text/plain;base64,{encode(secret)} and jane@example.com"
    assert redacted(text) == f"attached data:text/plain;base64,{clean} and <EMAIL_1>"


def test_a_jwt_payload_with_an_email_is_redacted_and_its_other_parts_kept():
    header = b64('{"alg":"HS256","typ":"JWT"}', urlsafe=True, padded=False)
    payload = b64('{"sub":"42","email":"jane@example.com"}', urlsafe=True, padded=False)
    clean = b64('{"sub":"42","email":"<EMAIL_1>"}', urlsafe=True, padded=False)
    token = f"{header}.{payload}.c2lnbmF0dXJl"
    assert redacted(f"Bearer {token}") == f"Bearer {header}.{clean}.c2lnbmF0dXJl"


def test_redacting_base64_twice_changes_nothing_more():
    once = redacted(b64("call +44 20 7946 0958"))
    assert once == b64("call <PHONE_1>")
    assert redacted(once) == once


def non_personal_values(n: int) -> dict[str, list[str]]:
    """Realistic values that hold no personal data, `n` of each kind (seeded)."""
    rng = random.Random(7)
    digits = "0123456789"
    return {
        "order id": [
            f"ORD-{rng.randint(2020, 2026)}-{rng.randint(0, 999999):06d}" for _ in range(n)
        ],
        "timestamp": [
            f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d}Z"
            for _ in range(n)
        ],
        "uuid": [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n)],
        "uuid hex": [uuid.UUID(int=rng.getrandbits(128), version=4).hex for _ in range(n)],
        "phone-like number": [
            f"{''.join(rng.choices(digits, k=3))} {''.join(rng.choices(digits, k=2))} "
            f"{''.join(rng.choices(digits, k=3))}"
            for _ in range(n)
        ],
        "hash, base64": [
            base64.b64encode(rng.getrandbits(256).to_bytes(32, "big")).decode() for _ in range(n)
        ],
        "session token": [
            base64.urlsafe_b64encode(rng.getrandbits(192).to_bytes(24, "big")).decode().rstrip("=")
            for _ in range(n)
        ],
        "base64 of plain text": [
            # (an order's number after the word "order" is an order id, redacted since)
            b64(f"{rng.randint(1, 10**6)} items shipped on 2026-05-{rng.randint(1, 28):02d}")
            for _ in range(n)
        ],
    }


def test_realistic_values_that_hold_no_personal_data_are_kept():
    for kind, values in non_personal_values(500).items():
        changed = [v for v in values if redacted(v) != v]
        assert not changed, (kind, changed[:3])
