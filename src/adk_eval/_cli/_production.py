"""``adk-eval score``: stored conversations scored with your metrics, and golden export.

Its options arrive grouped (`grouped`): which sessions (`Filters`), how they are
read (`Reading`), where the selected ones are exported as goldens (`Goldens`)
and the reports (`Reports`). It imports the harness, ADK and the store's driver
inside the command, when it runs.
"""

from __future__ import annotations

import shlex
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import __version__
from .._lazy import imports_without_collections
from ._common import console, fail, grouped
from ._finish import Reports, finish, report_options
from ._output import LiveProgress
from ._reading import (
    Filters,
    Reading,
    print_named,
    print_open,
    reading_options,
    session_filter_options,
)

if TYPE_CHECKING:
    from .._sources._filter import SessionFilter
    from ..production._export import GoldenExport

__all__ = ["Goldens", "score"]

_SHOWN = 50
"""Runs that did not pass shown in the table (and explained) of a score, unless ``-v``."""


@dataclass(frozen=True)
class Goldens:
    """Where a score appends the sessions it selects, as goldens, as given on its command line.

    Attributes:
        goldens_path: The EvalSet (None: nothing is exported).
        where: ``"METRIC passed|failed"`` (None: the sessions where every metric passed).
    """

    goldens_path: Path | None = None
    where: str | None = None

    def check(self) -> None:
        """A ``--where`` without a file is one line, before anything is read."""
        if self.where is not None and self.goldens_path is None:
            fail("--where selects sessions for --export-goldens; give --export-goldens FILE too")

    def export(self, metrics: list[Any]) -> GoldenExport | None:
        """The export, its file checked (`AdkEvalError`, one line), or None."""
        if self.goldens_path is None:
            return None
        from ..production._export import GoldenExport

        return GoldenExport(self.goldens_path, self.where, metrics)


golden_options = grouped(
    "goldens",
    Goldens,
    click.option(
        "--export-goldens",
        "goldens_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Append the sessions --where selects to this EvalSet, as goldens.",
    ),
    click.option(
        "--where",
        metavar="'METRIC passed|failed'",
        help="With --export-goldens: the sessions to export (default: every metric passed).",
    ),
)
"""``--export-goldens``, ``--where``, handed to the command as ``goldens``."""


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
@reading_options(
    "score",
    seen="any metric, judge or report sees them",
    concurrency=(8, "Sessions scored at once."),
    strict=True,
)
@golden_options
@report_options
def score(
    sessions: str,
    metrics_spec: str,
    filters: Filters,
    reading: Reading,
    goldens: Goldens,
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
    source, chosen, metrics, export = _prepare(sessions, metrics_spec, filters, goldens)
    out.print(
        f"adk-eval {__version__}: scoring the sessions of {source.description} with "
        f"{len(metrics)} metric(s): {', '.join(m.name for m in metrics)} (read-only)"
    )
    words = ["--metrics", metrics_spec, *filters.words(), *reading.words()]
    command = shlex.join(["adk-eval", "score", sessions, *words])
    started = time.perf_counter()
    with LiveProgress(out, filters.limit) as progress:

        def on_result(result: Any, session: Any) -> None:
            progress.finished(result)
            if export is not None:
                export.offer(result, session)

        try:
            suite = anyio.run(_scoring(source, metrics, chosen, reading, on_result))
        except KeyboardInterrupt:
            fail(f"interrupted after {time.perf_counter() - started:.1f}s; nothing was stored")
        except AdkEvalError as error:
            fail(str(error))
    if not (suite.summary["total"] or suite.open_count or suite.unreadable_count):
        out.print("no stored session matched the filters")
    _left_out(out, suite, reading.include_open)
    if export is not None:
        out.print(export.summary())
    finish(out, suite, reports, f"{command} (score)", threads_before, most=_SHOWN)


def _scoring(
    source: Any, metrics: list[Any], chosen: SessionFilter, reading: Reading, on_result: Any
) -> Any:
    """`score_sessions` with the command's options, to run."""
    from ..production._score import score_sessions

    return partial(
        score_sessions,
        source,
        metrics,
        filters=chosen,
        max_concurrency=reading.concurrency,
        on_result=on_result,
        strict=reading.strict,
        include_open=reading.include_open,
        redactor=reading.redactor(),
    )


def _left_out(out: Any, suite: Any, include_open: bool) -> None:
    """What the score left out or did not list, and what its source said (`notes`)."""
    for note in suite.notes:
        out.print(note, markup=False, highlight=False)
    if suite.redacted is not None and suite.redacted.occurrences:
        out.print(f"{suite.redacted.describe()} (--no-redact scores the text as stored)")
    if suite.unreadable_count:
        print_named(
            out,
            f"skipped {suite.unreadable_count} session(s) that cannot be read (--strict stops "
            "at the first):",
            [str(found) for found in suite.unreadable],
            suite.unreadable_count,
        )
    if suite.open_count:
        names, count = suite.open_sessions, suite.open_count
        print_open(out, names, count, include_open, "scores", "scored")
    if not suite.listed_all:
        out.print(
            f"the reports list {len(suite.results)} of the {suite.summary['total']} sessions "
            "scored (those that did not pass first); the counts and the pass rate cover all",
            highlight=False,
        )


def _prepare(
    sessions: str, metrics_spec: str, filters: Filters, goldens: Goldens
) -> tuple[Any, SessionFilter, list[Any], Any]:
    """The source (checked: reachable, an ADK store), filters, metrics and golden export.

    Every mistake is one error line, before anything is printed.
    """
    import anyio

    from .._errors import AdkEvalError
    from .._sources._specs import open_sessions
    from ..production._metrics_file import load_metrics

    goldens.check()
    try:
        source = open_sessions(sessions)
        chosen = filters.build()
        metrics = load_metrics(metrics_spec)
        export = goldens.export(metrics)
        anyio.run(source.check)  # reachable, and an ADK store, before anything is printed
    except AdkEvalError as error:
        fail(str(error))
    return source, chosen, metrics, export
