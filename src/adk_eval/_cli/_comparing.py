"""What ``adk-eval compare`` prints: a row per case with its decision, and the suite's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

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
    """``6/6 -> 0/6`` (passes of runs), ``passed -> failed`` for one run, ``- -> passed``."""
    if change.passes is not None and max(change.passes[1], change.passes[3]) > 1:
        a, n_a, b, n_b = change.passes
        return f"{a}/{n_a} -> {b}/{n_b}"
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
    tested = [c.passes for c in comparison.changes if c.passes is not None]
    if tested and all(min(p[1], p[3]) < 4 for p in tested):
        lines.append(
            "note: with fewer than 4 runs of a case on a side, no drop of that case is ever "
            "decided (4/4 -> 0/4 gives p=0.014); use --repeat 4 or more to tell a "
            "regression from noise"
        )
    return "\n".join(lines)
