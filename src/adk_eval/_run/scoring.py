"""Scoring one run: the case's metrics and its live invariants, on the run's trace.

After an error every metric is not applicable (what it checks never got to
happen); after a breach that stopped the run the case's metrics are not
applicable and each invariant says what it saw live; else everything is
scored. A metric that ``needs`` what the run's trace lacks (a deployed agent's
tool calls, state or usage: see ``_tools/_deployed.py``) is not applicable,
whatever happened. A metric that raises is the run's error of phase ``metric``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from .._result._status import EvalErrorInfo
from .._tools._deployed import unobserved_reason
from .._tools._watch import Watch
from .._trace import EvalTrace
from ..metrics._invariants import Invariant
from ..metrics._scoring import MetricFailure, score_stopped_trace, score_trace
from ..metrics._types import Metric, MetricResult

__all__ = ["score_run"]


async def score_run(
    metrics: Sequence[Metric],
    watch: Watch,
    trace: EvalTrace,
    error: EvalErrorInfo | None,
    lacks: frozenset[str] = frozenset(),
) -> tuple[dict[str, MetricResult], list[MetricFailure]]:
    """The case's metrics and live invariants on the run's `trace`.

    After an error every one is not applicable. After a breach that stopped the
    run, the metrics are not applicable (what they check never got to happen)
    and each invariant says what it saw; else everything is scored. One that
    needs what the trace `lacks` is not applicable, saying why.
    """
    if lacks:
        seen = [m for m in metrics if not _unseen(m, lacks)]
        scored, raised = await score_run(seen, watch, trace, error)
        unseen = [m for m in [*metrics, *watch.invariants] if _unseen(m, lacks)]
        for metric in unseen:
            reason = _unseen(metric, lacks)
            assert reason is not None
            scored[metric.name] = MetricResult(passed=False).not_applicable(reason)
        return scored, raised
    invariants = list(watch.invariants)
    if error is not None:
        reason = f"the run stopped with an error ({error.phase}) before it finished"
        return await score_stopped_trace([*metrics, *invariants], trace, reason), []
    failures: list[MetricFailure] = []
    if watch.stop is not None:
        reason = f"the run stopped at a broken invariant ({watch.stop.invariant.name})"
        scored = await score_stopped_trace(metrics, trace, reason)
    else:
        scored, failures = await score_trace(metrics, trace)
    if not invariants:
        return scored, failures
    live, raised = await score_trace([_Live(i, watch) for i in invariants], trace)
    return {**scored, **live}, [*failures, *raised]


def _unseen(metric: Metric | Invariant, lacks: frozenset[str]) -> str | None:
    """Why `metric` is not applicable to a trace that `lacks` these facts (None: it is)."""
    needs = frozenset(getattr(metric, "needs", ())) & lacks
    return unobserved_reason(needs) if needs else None


@dataclass(frozen=True)
class _Live:
    """An invariant as a metric whose result is its live one (see `Watch.result`)."""

    invariant: Invariant
    watch: Watch
    concurrent: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return self.invariant.name

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        return self.watch.result(self.invariant, trace)
