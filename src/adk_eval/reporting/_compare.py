"""Comparing two suite reports: per-case regressions and improvements, decided by a test.

A drop in a pass rate is not yet a regression: LLM agents are noisy. Each case
present in both runs gets a **decision** from Fisher's exact test on its passes
and runs in A and in B (`adk_eval._statistics.fisher`, `holm`):

* ``regressed``: B's pass rate is lower, and the chance of a drop this large
  between two runs of the same agent is below `alpha` (default 0.05), after
  Holm's correction for testing every case (the more cases, the more drops
  happen by chance);
* ``improved``: the same, upwards;
* ``no evidence``: the rates differ (or not) by no more than chance explains.
  One run on each side can never decide (p >= 0.5): repeat the runs.

The suite gets the same test on its runs pooled over the cases in both (runs
taken as independent). `CaseChange.kind` keeps the raw direction of the change.

The tests count the runs the suite's pass rate counts: an ``xfailed`` run (a
case marked `xfail` failing as expected) is left out, an ``xpassed`` one counts
as passed. So a case whose runs were all expected failures on a side is not
tested (``no evidence``, no p-value, outside Holm's correction), and
``--fail-on-regression`` never fails on an expected failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, Literal, TypeAlias

from .._statistics import fisher, holm

__all__ = [
    "DEFAULT_ALPHA",
    "CaseChange",
    "Comparison",
    "Decision",
    "NoiseFloor",
    "compare_reports",
    "noise_floor",
]

ChangeKind: TypeAlias = Literal["regression", "improvement", "unchanged", "added", "removed"]
Decision: TypeAlias = Literal["regressed", "improved", "no evidence"]

DEFAULT_ALPHA = 0.05
"""The chance of calling a change that is only noise a regression (or an improvement)."""


@dataclass(frozen=True)
class CaseChange:
    """How one case changed between two runs.

    Attributes:
        name: The case.
        kind: ``regression`` (pass rate went down), ``improvement`` (up),
            ``unchanged``, ``added`` or ``removed``.
        before: Status (one run) or stability label (repeats) in run A.
        after: The same in run B.
        rate_before: Pass rate in run A (None if absent).
        rate_after: Pass rate in run B (None if absent).
        metric_deltas: Metric -> (mean score in A, mean score in B), for metrics
            in both runs whose mean score changed. A metric's score is its
            `score`, or 1/0 for passed/failed when it has none.
        passes: ``(passes in A, runs in A, passes in B, runs in B)`` (cases in both),
            the runs the pass rate counts: xfailed runs left out.
        decision: ``regressed``, ``improved`` or ``no evidence`` (cases in both; see
            the module doc), None for added and removed cases.
        p_value: Fisher's one-sided p-value in the direction of the change (the
            lower of the two when the rates are equal), before Holm's correction;
            None when a side has no run to count (every one xfailed).
        xfailed: ``(xfailed runs in A, in B)``, left out of `passes`.
    """

    name: str
    kind: ChangeKind
    before: str | None
    after: str | None
    rate_before: float | None
    rate_after: float | None
    metric_deltas: dict[str, tuple[float, float]] = field(default_factory=dict)
    passes: tuple[int, int, int, int] | None = None
    decision: Decision | None = None
    p_value: float | None = None
    xfailed: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class Comparison:
    """All case changes between run A and run B, and the suite's decision.

    Attributes:
        changes: One per case, in B's order, then the removed ones.
        alpha: The significance level of every decision.
        decision: The suite's: its runs pooled over the cases in both.
        p_value: The suite's one-sided p-value in the direction of its change.
        passes: The suite's ``(passes in A, runs in A, passes in B, runs in B)``.
        cost_per_passing_run: What a passing run cost in A and in B, in US dollars
            (None: unknown, or a report from before costs were kept).
    """

    changes: list[CaseChange]
    alpha: float = DEFAULT_ALPHA
    decision: Decision = "no evidence"
    p_value: float = 1.0
    passes: tuple[int, int, int, int] = (0, 0, 0, 0)
    cost_per_passing_run: tuple[float | None, float | None] = (None, None)

    @property
    def decided_regressions(self) -> list[CaseChange]:
        """Cases whose regression the test decided (what ``--fail-on-regression`` fails on)."""
        return [change for change in self.changes if change.decision == "regressed"]

    def of_kind(self, kind: ChangeKind) -> list[CaseChange]:
        """The changes of one kind."""
        return [change for change in self.changes if change.kind == kind]

    @property
    def regressions(self) -> list[CaseChange]:
        """Cases whose pass rate went down (or that passed and now do not)."""
        return self.of_kind("regression")


def _case_view(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    view: dict[str, dict[str, Any]] = {}
    for case in report["cases"]:
        runs = [r for r in report["results"] if r["name"] == case["name"]]
        if report["repeat"] == 1 and runs:
            status = runs[0]["outcome"]
        else:
            status = case["label"] if runs else "not run"
        scores: dict[str, list[float]] = {}
        for run in runs:
            for name, metric in run["metrics"].items():
                score = metric["score"]
                value = float(score) if score is not None else float(metric["passed"])
                scores.setdefault(name, []).append(value)
        view[case["name"]] = {
            "status": status,
            "rate": case["pass_rate"] if runs else None,
            "passes": sum(run["outcome"] in ("passed", "xpassed") for run in runs),
            "runs": sum(run["outcome"] != "xfailed" for run in runs),
            "xfailed": sum(run["outcome"] == "xfailed" for run in runs),
            "scores": {name: sum(values) / len(values) for name, values in scores.items()},
        }
    return view


@dataclass(frozen=True)
class NoiseFloor:
    """How much a case's pass rate moved between consecutive stored runs before.

    Attributes:
        runs: Stored runs of the case looked at (consecutive pairs: ``runs - 1``).
        changed: Pairs of consecutive runs whose pass rate differed.
        largest: The largest change of the pass rate between two of them.
    """

    runs: int
    changed: int
    largest: float

    def __str__(self) -> str:
        """``±50% (2/3)``: the largest move, and how many of the consecutive pairs moved."""
        if self.runs < 2:
            return "-"
        return f"±{self.largest:.0%} ({self.changed}/{self.runs - 1})"


def noise_floor(rates: list[float]) -> NoiseFloor:
    """The noise floor of a case from its pass rates in stored runs, oldest first.

    The history mixes noise with real changes of the agent, so the floor is an
    upper bound of the noise: a change within it is one the case has made before.
    """
    steps = [abs(after - before) for before, after in pairwise(rates)]
    return NoiseFloor(len(rates), sum(step > 0 for step in steps), max(steps, default=0.0))


def _decide(a: int, n_a: int, b: int, n_b: int, alpha: float) -> tuple[Decision, float]:
    lower, higher = fisher(a, n_a, b, n_b)
    if n_a and n_b and b / n_b > a / n_a:
        return ("improved" if higher < alpha else "no evidence"), higher
    return ("regressed" if lower < alpha else "no evidence"), lower


def _holm(changes: list[CaseChange], alpha: float) -> list[CaseChange]:
    """Keeps a case's decision only where Holm's step-down procedure keeps it."""
    tested = [index for index, change in enumerate(changes) if change.p_value is not None]
    adjusted = holm([changes[index].p_value or 0.0 for index in tested])
    kept = {index for index, p_value in zip(tested, adjusted, strict=True) if p_value < alpha}
    return [
        change
        if change.decision is None or index in kept
        else replace(change, decision="no evidence")
        for index, change in enumerate(changes)
    ]


def _change(
    name: str, old: dict[str, Any] | None, new: dict[str, Any] | None, alpha: float
) -> CaseChange:
    """How one case changed from `old` to `new` (its `_case_view`s; None: not in that run)."""
    if old is None or new is None:
        return CaseChange(
            name=name,
            kind="added" if old is None else "removed",
            before=old["status"] if old else None,
            after=new["status"] if new else None,
            rate_before=old["rate"] if old else None,
            rate_after=new["rate"] if new else None,
        )
    deltas = {
        metric: (old["scores"][metric], new["scores"][metric])
        for metric in new["scores"]
        if metric in old["scores"] and old["scores"][metric] != new["scores"][metric]
    }
    rate_old, rate_new = old["rate"] or 0.0, new["rate"] or 0.0
    kind: ChangeKind = "unchanged"
    if rate_new != rate_old:
        kind = "regression" if rate_new < rate_old else "improvement"
    counts = (old["passes"], old["runs"], new["passes"], new["runs"])
    decision: Decision = "no evidence"
    p_value: float | None = None
    if old["runs"] and new["runs"]:  # else every run of a side was an expected failure
        decision, p_value = _decide(*counts, alpha)
    return CaseChange(
        name=name,
        kind=kind,
        before=old["status"],
        after=new["status"],
        rate_before=old["rate"],
        rate_after=new["rate"],
        metric_deltas=deltas,
        passes=counts,
        decision=decision,
        p_value=p_value,
        xfailed=(old["xfailed"], new["xfailed"]),
    )


def compare_reports(
    before: dict[str, Any], after: dict[str, Any], *, alpha: float = DEFAULT_ALPHA
) -> Comparison:
    """Compares two suite reports case by case (cases in B's order, then removed ones).

    Args:
        before: Run A's report.
        after: Run B's report.
        alpha: The significance level of the decisions (see the module doc).
    """
    a, b = _case_view(before), _case_view(after)
    names = [*b, *(name for name in a if name not in b)]
    changes = [_change(name, a.get(name), b.get(name), alpha) for name in names]
    both = [change.passes for change in changes if change.passes is not None]
    pooled = (
        sum(c[0] for c in both),
        sum(c[1] for c in both),
        sum(c[2] for c in both),
        sum(c[3] for c in both),
    )
    suite_decision, suite_p = _decide(*pooled, alpha)
    return Comparison(
        changes=_holm(changes, alpha),
        alpha=alpha,
        decision=suite_decision,
        p_value=suite_p,
        passes=pooled,
        cost_per_passing_run=(_per_pass(before), _per_pass(after)),
    )


def _per_pass(report: dict[str, Any]) -> float | None:
    value = (report.get("cost") or {}).get("per_passing_run_usd")
    return float(value) if value is not None else None
