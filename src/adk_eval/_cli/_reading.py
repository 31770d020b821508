"""The options of every command that reads stored conversations: which, and how.

`Filters` (``--app``, ``--user``, ``--since``, ``--until``, ``--session``,
``--limit``) chooses the sessions; `Reading` says how they are read: open
conversations left out or included (``--include-open``), redacted or as stored
(``--no-redact``), an unreadable session skipped or the end of the read
(``--strict``), and how many are handled at once (``--concurrency``). Each is a
small frozen dataclass the command gets whole (`grouped`); `reading_options`
gives each command the flags that make sense for it, in its own words.

This module imports no ADK: the commands import the readers when they run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ._common import fail, grouped

if TYPE_CHECKING:
    from .._sources._filter import SessionFilter
    from .._sources._redact._redactor import Redactor

__all__ = [
    "Filters",
    "Reading",
    "print_named",
    "print_open",
    "reading_options",
    "session_filter_options",
]

_F = TypeVar("_F", bound=Callable[..., Any])


def _moment(value: str | None, flag: str) -> float | None:
    """A POSIX time from ``2026-11-18``, ``2026-11-18T09:00:00+01:00`` or ``7d`` / ``12h`` ago."""
    if value is None:
        return None
    relative = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([dhm])", value.strip())
    if relative:
        unit = {"d": "days", "h": "hours", "m": "minutes"}[relative.group(2)]
        ago = timedelta(**{unit: float(relative.group(1))})
        return (datetime.now(tz=UTC) - ago).timestamp()
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        fail(f"{flag} {value!r} is not a date (2026-11-18, 2026-11-18T09:00) or an age (7d, 12h)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@dataclass(frozen=True)
class Filters:
    """The stored sessions a command reads, as given on its command line."""

    app: str | None = None
    user: str | None = None
    since: str | None = None
    until: str | None = None
    session: tuple[str, ...] = ()
    limit: int | None = None

    def build(self) -> SessionFilter:
        from .._sources._filter import SessionFilter

        return SessionFilter(
            app=self.app,
            user=self.user,
            since=_moment(self.since, "--since"),
            until=_moment(self.until, "--until"),
            sessions=self.session,
            limit=self.limit,
        )

    def words(self) -> list[str]:
        """The filters as command-line words (for the stored command)."""
        words: list[str] = []
        for flag, value in (
            ("--app", self.app),
            ("--user", self.user),
            ("--since", self.since),
            ("--until", self.until),
            ("--limit", self.limit),
        ):
            if value is not None:
                words += [flag, str(value)]
        for session in self.session:
            words += ["--session", session]
        return words


session_filter_options = grouped(
    "filters",
    Filters,
    click.option("--app", help="Only this app's sessions."),
    click.option("--user", help="Only this user's sessions."),
    click.option("--since", metavar="WHEN", help="Updated at or after WHEN (2026-11-18, 7d)."),
    click.option("--until", metavar="WHEN", help="Updated before WHEN (2026-11-25, 1d)."),
    click.option("--session", multiple=True, metavar="ID", help="Only this session (repeatable)."),
    click.option(
        "--limit", type=click.IntRange(min=1), help="At most N sessions, most recent first."
    ),
)
"""Which stored sessions a command reads, handed to it as ``filters``."""


@dataclass(frozen=True)
class Reading:
    """How a command reads stored conversations, as given on its command line.

    Attributes:
        concurrency: Conversations handled at once.
        include_open: Read open conversations (still being written) too.
        no_redact: Read the text as stored (default: redacted first).
        strict: Stop at the first session that cannot be read (default: skip it).
    """

    concurrency: int = 1
    include_open: bool = False
    no_redact: bool = False
    strict: bool = False

    def redactor(self) -> Redactor:
        """What is redacted before anything reads a conversation."""
        from .._sources._redact._redactor import Redactor

        return Redactor.none() if self.no_redact else Redactor()

    def words(self) -> list[str]:
        """The flags given, as command-line words (for the stored command)."""
        flags = (
            ("--strict", self.strict),
            ("--include-open", self.include_open),
            ("--no-redact", self.no_redact),
        )
        return [flag for flag, on in flags if on]


def reading_options(
    verb: str,
    *,
    seen: str | None = None,
    concurrency: tuple[int, str] | None = None,
    strict: bool = False,
) -> Callable[[_F], _F]:
    """The `Reading` flags of one command, handed to it as ``reading``.

    Args:
        verb: What the command does with a conversation (``score``, ``replay``).
        seen: What redaction comes before (``any metric, judge or report sees
            them``); None: the command takes no ``--no-redact``.
        concurrency: The default of ``--concurrency`` and its help (None: no such flag).
        strict: Whether the command takes ``--strict``.
    """
    options = [
        click.option(
            "--include-open",
            is_flag=True,
            help=f"{verb.capitalize()} open conversations too: updated in the last 10 minutes "
            "and stopped mid-turn (default: leave them out, count them, name them).",
        )
    ]
    if seen is not None:
        options.append(
            click.option(
                "--no-redact",
                is_flag=True,
                help=f"{verb.capitalize()} the text as stored (default: e-mails, phone, card "
                f"and id numbers become <EMAIL_1>-style markers before {seen}).",
            )
        )
    if strict:
        options.append(
            click.option(
                "--strict",
                is_flag=True,
                help="Stop at the first session that cannot be read (default: skip it, count "
                "it, name it).",
            )
        )
    if concurrency is not None:
        default, said = concurrency
        options.append(
            click.option(
                "--concurrency",
                type=click.IntRange(min=1),
                default=default,
                show_default=True,
                help=said,
            )
        )
    return grouped("reading", Reading, *options)


def print_open(
    out: Any, names: Sequence[str], count: int, include_open: bool, does: str, done: str
) -> None:
    """The open conversations a command read or left out (`does`, `done`: "scores", "scored")."""
    what = f"{done} as they stand" if include_open else f"left out (--include-open {does} them)"
    print_named(out, f"{count} open conversation(s), still being written, {what}:", names, count)


def print_named(out: Any, heading: str, names: Sequence[str], count: int) -> None:
    """`heading`, then each name on a line of its own, and how many more there are."""
    out.print(heading, highlight=False)
    for name in names:
        out.print(f"  {name}", markup=False, highlight=False)
    if count > len(names):
        out.print(f"  ... and {count - len(names)} more", highlight=False)
