"""Request bodies the studio's server reads: small UTF-8 JSON objects, checked before use.

A body is at most `MAX_BODY_BYTES` (413 above: a larger ``Content-Length`` is
refused unread, and bytes are counted as they arrive), nested at most
`MAX_JSON_DEPTH` levels, without ``NaN`` / ``Infinity``, numbers Python will not
convert or strings with a lone surrogate (400).
"""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi import Request

from .._errors import StudioInvalidError

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "body_status", "parse_json", "read_body"]

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body the studio reads (1 MiB)."""
MAX_JSON_DEPTH = 64
"""The deepest JSON nesting a request body may have."""


class _BodyError(StudioInvalidError):
    """A request body the server refuses before reading it: not JSON (400), too big (413)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def body_status(error: StudioInvalidError) -> int | None:
    """The HTTP status of a refused request body (None for any other error)."""
    return error.status if isinstance(error, _BodyError) else None


def _unicode(text: str) -> bool:
    """Whether `text` is Unicode text (no lone surrogate, as an escaped one in JSON gives)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_problem(value: Any) -> str | None:
    """What is wrong with parsed JSON `value` (checked without recursion), if anything.

    It may nest at most `MAX_JSON_DEPTH` levels, and its strings (keys too) must
    be Unicode text.
    """
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            return f"the request body nests deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(item, str) and not _unicode(item):
            return "the request body has a string that is not Unicode text (a lone surrogate)"
        if isinstance(item, dict):
            pending.extend((key, depth + 1) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return None


def _no_constant(name: str) -> Any:
    """Refuses ``NaN`` and ``Infinity``, which JSON itself does not have."""
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent; refuses one too large for a float."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} does not fit a float")
    return number


def parse_json(raw: bytes) -> Any:
    """The JSON value in `raw`.

    Raises:
        _BodyError: (400) `raw` is not UTF-8 JSON (``NaN``, ``Infinity`` and numbers
            Python will not convert included), nests deeper than `MAX_JSON_DEPTH`, or
            has a string that is not Unicode text.
    """
    try:
        data = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise _BodyError("the request body nests too deeply", 400) from None
    except ValueError:  # not JSON, not UTF-8, NaN / Infinity, a number too long to convert
        raise _BodyError("the request body must be JSON", 400) from None
    problem = _json_problem(data)
    if problem is not None:
        raise _BodyError(problem, 400)
    return data


async def read_body(request: Request) -> dict[str, Any]:
    """The JSON object `request` carries.

    Raises:
        _BodyError: It is over `MAX_BODY_BYTES` (413), or not a JSON object as
            `parse_json` reads it (400).
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _BodyError(f"the request body is over {MAX_BODY_BYTES} bytes", 413)
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise _BodyError(f"the request body is over {MAX_BODY_BYTES} bytes", 413)
    data = parse_json(bytes(raw))
    if not isinstance(data, dict):
        raise _BodyError("the request body must be a JSON object", 400)
    return data
