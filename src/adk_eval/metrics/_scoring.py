"""Scoring a trace with many metrics: concurrently, one failure never stops the others."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from google.adk.sessions import Session

from .._callables import call_user
from .._errors import EvalSetupError, MetricFailure
from .._trace import EvalTrace
from ._types import Metric, MetricResult

__all__ = ["MetricFailure", "score_session", "score_stopped_trace", "score_trace"]


async def score_trace(
    metrics: Sequence[Metric], trace: EvalTrace
) -> tuple[dict[str, MetricResult], list[MetricFailure]]:
    """Runs every metric on `trace`: those that may wait (a judge) concurrently.

    A metric whose class sets ``concurrent = False`` (the built-in rules that
    only read the trace) runs on its own, in order; the others share a task
    group. A metric that raises (or returns something else than a `MetricResult`) gets
    a failing result carrying the error; the others still run.

    Returns:
        The results by metric name, in the order of `metrics`, and the failures.
    """
    results: dict[str, MetricResult] = {}
    failures: list[MetricFailure] = []

    async def score_one(metric: Metric) -> None:
        try:
            result: Any = await call_user(metric.evaluate, trace)
            if not isinstance(result, MetricResult):
                raise EvalSetupError(f"evaluate() must return a MetricResult, got {result!r}")
        except Exception as error:
            failures.append(MetricFailure(metric.name, error))
            result = MetricResult(
                passed=False,
                error=f"{type(error).__name__}: {error}",
                evidence=[f"the metric raised {type(error).__name__}: {error}"],
            )
        results[metric.name] = result

    waiting = [metric for metric in metrics if getattr(metric, "concurrent", True)]
    for metric in metrics:  # a metric that never waits gains nothing from a task of its own
        if metric not in waiting:
            await score_one(metric)
    if len(waiting) == 1:
        await score_one(waiting[0])
    elif waiting:
        async with anyio.create_task_group() as group:
            for metric in waiting:
                group.start_soon(score_one, metric)
    return {metric.name: results[metric.name] for metric in metrics}, failures


async def score_stopped_trace(
    metrics: Sequence[Metric], trace: EvalTrace, reason: str
) -> dict[str, MetricResult]:
    """Every metric marked not applicable (for `reason`): the conversation stopped early.

    What holds on a partial trace says nothing (no payment was made "once" when the
    run stopped before paying), so each metric is neither passed nor failed. Those
    that can still look at the partial trace do, for the evidence; metrics that
    set ``score_errored_runs = False`` (judges) are not called at all.
    """
    scored = [m for m in metrics if getattr(m, "score_errored_runs", True)]
    results, _ = await score_trace(scored, trace)
    return {
        m.name: (
            results[m.name] if m.name in results else MetricResult(passed=False, evidence=[])
        ).not_applicable(f"not applicable: {reason}")
        for m in metrics
    }


async def score_session(session: Session, metrics: Sequence[Metric]) -> dict[str, MetricResult]:
    """Scores any ADK session (a stored production session, say) with `metrics`.

    It reads the session's events and current state, exactly as `run_eval`
    reads the run it simulated, so the same metrics give the same results.
    """
    results, _ = await score_trace(metrics, EvalTrace.from_session(session))
    return results
