"""Values that carry the time or a random id: compared by kind, not by value.

An agent's callbacks and tools write such values into state (``time.time()``,
``datetime.now()``, ``uuid.uuid4()``), and they differ on every run of an
unchanged agent, so a replay that compared them exactly would fail on the agent's
own golden. `same_or_volatile` takes two values as equal when they are equal, or
when both are values of one volatile kind:

* **a clock reading**: a `datetime`; a string holding a date *and* a time of day
  (ISO 8601 or ``str(datetime)``: ``2026-11-25T10:00:00``, ``2026-11-25 10:00:00.123``,
  with an optional zone); a number of seconds or milliseconds since 1970 that falls
  between 2001 and 2100 (``time.time()``, ``time.time_ns() // 10**6``);
* **a random id**: a UUID (``uuid.UUID`` or its text, with dashes or as 32 hex
  digits).

Inside dicts and lists the rule applies to each item, so an audit log of stamped
entries compares its entries' other fields exactly. The trade-off: a wrong time or
a wrong id of the right kind is not caught (compare exactly with
``final_state_match(..., volatile="exact")``, or assert the value with a
`state_metric`); a date alone (``2026-12-01``, a booking date) is compared exactly.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, TypeAlias

__all__ = ["VolatileMode", "kind_of", "same_or_volatile"]

VolatileMode: TypeAlias = Literal["by_kind", "exact"]

_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?",
    re.IGNORECASE,
)
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
_SECONDS = (978_307_200, 4_102_444_800)  # 2001-01-01 .. 2100-01-01, in seconds since 1970


def kind_of(value: Any) -> str | None:
    """``"clock"`` or ``"id"`` for a volatile value (see the module doc), else None."""
    if isinstance(value, datetime):
        return "clock"
    if isinstance(value, uuid.UUID):
        return "id"
    if isinstance(value, str):
        if _DATETIME.fullmatch(value.strip()):
            return "clock"
        if _UUID.fullmatch(value.strip()):
            return "id"
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = _SECONDS
        if low <= value <= high or low * 1000 <= value <= high * 1000:
            return "clock"
    return None


def same_or_volatile(expected: Any, actual: Any) -> bool:
    """Whether `actual` matches `expected`: equal, or both of one volatile kind, item by item."""
    if expected == actual:
        return True
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(
            same_or_volatile(expected[key], actual[key]) for key in expected
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        return len(expected) == len(actual) and all(
            same_or_volatile(e, a) for e, a in zip(expected, actual, strict=True)
        )
    kind = kind_of(expected)
    return kind is not None and kind == kind_of(actual)
