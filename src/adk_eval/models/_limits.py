"""Rate limits of model providers: what a model may be sent, and where that is said.

A `RateLimit` is a provider's quota for one model: requests and tokens per
minute, counted over the provider's window (60 seconds unless it says
otherwise: a quota of 20 requests per 10 seconds is ``RateLimit(rpm=120,
window=10)``). Limits are given by model name, in order of precedence:

* in code: ``ModelCalls(limits={"gemini-2.5-flash": RateLimit(rpm=10)})``;
* on the command line: ``--rpm 60`` (every model) or ``--rpm gemini-2.5-flash=10``,
  and ``--tpm`` the same way;
* in ``pyproject.toml``::

      [tool.adk-eval.limits]
      "gemini-2.5-flash" = { rpm = 10, tpm = 250000 }
      "openai/*" = { rpm = 500, window = 60 }

The ``pyproject.toml`` read is the nearest one from the working directory up
(the project's), for every run that is given no other settings (the command
line's included). A name may be a glob (``"openai/*"``, ``"*"``); the most
specific pattern that matches wins (an exact name before any glob, then the
longest glob).
"""

from __future__ import annotations

import fnmatch
import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import EvalSetupError

__all__ = [
    "RateLimit",
    "limit_for",
    "limits_from_options",
    "limits_from_pyproject",
    "project_pyproject",
]

PYPROJECT_TABLE = "tool.adk-eval.limits"


@dataclass(frozen=True)
class RateLimit:
    """A provider's quota for a model (see the module doc).

    Attributes:
        rpm: Requests per minute (None: not limited).
        tpm: Tokens per minute, prompt and answer together (None: not limited).
        window: Seconds the provider counts over; ``rpm * window / 60``
            requests fit in any window of that length.
    """

    rpm: float | None = None
    tpm: float | None = None
    window: float = 60.0

    def __post_init__(self) -> None:
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and (not _is_number(value) or value <= 0):
                raise EvalSetupError(
                    f"RateLimit({name}=...) must be a positive number, got {value!r}"
                )
        if not _is_number(self.window) or self.window <= 0:
            raise EvalSetupError(
                f"RateLimit(window=...) must be positive seconds, got {self.window!r}"
            )

    @property
    def requests(self) -> float:
        """Requests allowed in one window (infinite when not limited)."""
        return math.inf if self.rpm is None else self.rpm * self.window / 60.0

    @property
    def tokens(self) -> float:
        """Tokens allowed in one window (infinite when not limited)."""
        return math.inf if self.tpm is None else self.tpm * self.window / 60.0

    def merged(self, other: RateLimit) -> RateLimit:
        """This limit, with what it leaves unset taken from `other`."""
        return RateLimit(
            self.rpm if self.rpm is not None else other.rpm,
            self.tpm if self.tpm is not None else other.tpm,
            self.window if self.window != 60.0 else other.window,
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def limit_for(model: str, limits: Mapping[str, RateLimit]) -> RateLimit | None:
    """The limit of `model`: its own name's, else the most specific glob's (None: none)."""
    if model in limits:
        return limits[model]
    matching = [pattern for pattern in limits if fnmatch.fnmatchcase(model, pattern)]
    if not matching:
        return None
    return limits[max(matching, key=lambda pattern: (len(pattern.replace("*", "")), pattern))]


def limits_from_options(rpm: Iterable[str] = (), tpm: Iterable[str] = ()) -> dict[str, RateLimit]:
    """Limits from ``--rpm`` and ``--tpm`` values: ``N`` (every model) or ``MODEL=N``.

    Raises:
        EvalSetupError: A value that is not ``N`` or ``MODEL=N`` with N > 0.
    """
    found: dict[str, RateLimit] = {}
    for option, values in (("rpm", rpm), ("tpm", tpm)):
        for value in values:
            pattern, _, number = value.rpartition("=")
            try:
                amount = float(number)
            except ValueError:
                amount = -1.0
            if amount <= 0 or not math.isfinite(amount):
                raise EvalSetupError(
                    f"--{option} {value!r}: give a positive number, for every model (--{option} "
                    f"60) or for one (--{option} gemini-2.5-flash=10)"
                )
            key = pattern.strip() or "*"
            given = RateLimit(**{option: amount})
            found[key] = given.merged(found[key]) if key in found else given
    return found


def limits_from_pyproject(path: Path) -> dict[str, RateLimit]:
    """The ``[tool.adk-eval.limits]`` table of the ``pyproject.toml`` at `path` ({} if none).

    Raises:
        EvalSetupError: The file is not TOML, or an entry is not a table of
            ``rpm``, ``tpm`` and ``window`` (the message names the entry).
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise EvalSetupError(f"{path}: cannot read it as TOML ({error})") from None
    table: Any = data
    for part in ("tool", "adk-eval", "limits"):
        table = table.get(part, {}) if isinstance(table, dict) else {}
    if not isinstance(table, dict):
        raise EvalSetupError(f"{path}: [{PYPROJECT_TABLE}] must be a table of model -> limits")
    limits: dict[str, RateLimit] = {}
    for model, entry in table.items():
        unknown = set(entry) - {"rpm", "tpm", "window"} if isinstance(entry, dict) else {"?"}
        if unknown:
            raise EvalSetupError(
                f'{path}: [{PYPROJECT_TABLE}] "{model}" must be a table like '
                "{ rpm = 60, tpm = 100000, window = 60 }"
                + (
                    f", not {entry!r}"
                    if not isinstance(entry, dict)
                    else f"; unknown {sorted(unknown)}"
                )
            )
        try:
            limits[str(model)] = RateLimit(**entry)
        except (EvalSetupError, TypeError) as error:
            raise EvalSetupError(f'{path}: [{PYPROJECT_TABLE}] "{model}": {error}') from None
    return limits


def project_pyproject(start: Path | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` from `start` (the working directory) up, if any."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None
