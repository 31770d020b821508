"""Strict JSON: what adk-eval writes parses with any JSON parser.

Python's `json` writes a float NaN or infinity as the bare tokens ``NaN`` and
``Infinity``, which are not JSON (strict parsers, ``jq``, JavaScript's
``JSON.parse``... refuse the whole file). State, tool answers and metric values
can hold them, so every report, results file and stored run encodes them as the
strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` instead (documented in
docs/json-report.md), and the writers refuse anything else that is not JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "finite"]


def finite(value: Any) -> Any:
    """`value` with every non-finite float replaced by its name as a string."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps` of `finite(value)`, refusing NaN and infinity (none can be left)."""
    return json.dumps(finite(value), allow_nan=False, **options)
