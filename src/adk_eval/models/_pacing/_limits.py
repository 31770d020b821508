"""Rate limits of model providers: what a model may be sent, and where that is said.

A limit is said one way everywhere: ``N/WINDOW``, N requests (or tokens) in any
WINDOW, as the provider states it: ``20/10s`` (20 in any 10 seconds),
``500/1m``, ``1500/1d``. Limits are given by model name, in order of precedence:

* in code: ``ModelCalls(limits={"gemini-2.5-flash": RateLimit.parse(rpm="10/1m")})``;
* on the command line: ``--rpm 20/10s`` (every model) or
  ``--rpm gemini-2.5-flash=10/1m``, and ``--tpm`` the same way;
* in ``pyproject.toml``::

      [tool.adk-eval.limits]
      "gemini-2.5-flash" = { rpm = "10/1m", tpm = "250000/1m" }
      "openai/*" = { rpm = "500/1m" }

A bare number is per minute (``--rpm 60`` is ``--rpm 60/1m``), as it always was;
the old ``window`` (``--quota-window``) still sets the window such numbers are
counted over, and one that contradicts a limit's own window is refused. A model
whose requests and tokens are counted over different windows is paced over the
shorter one, at the same rates (never over either limit).

The ``pyproject.toml`` read is the nearest one from the working directory up
(the project's), for every run that is given no other settings (the command
line's included). A name may be a glob (``"openai/*"``, ``"*"``); the most
specific pattern that matches wins (an exact name before any glob, then the
longest glob).
"""

from __future__ import annotations

import fnmatch
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._errors import EvalSetupError

__all__ = [
    "RateLimit",
    "limit_for",
    "limits_from_options",
    "limits_from_pyproject",
    "parse_amount",
    "project_pyproject",
]

PYPROJECT_TABLE = "tool.adk-eval.limits"

_AMOUNT = re.compile(
    r"^\s*(?P<amount>\d+(?:\.\d+)?(?:e\d+)?)\s*"
    r"(?:/\s*(?P<count>\d+(?:\.\d+)?)?\s*(?P<unit>[a-z]+)\s*)?$",
    re.IGNORECASE,
)
_UNITS = {"ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_SAY = "N/WINDOW, like 20/10s (20 in any 10 s), 500/1m or 1500/1d"


def parse_amount(value: float | str) -> tuple[float, float | None]:
    """A limit's amount and its window in seconds: ``"20/10s"`` is ``(20, 10)``.

    A bare number (``60``, ``"60"``) has no window of its own (None: per minute,
    or the old ``window``).

    Raises:
        EvalSetupError: Not ``N`` or ``N/WINDOW`` with N > 0 and a window with
            its unit (ms, s, m, min, h, d); the message says the form.
    """
    if _is_number(value) and not isinstance(value, str) and value > 0:
        return float(value), None
    found = _AMOUNT.match(value) if isinstance(value, str) else None
    unit = (found["unit"] or "").lower() if found else ""
    if found is None or (unit and unit not in _UNITS):
        raise EvalSetupError(f"{value!r} is not a limit: give {_SAY}")
    amount = float(found["amount"])
    window = float(found["count"] or 1) * _UNITS[unit] if unit else None
    if not (amount > 0 and math.isfinite(amount)) or window == 0:
        raise EvalSetupError(f"{value!r} is not a limit: give {_SAY}")
    return amount, window


def _seconds(window: float) -> str:
    """A window as it is said: ``10 s``, ``1 min``, ``1 h``."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if window >= size and (window / size).is_integer():
            return f"{window / size:g} {unit}"
    return f"{window:g} s"


@dataclass(frozen=True)
class RateLimit:
    """A provider's quota for a model (see the module doc).

    `parse` builds one from the ``N/WINDOW`` form; the fields are what the
    pacing reads: per-minute rates, and the window they are counted over.

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

    @classmethod
    def parse(
        cls,
        rpm: float | str | None = None,
        tpm: float | str | None = None,
        window: float | None = None,
    ) -> RateLimit:
        """The limit of ``rpm="20/10s"`` (requests) and ``tpm="250000/1m"`` (tokens).

        Args:
            rpm: Requests, ``N/WINDOW`` (a bare N: per minute).
            tpm: Tokens, the same way.
            window: The old window of bare numbers (seconds); one that differs
                from a limit's own window is refused.

        Raises:
            EvalSetupError: A value that is not a limit, or windows that contradict
                each other (the message names both).
        """
        if window is not None and not (_is_number(window) and window > 0):
            raise EvalSetupError(f"the window must be positive seconds, got {window!r}")
        rates: dict[str, float] = {}
        windows: list[float] = []
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is None:
                continue
            amount, own = parse_amount(value)
            if own is not None and window is not None and own != window:
                raise EvalSetupError(
                    f"{name} {value!r} is counted over {_seconds(own)}, but the window says "
                    f"{_seconds(window)}: drop the window, the limit says it"
                )
            rates[name] = amount * 60.0 / own if own is not None else amount
            windows.append(own if own is not None else window or 60.0)
        return cls(**rates, window=min(windows, default=window or 60.0))

    @property
    def requests(self) -> float:
        """Requests allowed in one window (infinite when not limited)."""
        return math.inf if self.rpm is None else round(self.rpm * self.window / 60.0, 6)

    @property
    def tokens(self) -> float:
        """Tokens allowed in one window (infinite when not limited)."""
        return math.inf if self.tpm is None else round(self.tpm * self.window / 60.0, 6)

    def describe(self) -> str:
        """What is kept to, per window: ``20 requests in any 10 s``."""
        amounts = [
            f"{amount:,.6g} {unit}"
            for amount, unit in ((self.requests, "requests"), (self.tokens, "tokens"))
            if math.isfinite(amount)
        ]
        return f"{' and '.join(amounts) or 'no limit'} in any {_seconds(self.window)}"

    def merged(self, other: RateLimit) -> RateLimit:
        """This limit, with what it leaves unset taken from `other` (over the shorter window)."""
        takes = (self.rpm is None and other.rpm is not None) or (
            self.tpm is None and other.tpm is not None
        )
        window = min(self.window, other.window) if takes else self.window
        return RateLimit(
            self.rpm if self.rpm is not None else other.rpm,
            self.tpm if self.tpm is not None else other.tpm,
            window,
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


def limits_from_options(
    rpm: Iterable[str] = (), tpm: Iterable[str] = (), window: float | None = None
) -> dict[str, RateLimit]:
    """Limits from ``--rpm`` and ``--tpm`` values: ``N/WINDOW`` (every model) or ``MODEL=N/WINDOW``.

    Args:
        rpm: The ``--rpm`` values; a model's last one wins.
        tpm: The ``--tpm`` values, the same way.
        window: ``--quota-window``: the window of bare numbers (see `RateLimit.parse`).

    Raises:
        EvalSetupError: A value that is not a limit, or a window that contradicts
            ``--quota-window`` (one line naming the option and the value).
    """
    given: dict[str, dict[str, str]] = {}
    for option, values in (("rpm", rpm), ("tpm", tpm)):
        for value in values:
            pattern, _, amount = value.rpartition("=")
            given.setdefault(pattern.strip() or "*", {})[option] = amount
    found: dict[str, RateLimit] = {}
    for key, amounts in given.items():
        for option, amount in amounts.items():
            try:
                parse_amount(amount)
            except EvalSetupError:
                named = f"{key}={amount}" if key != "*" else amount
                raise EvalSetupError(
                    f"--{option} {named} is not a limit: give [MODEL=]N/WINDOW, like --{option} "
                    f"20/10s (20 in any 10 s, every model) or --{option} gemini-2.5-flash=10/1m"
                ) from None
        try:
            found[key] = RateLimit.parse(**amounts, window=window)
        except EvalSetupError as error:  # only a window can contradict a checked amount
            raise EvalSetupError(f"--quota-window {window or 0:g}: {error}") from None
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
                '{ rpm = "20/10s", tpm = "250000/1m" }'
                + (
                    f", not {entry!r}"
                    if not isinstance(entry, dict)
                    else f"; unknown {sorted(unknown)}"
                )
            )
        try:
            limits[str(model)] = RateLimit.parse(**entry)
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
