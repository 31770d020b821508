"""What a failed model call says about the provider: a rate limit, a server error, or neither.

A provider that is over its quota answers 429 (OpenAI, litellm's
``RateLimitError``) or ``RESOURCE_EXHAUSTED`` (Gemini's ``ClientError`` with
code 429), often with when to try again: a ``Retry-After`` header (seconds or
an HTTP date), OpenAI's ``retry-after-ms``, Gemini's ``RetryInfo.retryDelay``
in the error body (``"7s"``), or "Please retry in 7.5s" in the message. A time
that is not a finite number of seconds >= 0 (``-30``, ``nan``) counts as none
said; how short a wait may be is the pacer's to decide. A 429 that waiting
never clears is ``spent``: OpenAI's ``insufficient_quota`` (billing), or a
Gemini quota whose limit is 0. A server error (5xx), a timeout or a dropped
connection is worth a bounded number of retries. Anything else is the call's
own error and is raised as it is.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["Failure", "FailureKind", "classify"]

FailureKind: TypeAlias = Literal["rate_limit", "spent", "server", "other"]

_RATE_TYPES = re.compile(r"RateLimit|ResourceExhausted|TooManyRequests")
_SERVER_TYPES = re.compile(
    r"ServiceUnavailable|InternalServer|APIConnection|Timeout|ServerError|BadGateway|Overloaded"
)
_RATE_WORDS = re.compile(
    r"\b429\b|RESOURCE_EXHAUSTED|rate.?limit|too many requests|quota exceeded", re.IGNORECASE
)
_RETRY_IN = re.compile(r"retry in (-?[0-9]+(?:\.[0-9]+)?)\s*(ms|s)\b", re.IGNORECASE)
_DELAY = re.compile(r"^(-?[0-9]+(?:\.[0-9]+)?)s$")
_SPENT = re.compile(r"insufficient_quota|\blimit: 0(?![.\d])", re.IGNORECASE)


@dataclass(frozen=True)
class Failure:
    """A failed model call, as the pacing reads it.

    Attributes:
        kind: ``rate_limit`` (a 429 / ``RESOURCE_EXHAUSTED``), ``spent`` (a 429
            that waiting never clears), ``server`` (5xx, a timeout, a dropped
            connection) or ``other``.
        retry_after: Seconds the provider asked to wait, when it said (finite, >= 0).
        status: The HTTP status, when known.
    """

    kind: FailureKind
    retry_after: float | None = None
    status: int | None = None


def classify(error: BaseException) -> Failure:
    """What `error`, raised by a model call, says (see the module doc)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:  # ADK may wrap the client's
        seen.add(id(current))
        failure = _one(current)
        if failure.kind != "other":
            return failure
        current = current.__cause__ or current.__context__
    return Failure("other")


def _one(error: BaseException) -> Failure:
    status = _status(error)
    name = type(error).__name__
    if status == 429:
        return Failure(_refusal(error), _retry_after(error), status)
    if status is not None and 400 <= status < 500:  # the request's own fault, whatever it says
        return Failure("other", None, status)
    if (status is not None and status >= 500) or _SERVER_TYPES.search(name):
        return Failure("server", _retry_after(error), status)
    if _RATE_TYPES.search(name) or _RATE_WORDS.search(str(error)[:500]):
        return Failure(_refusal(error), _retry_after(error), 429)
    return Failure("other", None, status)


def _refusal(error: BaseException) -> FailureKind:
    """``spent`` for a quota waiting never clears (see the module doc), else ``rate_limit``."""
    said = str(error)[:4000]
    body = _body(error)
    if _SPENT.search(said) or _SPENT.search(body):
        return "spent"
    details = getattr(error, "details", None)
    error_body = details.get("error", details) if isinstance(details, Mapping) else None
    items = error_body.get("details") if isinstance(error_body, Mapping) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and str(item.get("@type", "")).endswith("QuotaFailure"):
            violations = item.get("violations")
            for violation in violations if isinstance(violations, list) else []:
                if isinstance(violation, Mapping) and str(violation.get("quotaValue")) == "0":
                    return "spent"
    return "rate_limit"


def _body(error: BaseException) -> str:
    """The start of the HTTP response's body, when the error carries one."""
    response = getattr(error, "response", None)
    try:
        return str(getattr(response, "text", "") or "")[:4000]
    except Exception:  # a streamed body not read: nothing to go on
        return ""


def _seconds(value: float) -> float | None:
    """`value` seconds when it is a time one can wait (finite, >= 0), else None."""
    return value if math.isfinite(value) and value >= 0 else None


def _status(error: BaseException) -> int | None:
    for attribute in ("status_code", "code", "status"):
        value = getattr(error, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    return None


def _retry_after(error: BaseException) -> float | None:
    """Seconds the provider asked to wait: headers, then Gemini's RetryInfo, then the text."""
    headers = _headers(error)
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return _seconds(float(milliseconds) / 1000)
        except ValueError:
            pass
    after = headers.get("retry-after")
    if after is not None:
        seconds = _header_seconds(after)
        if seconds is not None:
            return seconds
    delay = _retry_info(getattr(error, "details", None))
    if delay is not None:
        return delay
    found = _RETRY_IN.search(str(error)[:2000])
    if found:
        value = float(found.group(1))
        return _seconds(value / 1000 if found.group(2).lower() == "ms" else value)
    return None


def _headers(error: BaseException) -> Mapping[str, str]:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(error, "litellm_response_headers", None)
    if headers is None:
        return {}
    try:
        return {str(key).lower(): str(value) for key, value in dict(headers).items()}
    except (TypeError, ValueError):
        return {}


def _header_seconds(value: str) -> float | None:
    try:
        return _seconds(float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _retry_info(details: Any) -> float | None:
    """``retryDelay`` of a ``google.rpc.RetryInfo`` in Gemini's error body, in seconds."""
    body = details.get("error", details) if isinstance(details, Mapping) else None
    items = body.get("details") if isinstance(body, Mapping) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and str(item.get("@type", "")).endswith("RetryInfo"):
            found = _DELAY.match(str(item.get("retryDelay", "")).strip())
            if found:
                return _seconds(float(found.group(1)))
    return None
