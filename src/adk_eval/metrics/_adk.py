"""`adk_metric`: ADK's own evaluators (by metric name) scoring a simulated run.

The trace becomes ADK `Invocation`s (one per user message, as in a golden) and
ADK's evaluator for the metric runs on them, against a golden's invocations when
the metric compares with one. Nothing is reimplemented: the score and the
verdict are ADK's. ADK's evaluators need ``google-adk[eval]`` (ROUGE, pandas,
...); without it the metric errors with one line saying so.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase

from .._callables import maybe_await
from .._errors import EvalSetupError
from .._trace import EvalTrace
from ._invocations import invocations
from ._types import MetricResult

__all__ = ["MISSING_EXTRA", "AdkMetric", "adk_metric", "adk_metrics_from_config"]

MISSING_EXTRA = (
    "ADK's evaluators need google-adk[eval]: pip install 'adk-eval[adk]' "
    "(in this project's checkout, `make adk-cli` builds .venv-adkeval with it)"
)


@dataclass(frozen=True)
class AdkMetric:
    """Runs ADK's evaluator for `metric_name` on the run (see `adk_metric`).

    Attributes:
        name: Metric name in reports.
        metric_name: ADK's metric name (``response_match_score``, ...).
        threshold: ADK's pass threshold.
        criterion: ADK criterion fields for the metric (a dict or an ADK
            `BaseCriterion`), e.g. ``{"match_type": "IN_ORDER"}``.
        golden: The expected conversation, for metrics that compare with one.
        optional: Without google-adk[eval] the result is not applicable
            (saying what to install) instead of an error.
    """

    needs: ClassVar[frozenset[str]] = frozenset({"content"})
    """It reads what was said (a trace exported without content does not carry it)."""

    name: str
    metric_name: str
    threshold: float
    criterion: Any = None
    golden: AdkEvalCase | None = None
    optional: bool = False
    score_errored_runs: ClassVar[bool] = False
    """Not called on a run that errored: some of ADK's evaluators are judges."""

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Scores the run's invocations with ADK's evaluator."""
        try:
            evaluator = _evaluator(self.metric_name, self.threshold, self.criterion)
        except ImportError:
            if self.optional:
                return MetricResult(passed=False).not_applicable(MISSING_EXTRA)
            return MetricResult(passed=False, error=MISSING_EXTRA, evidence=[MISSING_EXTRA])
        actual = invocations(trace.events)
        expected = list(self.golden.conversation or []) if self.golden is not None else None
        scenario = self.golden.conversation_scenario if self.golden is not None else None
        if expected is not None and len(expected) != len(actual):
            return MetricResult(
                passed=False,
                evidence=[
                    f"the run has {len(actual)} invocation(s), the golden {len(expected)}; "
                    "ADK compares only conversations of the same length"
                ],
            )
        outcome = await maybe_await(
            evaluator.evaluate_invocations(actual, expected or None, scenario)
        )
        return _result(self.metric_name, self.threshold, outcome)


def _evaluator(metric_name: str, threshold: float, criterion: Any) -> Any:
    """ADK's evaluator, configured the way ``adk eval`` reads a test_config.json entry."""
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.metric_evaluator_registry import (
        DEFAULT_METRIC_EVALUATOR_REGISTRY,
    )

    entry: Any = float(threshold)
    if isinstance(criterion, Mapping):
        entry = {"threshold": threshold, **criterion}
    elif criterion is not None:
        entry = criterion
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK marks the registry experimental
        config = EvalConfig(criteria={metric_name: entry})
        (metric,) = [
            m for m in get_eval_metrics_from_config(config) if m.metric_name == metric_name
        ]
        return DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)


def _result(metric_name: str, threshold: float, outcome: Any) -> MetricResult:
    status = getattr(outcome.overall_eval_status, "name", str(outcome.overall_eval_status))
    turns = [
        f"invocation {index + 1}: {r.eval_status.name.lower()}"
        + (f" ({r.score:.2f})" if r.score is not None else "")
        for index, r in enumerate(outcome.per_invocation_results)
    ]
    if status == "NOT_EVALUATED":
        return MetricResult(passed=False, evidence=turns).not_applicable(
            f"ADK's {metric_name} did not evaluate this run (nothing to compare)"
        )
    score = outcome.overall_score
    summary = f"ADK {metric_name}: {status.lower()}" + (
        f", score {score:.2f} (threshold {threshold:.2f})" if score is not None else ""
    )
    return MetricResult(
        passed=status == "PASSED", score=score, value=score, evidence=[summary, *turns]
    )


def adk_metric(
    metric_name: str,
    threshold: float = 1.0,
    *,
    name: str | None = None,
    criterion: Mapping[str, Any] | Any | None = None,
    golden: AdkEvalCase | None = None,
) -> AdkMetric:
    """ADK's own metric `metric_name` (any name in ADK's metric registry) on the run.

    Example:
        ::

            adk_metric("response_match_score", 0.8, golden=golden)
            adk_metric("tool_trajectory_avg_score", 1.0, golden=golden,
                       criterion={"match_type": "IN_ORDER"})
    """
    return AdkMetric(
        name=name or metric_name,
        metric_name=metric_name,
        threshold=threshold,
        criterion=criterion,
        golden=golden,
    )


def adk_metrics_from_config(
    config: str | Path | Mapping[str, Any], *, golden: AdkEvalCase | None = None
) -> list[AdkMetric]:
    """The metrics of an ADK ``test_config.json`` (its ``criteria``), as `adk eval` applies them.

    Args:
        config: The file's path, or its parsed content.
        golden: The expected conversation, for the metrics that compare with one.

    Raises:
        ValueError: The file has no ``criteria``, or an entry has no threshold.
    """
    data = json.loads(Path(config).read_text()) if isinstance(config, str | Path) else config
    criteria = data.get("criteria") if isinstance(data, Mapping) else None
    if not isinstance(criteria, Mapping) or not criteria:
        raise EvalSetupError(f"{config}: a test_config.json needs a `criteria` object")
    metrics = []
    for metric_name, entry in criteria.items():
        if isinstance(entry, int | float):
            metrics.append(adk_metric(metric_name, float(entry), golden=golden))
        elif isinstance(entry, Mapping) and isinstance(entry.get("threshold"), int | float):
            rest = {k: v for k, v in entry.items() if k != "threshold"}
            metrics.append(
                adk_metric(metric_name, float(entry["threshold"]), criterion=rest, golden=golden)
            )
        else:
            raise EvalSetupError(
                f"{config}: criterion `{metric_name}` needs a threshold (a number, or an object "
                f"with a `threshold`), got {entry!r}"
            )
    return metrics
