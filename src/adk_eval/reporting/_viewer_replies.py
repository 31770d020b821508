"""The JSON the viewer's routes shape themselves, as response models.

A stored run's report, the review queue and the labels are served as their own
modules build them; these are the lists and the comparison the viewer puts
together from the store. Their fields are in the order the page has always
received them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .._statistics import Interval, wilson
from ._compare import CaseChange, ChangeKind, Comparison, Decision
from ._store import CasePoint, RunInfo

__all__ = ["ChangeEntry", "CompareReply", "HistoryPoint", "RunEntry", "SuiteDecision"]

_ORDER = {"regression": 0, "added": 1, "removed": 2, "improvement": 3, "unchanged": 4}


def _rate(point: CasePoint) -> Interval:
    """A point's pass rate over its runs, with its 95 % interval."""
    return wilson(point.passes, point.runs)


def _pass_hat_k(point: CasePoint) -> Interval:
    """A point's pass^k over its cases, with its 95 % interval."""
    return wilson(point.reliable, point.cases)


class RunEntry(BaseModel):
    """A stored run, as the runs list shows it (newest first)."""

    id: int
    created_at: str
    command: str
    total: int
    passed: int
    failed: int
    errors: int
    terminated: int
    repeat: int
    duration_ms: float
    pass_rate: float
    pass_hat_k: float
    cost: dict[str, Any] | None
    """The report's cost block (None: stored before costs were kept)."""
    live: str | None
    """``running`` or ``abandoned`` for a run stored as it runs, else None."""
    pass_rate_interval: Interval | None = None
    """Left out, like the next, when the run holds no case results."""
    pass_hat_k_interval: Interval | None = None

    @classmethod
    def of(cls, run: RunInfo, point: CasePoint | None, cost: dict[str, Any] | None) -> RunEntry:
        """The entry of `run`, whose suite did as `point` says (None: no case results)."""
        entry = cls(
            id=run.id,
            created_at=run.created_at,
            command=run.command,
            total=run.total,
            passed=run.passed,
            failed=run.failed,
            errors=run.errors,
            terminated=run.terminated,
            repeat=run.repeat,
            duration_ms=run.duration_ms,
            pass_rate=run.pass_rate,
            pass_hat_k=point.pass_hat_k if point is not None else 0.0,
            cost=cost,
            live=run.live,
        )
        if point is not None:  # set, so that they are sent (unset ones are left out)
            entry.pass_rate_interval = _rate(point)
            entry.pass_hat_k_interval = _pass_hat_k(point)
        return entry


class HistoryPoint(BaseModel):
    """How one case did in one stored run (its history is oldest first)."""

    id: int
    created_at: str
    runs: int
    passes: int
    repeat: int
    pass_rate: float
    pass_hat_k: float
    pass_rate_interval: Interval
    pass_hat_k_interval: Interval

    @classmethod
    def of(cls, point: CasePoint) -> HistoryPoint:
        """The point of the case's history `point` is."""
        return cls(
            id=point.run_id,
            created_at=point.created_at,
            runs=point.runs,
            passes=point.passes,
            repeat=point.repeat,
            pass_rate=point.pass_rate,
            pass_hat_k=point.pass_hat_k,
            pass_rate_interval=_rate(point),
            pass_hat_k_interval=_pass_hat_k(point),
        )


class ChangeEntry(BaseModel):
    """How one case changed from run A to run B (see `CaseChange`)."""

    name: str
    kind: ChangeKind
    before: str | None
    after: str | None
    metric_deltas: dict[str, tuple[float, float]]
    decision: Decision | None
    p_value: float | None
    passes: tuple[int, int, int, int] | None

    @classmethod
    def of(cls, change: CaseChange) -> ChangeEntry:
        """The entry of `change`: its fields of the same names."""
        return cls.model_validate(change, from_attributes=True)


class SuiteDecision(BaseModel):
    """The suite's decision: its runs pooled over the cases in both (see `Comparison`)."""

    decision: Decision
    p_value: float
    passes: tuple[int, int, int, int]
    alpha: float
    test: str = "Fisher's exact test, one-sided; cases Holm-corrected"


class CompareReply(BaseModel):
    """Run A against run B: each case's change, regressions first, and the suite's decision."""

    a: int
    b: int
    changes: list[ChangeEntry]
    suite: SuiteDecision

    @classmethod
    def of(cls, a: int, b: int, comparison: Comparison) -> CompareReply:
        """The reply comparing runs `a` and `b` as `comparison` does."""
        changes = sorted(comparison.changes, key=lambda c: (_ORDER[c.kind], c.name))
        return cls(
            a=a,
            b=b,
            changes=[ChangeEntry.of(change) for change in changes],
            suite=SuiteDecision(
                decision=comparison.decision,
                p_value=comparison.p_value,
                passes=comparison.passes,
                alpha=comparison.alpha,
            ),
        )
