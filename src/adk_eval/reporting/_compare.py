"""Comparing two suite reports: per-case regressions and improvements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = ["CaseChange", "Comparison", "compare_reports"]

ChangeKind: TypeAlias = Literal["regression", "improvement", "unchanged", "added", "removed"]


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
    """

    name: str
    kind: ChangeKind
    before: str | None
    after: str | None
    rate_before: float | None
    rate_after: float | None
    metric_deltas: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Comparison:
    """All case changes between run A and run B."""

    changes: list[CaseChange]

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
            "scores": {name: sum(values) / len(values) for name, values in scores.items()},
        }
    return view


def compare_reports(before: dict[str, Any], after: dict[str, Any]) -> Comparison:
    """Compares two suite reports case by case (cases in B's order, then removed ones)."""
    a, b = _case_view(before), _case_view(after)
    changes: list[CaseChange] = []
    for name in [*b, *(n for n in a if n not in b)]:
        old, new = a.get(name), b.get(name)
        if old is None or new is None:
            kind: ChangeKind = "added" if old is None else "removed"
            changes.append(
                CaseChange(
                    name=name,
                    kind=kind,
                    before=old["status"] if old else None,
                    after=new["status"] if new else None,
                    rate_before=old["rate"] if old else None,
                    rate_after=new["rate"] if new else None,
                )
            )
            continue
        deltas = {
            metric: (old["scores"][metric], new["scores"][metric])
            for metric in new["scores"]
            if metric in old["scores"] and old["scores"][metric] != new["scores"][metric]
        }
        rate_old, rate_new = old["rate"] or 0.0, new["rate"] or 0.0
        if rate_new < rate_old:
            kind = "regression"
        elif rate_new > rate_old:
            kind = "improvement"
        else:
            kind = "unchanged"
        changes.append(
            CaseChange(
                name=name,
                kind=kind,
                before=old["status"],
                after=new["status"],
                rate_before=old["rate"],
                rate_after=new["rate"],
                metric_deltas=deltas,
            )
        )
    return Comparison(changes=changes)
