"""Text hidden in encodings: base64 strings and text blobs, decoded for redaction.

Personal data a reader (a model, a metric, a person with a decoder) can get at
is not always plain text: an attachment in a tool's answer is often base64
(``data:text/plain;base64,...``, a token's payload), and a user's upload is a
``text/plain`` blob of bytes. `_redact` redacts the decoded text and encodes the
result again the same way, so the value keeps its form and its markers.

A base64 value is only touched when it decodes to text: valid UTF-8 with no
control character but tabs and line breaks. Random bytes (a hash, a session
id) almost never do, and an identifier spelled with letters and digits decodes
to control characters or invalid UTF-8, so neither is changed; and the decoded
text is changed only where a detector finds a value in it, as plain text is.
A run in one case (a word, ``snake_case``, a number) is not tried: base64 of
text mixes upper and lower case (every character that starts a group of four
is ``I``-``Z`` or ``a``-``f`` for printable ASCII, and spaces, digits and ``@``
give upper case ones).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

__all__ = ["Encoded", "base64_texts", "blob_text", "with_text"]

# A run of base64 characters (standard or URL-safe), at least 12 long (9 bytes decoded).
_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{12,}={0,2}(?![\w+/=-])", re.ASCII)
_DOT_BEFORE = re.compile(r"[A-Za-z0-9_-]\.")  # a token's segments: `aaa.bbb.ccc`
_DOT_AFTER = re.compile(r"\.[A-Za-z0-9_-]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class Encoded(NamedTuple):
    """A base64 value in a text: ``text[start:end]``, the text it decodes to, and its form."""

    start: int
    end: int
    text: str
    urlsafe: bool
    padded: bool

    def encode(self, text: str) -> str:
        """`text` encoded as this value was (the same alphabet, padded or not)."""
        encode = base64.urlsafe_b64encode if self.urlsafe else base64.b64encode
        encoded = encode(text.encode()).decode("ascii")
        return encoded if self.padded else encoded.rstrip("=")


def base64_texts(text: str) -> Iterator[Encoded]:
    """The base64 values in `text` that decode to text, in order."""
    for match in _BASE64.finditer(text):
        value = match.group()
        bare = value.rstrip("=")
        if bare.lower() == bare or bare.upper() == bare:
            continue  # words, names_in_snake_case, NUMBERS: base64 of text mixes cases
        if len(bare) % 4 == 1 or (bare != value and len(value) % 4):
            continue  # no base64 has that length
        if ("-" in bare or "_" in bare) and ("+" in bare or "/" in bare):
            continue  # two alphabets in one value: not base64
        # A value in neither alphabet's own characters is URL-safe and unpadded as a
        # token's segment (JWT: dots between) or when it lacks the padding it needs.
        segment = bool(
            _DOT_BEFORE.fullmatch(text[max(match.start() - 2, 0) : match.start()])
            or _DOT_AFTER.fullmatch(text[match.end() : match.end() + 2])
        )
        padded = bare != value or (len(bare) % 4 == 0 and not segment)
        urlsafe = "-" in bare or "_" in bare or ("+" not in bare and "/" not in bare and not padded)
        decoded = _decoded(bare, urlsafe)
        if decoded is not None:
            yield Encoded(match.start(), match.end(), decoded, urlsafe, padded)


def _decoded(bare: str, urlsafe: bool) -> str | None:
    """The text `bare` (base64 without its padding) decodes to, or None if not text."""
    try:
        raw = base64.b64decode(
            bare + "=" * (-len(bare) % 4), altchars=b"-_" if urlsafe else None, validate=True
        )
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return None if _CONTROL.search(decoded) else decoded


def blob_text(blob: Any) -> tuple[str, str] | None:
    """The text of a ``text/*`` blob and its charset; None for other or undecodable data."""
    mime = (blob.mime_type or "").lower()
    if not mime.startswith("text/") or not blob.data:
        return None
    charset = "utf-8"
    for parameter in mime.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        return bytes(blob.data).decode(charset), charset
    except (LookupError, UnicodeDecodeError):
        return None


def with_text(blob: Any, text: str, charset: str) -> None:
    """Puts `text` in `blob` (a copy) in `charset`; characters it cannot hold become ``?``."""
    blob.data = text.encode(charset, errors="replace")
