"""The commands on production sessions: ``score`` (and its golden export) and ``shadow``.

Each imports the harness, ADK and the store's driver inside the command, when it runs.
"""

from __future__ import annotations

import re
import shlex
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import __version__
from .._lazy import imports_without_collections
from ._common import console, fail, grouped
from ._finish import Reports, finish, report_options
from ._output import LiveProgress

if TYPE_CHECKING:
    from .._sources._filter import SessionFilter

__all__ = ["Filters", "score", "session_filter_options"]

_SHOWN = 50
"""Runs that did not pass shown in the table (and explained) of a score, unless ``-v``."""


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
        for flag in ("app", "user", "since", "until", "limit"):
            value = getattr(self, flag)
            if value is not None:
                words += [f"--{flag}", str(value)]
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


@click.command()
@click.argument("sessions")
@click.option(
    "--metrics",
    "metrics_spec",
    required=True,
    metavar="FILE[:NAME]",
    help="The metrics: every metric FILE binds at module level, or FILE's NAME.",
)
@session_filter_options
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Sessions scored at once.",
)
@click.option(
    "--export-goldens",
    "goldens_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Append the sessions --where selects to this EvalSet, as goldens.",
)
@click.option(
    "--where",
    metavar="'METRIC passed|failed'",
    help="With --export-goldens: the sessions to export (default: every metric passed).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Stop at the first session that cannot be read (default: skip it, count it, name it).",
)
@click.option(
    "--include-open",
    is_flag=True,
    help="Score open conversations too: updated in the last 10 minutes and stopped "
    "mid-turn (default: leave them out, count them, name them).",
)
@click.option(
    "--no-redact",
    is_flag=True,
    help="Score the text as stored (default: e-mails, phone, card and id numbers become "
    "<EMAIL_1>-style markers before any metric, judge or report sees them).",
)
@report_options
def score(
    sessions: str,
    metrics_spec: str,
    filters: Filters,
    concurrency: int,
    goldens_path: Path | None,
    where: str | None,
    strict: bool,
    include_open: bool,
    no_redact: bool,
    reports: Reports,
) -> None:
    """Score stored sessions (an ADK session store, session JSON, traces) with your metrics.

    SESSIONS: sqlite:///PATH, postgresql://USER:PASSWORD@HOST:PORT/DB, session JSON
    (a file or folder), otlp:PATH or adk-spans:PATH (traces). Only ever read.
    """
    import anyio

    with imports_without_collections():
        from .._errors import AdkEvalError

    out = console()
    threads_before = {thread.ident for thread in threading.enumerate()}
    reports.check_store()
    source, chosen, metrics, export = _prepare(sessions, filters, metrics_spec, goldens_path, where)
    out.print(
        f"adk-eval {__version__}: scoring the sessions of {source.description} with "
        f"{len(metrics)} metric(s): {', '.join(m.name for m in metrics)} (read-only)"
    )
    command = _command(sessions, metrics_spec, filters, strict, include_open, no_redact)
    started = time.perf_counter()
    with LiveProgress(out, filters.limit) as progress:

        def on_result(result: Any, session: Any) -> None:
            progress.finished(result)
            if export is not None:
                export.offer(result, session)

        scoring = _scoring(
            source, metrics, chosen, concurrency, on_result, strict, include_open, no_redact
        )
        try:
            suite = anyio.run(scoring)
        except KeyboardInterrupt:
            fail(f"interrupted after {time.perf_counter() - started:.1f}s; nothing was stored")
        except AdkEvalError as error:
            fail(str(error))
    if not (suite.summary["total"] or suite.open_count or suite.unreadable_count):
        out.print("no stored session matched the filters")
    _left_out(out, suite, include_open, getattr(source, "notes", ()))
    if export is not None:
        out.print(export.summary())
    finish(out, suite, reports, f"{command} (score)", threads_before, most=_SHOWN)


def _command(
    sessions: str, metrics_spec: str, filters: Filters, strict: bool, include_open: bool, raw: bool
) -> str:
    """The command as stored with its runs: its arguments, filters and flags."""
    flags = (("--strict", strict), ("--include-open", include_open), ("--no-redact", raw))
    words = [flag for flag, on in flags if on]
    return shlex.join(
        ["adk-eval", "score", sessions, "--metrics", metrics_spec, *filters.words(), *words]
    )


def _scoring(
    source: Any,
    metrics: list[Any],
    chosen: SessionFilter,
    concurrency: int,
    on_result: Any,
    strict: bool,
    include_open: bool,
    raw: bool,
) -> Any:
    """`score_sessions` with the command's options, to run."""
    from .._sources._redact._redactor import Redactor
    from ..production._score import score_sessions

    return partial(
        score_sessions,
        source,
        metrics,
        filters=chosen,
        max_concurrency=concurrency,
        on_result=on_result,
        strict=strict,
        include_open=include_open,
        redactor=Redactor.none() if raw else None,
    )


def _left_out(out: Any, suite: Any, include_open: bool, notes: Any = ()) -> None:
    """What the score left out or did not list, and what its source lacks (`notes`)."""
    for note in notes:
        out.print(note, markup=False, highlight=False)
    if suite.redacted is not None and suite.redacted.occurrences:
        out.print(f"{suite.redacted.describe()} (--no-redact scores the text as stored)")
    if suite.unreadable_count:
        out.print(
            f"skipped {suite.unreadable_count} session(s) that cannot be read (--strict stops "
            "at the first):",
            highlight=False,
        )
        _names(out, [str(found) for found in suite.unreadable], suite.unreadable_count)
    if suite.open_count:
        what = "scored as they stand" if include_open else "left out (--include-open scores them)"
        out.print(
            f"{suite.open_count} open conversation(s), still being written, {what}:",
            highlight=False,
        )
        _names(out, list(suite.open_sessions), suite.open_count)
    if not suite.listed_all:
        out.print(
            f"the reports list {len(suite.results)} of the {suite.summary['total']} sessions "
            "scored (those that did not pass first); the counts and the pass rate cover all",
            highlight=False,
        )


def _names(out: Any, names: list[str], count: int) -> None:
    for name in names:
        out.print(f"  {name}", markup=False, highlight=False)
    if count > len(names):
        out.print(f"  ... and {count - len(names)} more", highlight=False)


def _prepare(
    sessions: str, filters: Filters, metrics_spec: str, goldens: Path | None, where: str | None
) -> tuple[Any, SessionFilter, list[Any], Any]:
    """The source (checked: reachable, an ADK store), filters, metrics and golden export.

    Every mistake is one error line, before anything is printed.
    """
    import anyio

    from .._errors import AdkEvalError
    from .._sources._source import open_sessions
    from ..production._export import GoldenExport
    from ..production._metrics_file import load_metrics

    if where is not None and goldens is None:
        fail("--where selects sessions for --export-goldens; give --export-goldens FILE too")
    try:
        source = open_sessions(sessions)
        chosen = filters.build()
        metrics = load_metrics(metrics_spec)
        export = GoldenExport(goldens, where, metrics) if goldens else None
        anyio.run(source.check)  # reachable, and an ADK store, before anything is printed
    except AdkEvalError as error:
        fail(str(error))
    return source, chosen, metrics, export
