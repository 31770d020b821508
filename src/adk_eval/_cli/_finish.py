"""How a command that ends in a suite (``run``, ``merge``) ends: reports, summary, exit code."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console

from ._common import EXIT_FAILED, db_option, exit_process, fail, grouped
from ._gates import gate_verdicts
from ._output import (
    adaptive_line,
    budget_line,
    cost_words,
    explanations,
    party_line,
    provider_line,
    provider_lines,
    suite_table,
    summary_line,
    unchecked_line,
    warning_lines,
)

if TYPE_CHECKING:
    from .._suites._results import EvalSuiteResult
    from ._gates import GateVerdict
    from ._robustness import Measured

__all__ = ["Reports", "finish", "report_options", "write_reports"]


@dataclass(frozen=True)
class Reports:
    """What a suite's command writes and how it judges the suite.

    Attributes:
        json_path: The JSON report (None: not written).
        junit_path: The JUnit XML (None: not written).
        html_path: The self-contained HTML report (None: not written).
        fail_under: The pass rate gate: succeed when the pass rate reaches this, instead
            of every run passing (a run that ended in ``error`` still fails, unless
            `allow_errors`). See `adk_eval._cli._gates` for every gate.
        allow_errors: Turn the errors gate off: the other gates judge ``error`` runs as
            failed runs.
        db: The runs database.
        no_store: Do not append the run to the database.
        verbose: Explain every run, not only those that did not pass.
        fail_on: The party gate: fail on runs not ok attributed to these parties, instead
            of on every run not ok (errors, xpassed and runs not run fail their own gates).
        live_run: The id the run was stored under as it started (None: stored at the end).
    """

    json_path: Path | None = None
    junit_path: Path | None = None
    html_path: Path | None = None
    fail_under: float | None = None
    allow_errors: bool = False
    db: Path | None = None
    no_store: bool = False
    verbose: bool = False
    fail_on: tuple[str, ...] = ()
    live_run: int | None = None

    @property
    def store(self) -> Path | None:
        """The database the run is appended to (None: not stored)."""
        return None if self.no_store else self.db

    def check_store(self) -> None:
        """Finds a bad ``--db`` before anything runs, not after (one error line)."""
        if self.store is None:
            return
        from .._errors import AdkEvalError
        from ..reporting._store import RunStore

        try:
            RunStore(self.store).check()
        except AdkEvalError as error:
            fail(str(error))


def _path_option(flag: str, name: str, what: str) -> Any:
    return click.option(flag, name, type=click.Path(dir_okay=False, path_type=Path), help=what)


report_options = grouped(
    "reports",
    Reports,
    _path_option("--json", "json_path", "Write the JSON report here."),
    _path_option("--junit-xml", "junit_path", "Write JUnit XML here."),
    _path_option(
        "--html", "html_path", "Write a self-contained HTML report here (no server, no network)."
    ),
    click.option(
        "--fail-under",
        type=click.FloatRange(0, 1),
        metavar="RATE",
        help="Succeed when the pass rate (0-1, xfailed runs left out) reaches RATE, instead of "
        "requiring every run to pass; a run that ended in error, an xpassed run or a run not "
        "run still fails the command (see --allow-errors).",
    ),
    click.option(
        "--allow-errors",
        is_flag=True,
        help="Do not fail on runs that ended in error (a broken case: an unmocked tool, a "
        "crashed mock) as such: --fail-under and --fail-on judge them as failed runs.",
    ),
    db_option,
    click.option("--no-store", is_flag=True, help="Do not append the run to the database."),
    click.option(
        "-v", "--verbose", is_flag=True, help="Explain every run, not only those that did not pass."
    ),
    click.option(
        "--fail-on",
        type=click.Choice(["agent", "simulated_user", "setup", "provider", "unknown"]),
        multiple=True,
        metavar="PARTY",
        help="Fail only on failures attributed to PARTY (repeatable: agent, simulated_user, "
        "setup, provider, unknown); the others are still reported. Runs that ended in error "
        "still fail the command unless --allow-errors.",
    ),
)
"""The options of whatever ends in a suite, handed to the command as ``reports``."""


def write_reports(
    out: Console,
    suite: EvalSuiteResult,
    reports: Reports,
    command: str,
    robustness: dict[str, Any] | None = None,
) -> None:
    """Writes the reports `reports` asks for, and stores the run (with `robustness`, if any).

    None asked (``--no-store``, no report option): no report is built, and no
    writer imported.
    """
    paths = (reports.json_path, reports.junit_path, reports.html_path, reports.store)
    if all(path is None for path in paths):
        return
    from ..reporting._json_report import suite_report

    report = suite_report(suite, command=command)
    if robustness is not None:  # ``run --faults``: the pass with faults against this one
        report["robustness"] = robustness
    if reports.json_path is not None:
        from .. import _strict_json as strict_json

        reports.json_path.parent.mkdir(parents=True, exist_ok=True)
        reports.json_path.write_text(strict_json.dumps(report, indent=2))
        out.print(f"JSON report: {reports.json_path}")
    if reports.junit_path is not None:
        from ..reporting._junit import write_junit_xml

        write_junit_xml(suite, reports.junit_path)
        out.print(f"JUnit XML: {reports.junit_path}")
    if reports.html_path is not None:
        from ..reporting._html import write_html_report

        write_html_report(report, reports.html_path)
        out.print(f"HTML report: {reports.html_path}")
    if reports.store is not None:
        _store(out, report, reports, command)


def _store(out: Console, report: dict[str, Any], reports: Reports, command: str) -> None:
    """Appends `report` to the runs database (a database that is not one: one error line)."""
    from .._errors import AdkEvalError
    from ..reporting._store import RunStore

    assert reports.store is not None
    try:
        run_id = RunStore(reports.store).append(report, command=command, run_id=reports.live_run)
    except AdkEvalError as error:
        fail(str(error))
    out.print(f"stored as run {run_id} in {reports.store} (compare runs: adk-eval compare)")


def finish(
    out: Console,
    suite: EvalSuiteResult,
    reports: Reports,
    command: str,
    threads_before: set[int | None] | None,
    *,
    most: int | None = None,
    robustness: Measured | None = None,
) -> NoReturn:
    """The table, explanations, summary, reports and exit code of a run (or a merge).

    With `most` (a score of thousands of sessions), the table shows only the runs
    that did not pass, at most `most` rows and explanations (``-v``: every run's).
    With `robustness` (``run --faults``), its table and sentence come before the
    summary line, its object goes into the reports and its gate joins the others.
    """
    shown = suite
    if most is not None and not reports.verbose:
        unpassed = [result for result in suite.results if not result.passed]
        shown = replace(suite, results=unpassed[:most])
        if len(unpassed) > most:
            out.print(f"the first {most} of {len(unpassed)} runs that did not pass:")
    if robustness is not None:  # the progress just above was the pass with faults
        out.print("without faults (the pass the reports and gates judge):")
    if shown.results or shown.not_run:
        out.print(suite_table(shown))
    for text in explanations(shown.results, every_run=reports.verbose):
        out.print()
        out.print(text, markup=False)
    warned = warning_lines(suite.results, every_run=reports.verbose)
    met = provider_lines(shown.results, every_run=reports.verbose)
    for block in (warned, met):
        if block:
            out.print()
            out.print("\n".join(block), markup=False, highlight=False)
    from ..reporting._safety import safety_lines, safety_section

    safety = safety_lines(safety_section(suite.results, suite.seed, command))
    if safety:
        out.print()
        out.print("\n".join(safety), markup=False, highlight=False)
    out.print()
    lines = (budget_line, adaptive_line, party_line, unchecked_line, cost_words, provider_line)
    for line in (make(suite) for make in lines):
        if line:
            out.print(line, markup=False, highlight=False)
    if robustness is not None:
        robustness.print(out)
    out.print(summary_line(suite))  # last: what a CI log's tail shows
    measured = robustness.to_dict() if robustness is not None else None
    write_reports(out, suite, reports, command, measured)
    extra = robustness.verdict() if robustness is not None else None
    exit_process(_gated(out, suite, reports, extra), out, threads_before)


def _gated(
    out: Console, suite: EvalSuiteResult, reports: Reports, extra: GateVerdict | None = None
) -> int:
    """The exit code the gates give (`adk_eval._cli._gates`): 1 when any fails.

    With a gate option, each gate's verdict is printed, then which failed; without
    one, the summary line already says why every run was not ok.
    """
    verdicts = gate_verdicts(
        suite,
        fail_under=reports.fail_under,
        fail_on=reports.fail_on,
        allow_errors=reports.allow_errors,
    )
    if extra is not None:  # --fail-on-robustness-drop
        verdicts.append(extra)
    failed = [verdict for verdict in verdicts if verdict.failed]
    if reports.fail_under is not None or reports.fail_on or reports.allow_errors or extra:
        for verdict in verdicts:
            out.print(str(verdict), style="bold red" if verdict.failed else None, markup=False)
        names = ", ".join(verdict.gate for verdict in failed)
        out.print(
            f"exit {EXIT_FAILED}: failed gate(s) {names}" if failed else "exit 0: every gate passed"
        )
    return EXIT_FAILED if failed else 0
