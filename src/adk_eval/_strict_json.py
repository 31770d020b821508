"""Strict JSON: what adk-eval writes parses with any JSON parser.

Python's `json` writes a float NaN or infinity as the bare tokens ``NaN`` and
``Infinity``, which are not JSON (strict parsers, ``jq``, JavaScript's
``JSON.parse``... refuse the whole file). State, tool answers and metric values
can hold them, so every report, results file and stored run encodes them as the
strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` instead (documented in
docs/json-report.md), and the writers refuse anything else that is not JSON.

What adk-eval reads back from a file the user names (`load_file`) is refused with
one line when it is not a regular file (a FIFO would block), not UTF-8, not JSON,
or nested deeper than Python can parse.
"""

from __future__ import annotations

import json
import math
import stat
from pathlib import Path
from typing import Any

from ._errors import EvalSetupError

__all__ = ["dumps", "finite", "load_file"]


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


def load_file(path: Path, what: str) -> Any:
    """The JSON value in the file at `path` (`what` it should be, for the messages).

    Raises:
        EvalSetupError: One line: `path` is missing or not a regular file, cannot be
            read, is not UTF-8 JSON, or nests too deeply.
    """
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise EvalSetupError(f"{path} is {kind}: {what} must be a regular JSON file")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise EvalSetupError(f"{path} is not UTF-8 text ({error.reason}): not {what}") from None
    except OSError as error:
        raise EvalSetupError(f"cannot read {what} {path}: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise EvalSetupError(
            f"{path} is not JSON (line {error.lineno}, column {error.colno}: {error.msg}): "
            f"not {what}"
        ) from None
    except RecursionError:
        raise EvalSetupError(f"{path} nests too deeply to be {what}") from None
