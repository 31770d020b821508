"""What the `adk-eval` command prints: live progress, summary tables, comparisons.

It imports no ADK: the types it reads come in for type checkers only.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from ..models._gateway._stats import ProviderStats
from ._table import STYLE, dollars, outcome_text, suite_table

if TYPE_CHECKING:
    from .._result import EvalResult
    from .._suites._inventory import RunsForReal
    from .._suites._results import EvalSuiteResult
    from ..reporting._store import RunInfo

__all__ = [
    "LiveProgress",
    "adaptive_line",
    "budget_line",
    "cost_words",
    "dollars",
    "explanations",
    "party_line",
    "provider_line",
    "provider_lines",
    "runs_for_real_lines",
    "runs_table",
    "suite_table",
    "unchecked_line",
    "warning_lines",
]


def unchecked_line(suite: EvalSuiteResult) -> str | None:
    """A note on the passed runs of cases without metrics: they only ran to the end."""
    names = sorted({r.name for r in suite.results if r.passed and not r.metrics})
    if not names:
        return None
    return (
        f"note: {len(names)} case(s) have no metrics, so passing only means they ran to the "
        f"end: {', '.join(names)}"
    )


class LiveProgress:
    """A progress bar with pass/fail counts on a terminal; one line per run elsewhere (CI logs)."""

    def __init__(self, console: Console, total: int | None) -> None:
        self.console = console
        self.total = total
        self.counts = {"passed": 0, "failed": 0, "error": 0}
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if console.is_terminal:
            self._progress = Progress(
                TextColumn("[bold]Running[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )

    def _counts_text(self) -> str:
        return " ".join(
            f"[{STYLE.get(outcome, '')}]{count} {outcome}[/]"
            for outcome, count in self.counts.items()
            if count or outcome in ("passed", "failed", "error")
        )

    def __enter__(self) -> LiveProgress:
        if self._progress is not None:
            self._progress.__enter__()
            self._task = self._progress.add_task(
                "run", total=self.total, counts=self._counts_text()
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)

    def finished(self, result: EvalResult) -> None:
        """Counts a finished run and shows it."""
        from .._result._status import replies

        self.counts[result.outcome] = self.counts.get(result.outcome, 0) + 1
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, counts=self._counts_text())
        else:
            done = sum(self.counts.values())
            line = Text.assemble(
                f"[{done}/{self.total if self.total is not None else '?'}] ",
                outcome_text(result),
                f" {result.name}"
                + (f" (run {result.attempt + 1})" if result.attempt else "")
                + f" ({replies(result.turns)}, {result.duration_ms / 1000:.1f}s)",
            )
            self.console.print(line, highlight=False)


def explanations(results: Sequence[EvalResult], *, every_run: bool = False) -> list[str]:
    """The explanation of each run that did not pass (`every_run`: of each run), once.

    Runs of a case that ended the same way (the same explanation, timing aside),
    as repeats often do, are explained once, saying which attempts they were.
    """
    groups: dict[tuple[str, str], list[EvalResult]] = {}
    for result in results:
        if every_run or not result.passed:
            head, _, rest = result.explain().partition("\n")
            untimed = head.rsplit(", ", 1)[0]  # the header ends with the run's duration
            groups.setdefault((untimed, rest), []).append(result)
    texts = []
    for runs in groups.values():
        head, _, rest = runs[0].explain().partition("\n")
        lines = [head]
        if len(runs) > 1:
            attempts = ", ".join(str(run.attempt + 1) for run in runs)
            lines.append(f"{len(runs)} runs ended this way (runs {attempts})")
        met = sum((run.provider for run in runs), ProviderStats())
        if met.eventful:  # beside the run, not in the grouping: waits differ between repeats
            together = f" ({len(runs)} runs together)" if len(runs) > 1 else ""
            lines.append(f"providers{together}: {met.line()}")
        texts.append("\n".join([*lines, rest] if rest else lines))
    return texts


def warning_lines(results: Sequence[EvalResult], *, every_run: bool = False) -> list[str]:
    """The warnings of the runs `explanations` leaves out (those that passed), one line each.

    A run that is explained lists its warnings there. A warning that several
    runs of a case gave (repeats) is listed once, naming their attempts.
    """
    attempts: dict[tuple[str, str], list[int]] = {}
    for result in results:
        if every_run or not result.passed:
            continue
        for warning in (*result.warnings, *_misfits(result)):
            attempts.setdefault((result.name, warning), []).append(result.attempt)
    if not attempts:
        return []
    lines = ["warnings of runs that passed:"]
    for (name, warning), runs in attempts.items():
        if runs != [0]:
            counted = ", ".join(str(attempt + 1) for attempt in runs)  # as people count
            name += f" (run{'s' if len(runs) > 1 else ''} {counted})"
        lines.append(f"  {name}: {warning}")
    return lines


PROVIDER_LINES_AT_MOST = 10
"""Passed runs listed by `provider_lines`; the suite's line sums them all."""


def provider_lines(results: Sequence[EvalResult], *, every_run: bool = False) -> list[str]:
    """What the model calls met at their providers, for the runs `explanations` leaves out.

    One line per passed run that was refused or waited (retries, a wait for
    quota), the longest waits first, at most `PROVIDER_LINES_AT_MOST`; what the
    cache and cassettes answered is the suite's line alone (with ``--cache all``
    every run has some). A run that is explained says it there.
    """
    repeated = {result.name for result in results if result.attempt}
    met = [
        result
        for result in results
        if result.passed
        and not every_run
        and (result.provider.retries or result.provider.waited_s >= 0.05)
    ]
    met.sort(key=lambda result: -result.provider.waited_s)
    lines = [
        f"  {result.name}"
        + (f" (run {result.attempt + 1})" if result.name in repeated else "")
        + f": {result.provider.line()}"
        for result in met[:PROVIDER_LINES_AT_MOST]
    ]
    if len(met) > PROVIDER_LINES_AT_MOST:
        lines.append(
            f"  ... and {len(met) - PROVIDER_LINES_AT_MOST} more (the JSON report has each)"
        )
    return ["providers of runs that passed:", *lines] if lines else []


def provider_line(suite: EvalSuiteResult) -> str | None:
    """``providers: 14 retries (14 rate-limited), waited 38.2 s; cache ...``, when eventful.

    The suite's runs summed (`EvalSuiteResult.provider`); nothing when no run retried,
    waited, used the cache or a cassette.
    """
    met = suite.provider
    return f"providers: {met.line()}" if met.eventful else None


def _misfits(result: EvalResult) -> list[str]:
    """A passed run's calls that did not fit their tool (a real model's mistakes), a line each."""
    from .._transcript import argument_lines  # imports ADK's types: not at start-up

    lines: list[str] = []
    for line in argument_lines(result.trace):
        if line.startswith("  - ") and lines:
            lines[-1] += (": " if lines[-1].endswith(("ADK", "answered")) else "; ") + line[4:]
        else:
            lines.append(f"call {line}")
    return lines


def runs_for_real_lines(inventory: RunsForReal) -> list[str]:
    """The block ``run`` prints before the first case: what runs for real, one item a line."""
    head = "runs for real besides the tools the cases provide:"
    if inventory.nothing:
        head = "runs for real: nothing besides the tools the cases provide"
    return [head, *(f"  {line}" for line in inventory.lines())]


def cost_words(suite: EvalSuiteResult) -> str:
    """``12,345 tokens, cost $0.0123 ($0.0041 per passing run)``, or why the cost is unknown."""
    if not suite.tokens:
        return ""
    if suite.cost_usd is None:
        unpriced = ", ".join(suite.unpriced_models)
        return f"{suite.tokens:,} tokens, cost unknown (no price for {unpriced})"
    per = suite.cost_per_passing_run
    each = f" ({dollars(per)} per passing run)" if per is not None else ""
    return f"{suite.tokens:,} tokens, cost {dollars(suite.cost_usd)}{each}"


def summary_line(suite: EvalSuiteResult) -> Text:
    """``3 passed, 1 xfailed in 4.2s; pass rate 100% [44%, 100%] (95% interval)``.

    Counts that are zero are left out; with repeats, pass^k over the cases follows.
    """
    s = suite.summary
    order = ["passed", "failed", "errors", "terminated", "xfailed", "xpassed", "not_run"]
    labels = {"errors": "error(s)", "not_run": "not run"}
    parts = [
        Text(f"{s[key]} {labels.get(key, key)}", style=STYLE.get(key, ""))
        for key in order
        if s[key]
    ]
    line = Text(", ").join(parts) if parts else Text("no runs")
    line.append(f" in {suite.duration_ms / 1000:.1f}s")
    counted = s["total"] - s["not_run"] - s["xfailed"]
    if s["not_run"]:  # a rate over what ran must not read as the whole suite's
        line.append(f"; only {s['total'] - s['not_run']} of {s['total']} runs ran", style="bold")
    # the rate, its interval and pass^k count the same runs, and say which they left out
    xfailed = f"; {s['xfailed']} xfailed run(s) left out" if s["xfailed"] else ""
    if counted:
        line.append(f"; pass rate {suite.pass_rate_interval} (95% interval{xfailed})")
    elif s["xfailed"]:
        line.append(f"; no pass rate: all {s['xfailed']} finished run(s) xfailed")
    counted_cases = suite.counted_cases
    if suite.repeat > 1 and counted_cases:
        reliable = sum(stats.pass_hat_k for stats in counted_cases)
        k = "k" if suite.adaptive is not None else str(suite.repeat)  # adaptive: each its own k
        left_out = sum(1 for stats in suite.cases if stats.runs) - len(counted_cases)
        line.append(
            f"; pass^{k} {reliable}/{len(counted_cases)} cases {suite.pass_hat_k_interval}"
            + (f" ({left_out} all-xfailed case(s) left out)" if left_out else "")
        )
    return line


def party_line(suite: EvalSuiteResult) -> str | None:
    """``failures by party: agent 2, simulated_user 1`` (every run that did not pass).

    Expected failures are attributed too; the line says how many of them there are.
    """
    counts: dict[str, int] = {}
    for result in suite.results:
        if result.attribution is not None:
            counts[result.attribution.party] = counts.get(result.attribution.party, 0) + 1
    if not counts:
        return None
    xfailed = sum(1 for r in suite.results if r.attribution is not None and r.outcome == "xfailed")
    return (
        "failures by party: "
        + ", ".join(f"{p} {n}" for p, n in sorted(counts.items()))
        + (f" ({xfailed} of them xfailed, as expected)" if xfailed else "")
    )


def budget_line(suite: EvalSuiteResult) -> str | None:
    """When the suite's budget stopped it: which limit, what was spent, what did not run."""
    if suite.budget_reached is None:
        return None
    left = f"; not run: {', '.join(suite.not_run)}" if suite.not_run else ""
    return f"stopped: the suite's budget was spent ({suite.budget_reached}){left}"


def adaptive_line(suite: EvalSuiteResult) -> str | None:
    """With adaptive repeats: the runs each case needed and the runs saved against the maximum."""
    if suite.adaptive is None:
        return None
    ran = sum(stats.repeat for stats in suite.cases)
    fixed = suite.repeat * len(suite.cases)
    needed = ", ".join(f"{stats.name} {stats.repeat}" for stats in suite.cases)
    return (
        f"adaptive repeats {suite.adaptive}: {ran} runs instead of {fixed} "
        f"({suite.attempts_saved} saved); runs per case: {needed}"
    )


def runs_table(runs: Sequence[RunInfo]) -> Table:
    """The stored runs, newest first.

    ``Passed`` counts the runs the pass rate counts (``3/3``), then what it left
    out: ``(2 xfailed left out)``, ``(1 not run)``.
    """
    table = Table(header_style="bold")
    for column in ("Run", "When", "Passed", "Pass rate"):
        table.add_column(column, no_wrap=True)
    table.add_column("Command", overflow="fold")
    for run in runs:
        left_out = [
            f"{count} {what}"
            for count, what in ((run.xfailed, "xfailed left out"), (run.not_run, "not run"))
            if count
        ]
        table.add_row(
            str(run.id),
            run.created_at[:19].replace("T", " "),
            f"{run.passes}/{run.counted}" + (f" ({', '.join(left_out)})" if left_out else ""),
            f"{run.pass_rate:.0%}" if run.counted else "-",  # no run counted: no rate
            run.command + _LIVE.get(run.live or "", ""),
        )
    return table


_LIVE = {"running": " (running)", "abandoned": " (ended early: its process stopped)"}
"""How `runs` marks a run stored as it runs (see `RunStore.begin`)."""
