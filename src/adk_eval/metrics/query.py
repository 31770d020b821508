"""`state_query`: a MongoDB-style query over the final scoped state."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..termination import compile_state_query
from ..trace import EvalTrace
from .types import MetricResult

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
        matched = bool(query.match(state))
        verdict = "matches" if matched else "does not match"
        shown = json.dumps(state, default=repr, sort_keys=True)
        return MetricResult(
            passed=matched,
            value=matched,
            evidence=[f"the final state {verdict} {dict(self.spec)!r}; state: {shown}"],
        )


def state_query(name: str, spec: Mapping[str, Any]) -> StateQueryMetric:
    """A MongoDB-style query over the final state (the syntax of `state_matches`)."""
    compile_state_query(spec)
    return StateQueryMetric(name=name, spec=spec)
