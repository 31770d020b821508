"""`adk_metric`: ADK's own evaluators (by metric name) scoring a simulated run.

The trace becomes ADK `Invocation`s (one per user message, as in a golden) and
ADK's evaluator for the metric runs on them, against a golden's invocations when
the metric compares with one. Nothing is reimplemented: the score and the
verdict are ADK's. ADK's evaluators need ``google-adk[eval]`` (ROUGE, pandas,
...); without it the metric errors with one line saying so.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
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


_EVALUATION = "google.adk.evaluation"
_REGISTRY = f"{_EVALUATION}.metric_evaluator_registry"

# ADK's prebuilt metrics whose registry entry is one class built as `cls(eval_metric=...)`,
# importable alone: the registry imports every evaluator (Vertex AI's SDK, pandas, scipy:
# ~2.5 s of CPU) to hand out one of them. The registry's `response_match_score` entry,
# `ResponseEvaluator`, only builds `RougeEvaluator` with the metric's threshold.
_CLASSES = {
    "response_match_score": ("final_response_match_v1", "RougeEvaluator"),
    "tool_trajectory_avg_score": ("trajectory_evaluator", "TrajectoryEvaluator"),
    "final_response_match_v2": ("final_response_match_v2", "FinalResponseMatchV2Evaluator"),
    "hallucinations_v1": ("hallucinations_v1", "HallucinationsV1Evaluator"),
    "rubric_based_final_response_quality_v1": (
        "rubric_based_final_response_quality_v1",
        "RubricBasedFinalResponseQualityV1Evaluator",
    ),
    "rubric_based_tool_use_quality_v1": (
        "rubric_based_tool_use_quality_v1",
        "RubricBasedToolUseV1Evaluator",
    ),
    "rubric_based_multi_turn_trajectory_quality_v1": (
        "rubric_based_multi_turn_trajectory_evaluator",
        "RubricBasedMultiTurnTrajectoryEvaluator",
    ),
    "per_turn_user_simulator_quality_v1": (
        "simulation.per_turn_user_simulator_quality_v1",
        "PerTurnUserSimulatorQualityV1",
    ),
}
# Evaluators that hold only their configuration, so one instance serves every run;
# the judges keep a model and per-call state, so each run builds its own, as ADK does.
_SHARED = frozenset({"response_match_score", "tool_trajectory_avg_score"})


def _evaluator(metric_name: str, threshold: float, criterion: Any) -> Any:
    """ADK's evaluator, configured the way ``adk eval`` reads a test_config.json entry.

    A prebuilt metric of `_CLASSES` gets its class without ADK's registry, unless the
    registry is imported already (it costs nothing more then, and an evaluator the
    program registered over a prebuilt one is honoured).
    """
    if metric_name not in _CLASSES or sys.modules.get(_REGISTRY) is not None:
        return _from_registry(_metric(metric_name, threshold, criterion))
    key = _criterion_key(criterion)
    if metric_name in _SHARED and key is not None:
        return _shared(metric_name, float(threshold), key)
    return _built(_metric(metric_name, threshold, criterion))


def _metric(metric_name: str, threshold: float, criterion: Any) -> Any:
    """ADK's `EvalMetric` for the entry, read by ADK's own config code."""
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config

    entry: Any = float(threshold)
    if isinstance(criterion, Mapping):
        entry = {"threshold": threshold, **criterion}
    elif criterion is not None:
        entry = criterion
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK marks its eval config experimental
        config = EvalConfig(criteria={metric_name: entry})
    (metric,) = [m for m in get_eval_metrics_from_config(config) if m.metric_name == metric_name]
    return metric


def _from_registry(metric: Any) -> Any:
    from google.adk.evaluation.metric_evaluator_registry import (
        DEFAULT_METRIC_EVALUATOR_REGISTRY,
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK marks the registry experimental
        return DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)


def _built(metric: Any) -> Any:
    """The prebuilt metric's evaluator class, built as the registry builds it."""
    module, name = _CLASSES[metric.metric_name]
    cls = getattr(importlib.import_module(f"{_EVALUATION}.{module}"), name)
    if metric.metric_name == "response_match_score":
        from google.adk.evaluation.eval_metrics import EvalMetric, _get_metric_threshold

        # What `ResponseEvaluator` hands its `RougeEvaluator`: the name and the threshold.
        metric = EvalMetric(metric_name=metric.metric_name, threshold=_get_metric_threshold(metric))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK marks some evaluators experimental
        return cls(eval_metric=metric)


@functools.lru_cache(maxsize=64)
def _shared(metric_name: str, threshold: float, criterion_key: str) -> Any:
    criterion = json.loads(criterion_key)
    return _built(_metric(metric_name, threshold, criterion))


def _criterion_key(criterion: Any) -> str | None:
    """A hashable form of a criterion given as a mapping (or none); None for anything else."""
    if criterion is not None and not isinstance(criterion, Mapping):
        return None
    try:
        return json.dumps(dict(criterion) if criterion is not None else None, sort_keys=True)
    except (TypeError, ValueError):
        return None


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
