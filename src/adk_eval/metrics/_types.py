"""What a metric is: a named object with ``evaluate(trace) -> MetricResult``."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from .._trace import EvalTrace

__all__ = ["Metric", "MetricResult", "excerpt"]


@dataclass(frozen=True)
class MetricResult:
    """The score of one metric on one trace.

    Attributes:
        passed: Whether the metric's assertion held.
        score: A number, when the metric has one (e.g. 0.8 from a judge).
        value: What was measured (a state value, a count, ...).
        evidence: Human-readable reasons, shown in reports.
        error: Set when the metric itself raised; then `passed` is False.
        applicable: False when the run errored before the conversation finished:
            the metric says nothing then (neither passed nor failed; its
            evidence tells what it saw on the partial trace).
        advisory: Its failure cannot fail the run (an `llm_judge` declared
            ``advisory_until_calibrated`` whose agreement with people is not yet
            known well enough); shown, never counted.
    """

    passed: bool
    score: float | None = None
    value: Any = None
    evidence: list[str] = field(default_factory=list)
    error: str | None = None
    applicable: bool = True
    advisory: bool = False

    @property
    def verdict(self) -> Literal["pass", "fail", "n/a"]:
        """``pass``, ``fail``, or ``n/a`` (not applicable), as reports show it."""
        if not self.applicable:
            return "n/a"
        return "pass" if self.passed else "fail"

    def not_applicable(self, reason: str) -> MetricResult:
        """This result marked not applicable (no pass, no score), with `reason` first."""
        seen = [f"on the partial trace: {item}" for item in self.evidence]
        return replace(self, passed=False, score=None, applicable=False, evidence=[reason, *seen])


@runtime_checkable
class Metric(Protocol):
    """Anything with a `name` and an ``evaluate(trace)`` (sync or async) is a metric.

    Metrics read only the `EvalTrace`, never the running agent, so the same
    metric scores a simulated run and a stored session.

    Optional attributes a scorer reads: ``needs``, the facts it reads that a
    stored record may lack (``"state"``: the session's state; ``"content"``: what
    was said and the tool calls' arguments and answers; ``"tools"``: the tool
    calls; ``"usage"``: the token counts): scored from a source that lacks one
    (a trace: see `adk_eval.production`; a deployed agent's run over A2A lacks
    its tools, state and usage), it is not applicable instead of failing or
    passing on nothing; ``needs_simulation = True``: it reads what only a
    simulated run has.
    """

    @property
    def name(self) -> str:
        """The metric's name (unique within a case)."""
        ...

    def evaluate(self, trace: EvalTrace) -> MetricResult | Awaitable[MetricResult]:
        """Scores `trace`."""
        ...


def excerpt(value: Any, limit: int = 200) -> str:
    """`value` as JSON for evidence, cut after `limit` characters (saying how many more)."""
    text = json.dumps(value, default=repr, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"
