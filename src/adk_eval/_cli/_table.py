"""The summary table of a suite: a row per run (or per case, with repeats), fitted to the width.

The table is laid out when it is printed, for the width it gets (80 columns in a CI
log). Columns of short values (status, replies, rates, label, cost, party) never
wrap. Case names are never cut, since two names sharing a prefix must not look
alike: a name wider than 60 columns folds. Failed metric names wrap between names,
and a name wider than its column is cut with an ellipsis, never split inside (the
explanations below the table give it whole). The widest layout that fits is used:

1. the whole table;
2. the table without its failed metrics and party, which follow it, one line per
   row that has any (``  case: failed metrics: a, b; party: agent``);
3. no table: each row's case on a line of its own, its values, named, on the next.

It imports no ADK: the types it reads come in for type checkers only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, OverflowMethod, RenderResult

    from .._result import EvalResult
    from .._suites._results import CaseStats, EvalSuiteResult

__all__ = ["STYLE", "SuiteTable", "dollars", "outcome_text", "suite_table"]

STYLE = {
    "passed": "green",
    "xfailed": "yellow",
    "failed": "red",
    "xpassed": "red",
    "terminated": "magenta",
    "error": "bold red",
}
"""The colour of each outcome, wherever it is printed."""

_LABEL_STYLE = {"stable-pass": "green", "flaky": "yellow", "stable-fail": "red"}
_METRICS = "Failed metrics"
_WIDEST_CASE = 60  # wider names fold even when the console has room
_NARROWEST_METRICS = 16  # a failed metrics column narrower than this moves under the table


def outcome_text(result: EvalResult) -> Text:
    """``PASSED``, ``XFAILED``, ...; ``PASSED (no metrics)`` for a pass that checked nothing."""
    unchecked = " (no metrics)" if result.passed and not result.metrics else ""
    return Text(result.outcome.upper() + unchecked, style=STYLE.get(result.outcome, ""))


def dollars(cost: float | None) -> str:
    """``$0.0123`` (four significant digits below a cent), ``?`` for an unknown cost."""
    if cost is None:
        return "?"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4g}"


def suite_table(suite: EvalSuiteResult) -> SuiteTable:
    """One row per run (repeat 1) or per case (with repeats), laid out when printed."""
    return SuiteTable(suite)


@dataclass(frozen=True)
class SuiteTable:
    """The summary table of `suite`: a Rich renderable fitted to its console's width."""

    suite: EvalSuiteResult

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The widest of the three layouts (see the module doc) that fits the width."""
        headers, rows = _cells(self.suite)
        natural = [
            max([_length(header), *(_length(row[index]) for row in rows)])
            for index, header in enumerate(headers)
        ]
        metrics = headers.index(_METRICS)
        case = min(natural[0], _WIDEST_CASE)
        room = _room(options.max_width, natural, skip=(0, metrics))  # for case and metrics
        least = min(natural[metrics], _NARROWEST_METRICS)
        if room >= case + least:
            yield _table(headers, rows, case, room - case)
        elif _room(options.max_width, natural[:metrics], skip=(0,)) >= case:
            yield _table(headers[:metrics], [row[:metrics] for row in rows], case)
            yield from _under(headers[metrics:], [(row[0], row[metrics:]) for row in rows], options)
        else:
            yield from _under(headers[1:], [(row[0], row[1:]) for row in rows], options, True)


def _under(
    headers: Sequence[str],
    rows: Sequence[tuple[str | Text, Sequence[str | Text]]],
    options: ConsoleOptions,
    every_row: bool = False,
) -> RenderResult:
    """Cells as lines, named by their headers.

    With `every_row`, each row's case on a line of its own and its cells under it;
    else one line per row that has any, after the table. Lines wrap between words; a
    word wider than the width is cut with an ellipsis, never split (where lines do
    not wrap, as in the command's CI log, nothing is cut). A case name is never cut:
    alone on its line, it folds.
    """
    overflow: OverflowMethod | None = None if options.no_wrap else "ellipsis"
    for case, cells in rows:
        named = Text("; ").join(
            Text.assemble(f"{header.lower()}: ", cell)
            for header, cell in zip(headers, cells, strict=True)
            if _plain(cell)
        )
        if every_row:
            yield Text(_plain(case), style="bold")
        elif not named:
            continue
        else:
            named = Text.assemble(f"{_plain(case)}: ", named)
        yield Text.assemble("  ", named, overflow=overflow)


def _room(width: int, natural: Sequence[int], skip: tuple[int, ...]) -> int:
    """What `width` leaves for the columns `skip` once the others, padding and borders fit."""
    fixed = sum(size for index, size in enumerate(natural) if index not in skip)
    return width - fixed - (3 * len(natural) + 1)


def _plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _length(cell: str | Text) -> int:
    return max((cell_len(line) for line in _plain(cell).splitlines()), default=0)


def _table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str | Text]],
    case: int,
    metrics: int | None = None,
) -> Table:
    """The table of `rows`, its case column `case` wide, its failed metrics at most `metrics`."""
    table = Table(title=None, show_lines=False, header_style="bold")
    for header in headers:
        if header == "Case":
            table.add_column(header, width=case, overflow="fold")
        elif header == _METRICS:
            table.add_column(header, max_width=metrics, overflow="ellipsis")
        else:
            right = header in ("Replies", "Duration", "Cost")
            table.add_column(header, justify="right" if right else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def _cells(suite: EvalSuiteResult) -> tuple[list[str], list[list[str | Text]]]:
    """The headers and rows of `suite`'s table (the party last, when a run has one)."""
    party = any(result.attribution is not None for result in suite.results)
    rows: list[list[str | Text]] = []
    if suite.repeat == 1:
        headers = ["Case", "Status", "Replies", "Duration", "Cost", _METRICS]
        for result in suite.results:
            rows.append(
                [
                    result.name,
                    outcome_text(result),
                    str(result.turns),
                    f"{result.duration_ms / 1000:.1f}s",
                    dollars(result.cost_usd),
                    failed_metrics(result),
                    *([_party(result)] if party else []),
                ]
            )
        for name in suite.not_run:
            rows.append([name, Text("NOT RUN", style="dim"), "", "", "", "", *[""] * party])
    else:  # replies: in the JSON report
        headers = ["Case", "Pass rate (95%)", "pass^k", "pass@k", "Label", "Cost", _METRICS]
        for stats in suite.cases:
            parties = sorted({_party(r) for r in stats.runs if r.attribution is not None})
            rows.append([*_case_row(stats), *([", ".join(parties)] if party else [])])
    return headers + ["Party"] * party, rows


def failed_metrics(result: EvalResult) -> str:
    """What a run failed on: its failed metrics, its limit, or its error's first line."""
    if result.error is not None:
        from .._result._status import phase_words

        where = phase_words(result.error.phase)
        return f"error in {where}: {result.error.message.splitlines()[0][:80]}"
    names = list(result.failed_metrics)
    if result.termination_reason in ("max_turns", "max_duration", "max_model_calls"):
        names.append(f"({result.termination_reason})")
    return ", ".join(names)


def _party(result: EvalResult) -> str:
    """The party a run that did not pass is attributed to (flaky marked), else nothing."""
    found = result.attribution
    return "" if found is None else found.party + (" (flaky)" if found.flaky else "")


def _case_row(stats: CaseStats) -> list[str | Text]:
    runs = stats.runs
    failed: set[str] = set()
    for result in runs:
        failed.update(failed_metrics(result).split(", ") if not result.passed else [])
    if runs and all(result.outcome == "xfailed" for result in runs):  # failed as expected
        label = Text("xfailed", style=STYLE["xfailed"])
    else:
        label = Text(stats.label, style=_LABEL_STYLE[stats.label])
    interval = stats.pass_rate_interval
    return [
        stats.name,
        f"{stats.passes}/{len(runs)}"
        + ("" if len(runs) == stats.repeat else f" of {stats.repeat}")
        + f" {interval.low:.0%}-{interval.high:.0%}",
        Text("yes" if stats.pass_hat_k else "no", style="green" if stats.pass_hat_k else "red"),
        Text("yes" if stats.pass_at_k else "no", style="green" if stats.pass_at_k else "red"),
        label,
        dollars(stats.cost_usd),
        ", ".join(sorted(f for f in failed if f)),
    ]
