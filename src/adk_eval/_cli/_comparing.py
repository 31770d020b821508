"""What ``adk-eval compare`` prints: a row per case with its decision, and the suite's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from .._statistics import fisher, runs_to_decide
from ._output import dollars

if TYPE_CHECKING:
    from ..reporting._compare import CaseChange, Comparison, NoiseFloor

__all__ = ["comparison_summary", "comparison_table"]


def comparison_table(
    comparison: Comparison, run_a: int, run_b: int, noise: Mapping[str, NoiseFloor] | None = None
) -> Table:
    """One row per case: the test's decision, status and pass rate before and after, noise."""
    table = Table(title=f"run {run_a} -> run {run_b}", header_style="bold")
    names = [change.name for change in comparison.changes]
    table.add_column("Case", min_width=min(max(map(len, names), default=4), 40), overflow="fold")
    table.add_column("Decision", no_wrap=True)
    table.add_column(f"Passed {run_a} -> {run_b}", no_wrap=True)
    table.add_column("p", no_wrap=True)
    table.add_column("Noise", no_wrap=True)
    table.add_column("Metric score changes", overflow="fold")
    styles = {
        "regressed": "bold red",
        "improved": "green",
        "no evidence": "dim",
        "added": "cyan",
        "removed": "cyan",
    }
    for change in comparison.changes:
        decision: str = change.decision or change.kind
        if change.decision == "no evidence" and change.kind != "unchanged":
            decision = f"no evidence ({'down' if change.kind == 'regression' else 'up'})"
        if change.before == "xfailed" and change.after in ("failed", "error", "terminated"):
            decision = "expected failure -> real failure"  # its xfail marker is gone
        elif change.before in ("failed", "error", "terminated") and change.after == "xfailed":
            decision = "failure -> expected failure"
        elif change.passes is not None and change.p_value is None:
            decision = "not tested (xfail)"
        deltas = ", ".join(
            f"{name} {before:.2f} -> {after:.2f}"
            for name, (before, after) in change.metric_deltas.items()
        )
        floor = (noise or {}).get(change.name)
        table.add_row(
            change.name,
            Text(decision, style=styles[change.decision or change.kind]),
            _compared_cell(change),
            "-" if change.p_value is None else f"{change.p_value:.3f}",
            str(floor) if floor is not None else "-",
            deltas,
        )
    return table


def _compared_cell(change: CaseChange) -> str:
    """``6/6 -> 0/6`` (passes of runs), ``passed -> failed`` for one run, ``- -> passed``.

    Xfailed runs, left out of the counts, follow them: ``6/6 -> 0/0 +6 xfailed``.
    """
    if change.passes is None:
        return f"{change.before or '-'} -> {change.after or '-'}"
    a, n_a, b, n_b = change.passes
    x_a, x_b = change.xfailed
    if max(n_a + x_a, n_b + x_b) > 1:
        before, after = (
            f"{passes}/{runs}" + (f" +{xfailed} xfailed" if xfailed else "")
            for passes, runs, xfailed in ((a, n_a, x_a), (b, n_b, x_b))
        )
        return f"{before} -> {after}"
    return f"{change.before or '-'} -> {change.after or '-'}"


def comparison_summary(comparison: Comparison) -> str:
    """The suite's decision and the counts of the cases', in words, with the test named."""
    a, n_a, b, n_b = comparison.passes
    counts: dict[str, int] = {}
    for change in comparison.changes:
        key = change.decision or change.kind
        counts[key] = counts.get(key, 0) + 1
    order = ("regressed", "improved", "no evidence", "added", "removed")
    cases = ", ".join(f"{counts[key]} {key}" for key in order if counts.get(key)) or "no cases"
    lines = [
        f"cases: {cases}",
        f"suite: {comparison.decision} (runs passed {a}/{n_a} -> {b}/{n_b}, one-sided "
        f"p={comparison.p_value:.3f}; Fisher's exact test at alpha {comparison.alpha:g}, "
        "cases Holm-corrected)",
    ]
    if comparison.cost_per_passing_run != (None, None):
        before, after = (dollars(c) for c in comparison.cost_per_passing_run)
        lines.append(f"cost per passing run: {before} -> {after}")
    note = _too_few_runs(comparison)
    if note:
        lines.append(note)
    return "\n".join(lines)


def _too_few_runs(comparison: Comparison) -> str | None:
    """Which tested cases have too few runs a side for any drop of theirs to be decided."""
    tested = [c.passes for c in comparison.changes if c.passes and c.p_value is not None]
    if not tested:
        return None
    need = runs_to_decide(len(tested), comparison.alpha)
    short = sum(min(p[1], p[3]) < need for p in tested)
    if not short:
        return None
    flip = fisher(need, need, 0, need)[0]
    among = (
        f"among {len(tested)} compared cases (Holm's correction tests the strongest drop at "
        f"alpha/{len(tested)} = {comparison.alpha / len(tested):.3g})"
        if len(tested) > 1
        else f"at alpha {comparison.alpha:g}"
    )
    return (
        f"note: {short} of {len(tested)} compared case(s) have fewer than {need} runs on a side; "
        f"{among} no drop of theirs can be decided ({need}/{need} -> 0/{need} gives "
        f"p={flip:.3g}); use --repeat {need} or more to tell a regression from noise"
    )
