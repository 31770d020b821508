"""`state_query`: a MongoDB-style query over the final scoped state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._termination import compile_state_query
from .._trace import EvalTrace
from ._types import MetricResult, excerpt

__all__ = ["StateQueryMetric", "state_query"]


@dataclass(frozen=True)
class StateQueryMetric:
    """Passes when `spec` matches the final scoped state.

    Attributes:
        name: Metric name.
        spec: A MongoDB-style query over ``{scope: {key: value}}``, e.g.
            ``{"session.escalation.urgencyLevel": {"$in": ["emergency_999", "urgent_111"]}}``.
    """

    name: str
    spec: Mapping[str, Any]

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Matches the query against the final state."""
        query = compile_state_query(self.spec)
        state = {scope: dict(values) for scope, values in trace.final_state.items()}
        state.setdefault("session", {})
        if query.match(state):
            return MetricResult(
                passed=True, value=True, evidence=[f"the final state matches {dict(self.spec)!r}"]
            )
        return MetricResult(passed=False, value=False, evidence=self._why_not(state))

    def _why_not(self, state: Mapping[str, Any]) -> list[str]:
        """Each condition of the query that fails, with the value it saw (bounded)."""
        reasons = []
        for key, condition in self.spec.items():
            if compile_state_query({key: condition}).match(state):
                continue
            if key.startswith("$"):
                reasons.append(f"`{key}` does not hold: {excerpt(condition)}")
                continue
            found, value = _lookup(state, key)
            seen = f"is {excerpt(value)}" if found else "is not set"
            reasons.append(f"`{key}` {seen}; expected {excerpt(condition)}")
        return reasons or [f"the final state does not match {dict(self.spec)!r}"]


def _lookup(state: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    value: Any = state
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def state_query(name: str, spec: Mapping[str, Any]) -> StateQueryMetric:
    """A MongoDB-style query over the final state (the syntax of `state_matches`)."""
    compile_state_query(spec)
    return StateQueryMetric(name=name, spec=spec)
