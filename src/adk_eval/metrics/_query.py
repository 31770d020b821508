"""`state_query`: a MongoDB-style query over the final scoped state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

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

    concurrent: ClassVar[bool] = False
    """It only reads the trace: scored in order, without a task of its own."""
    needs: ClassVar[frozenset[str]] = frozenset({"state"})
    """It reads the session's state (a trace source may not carry it)."""

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
            found, value, reached = _lookup(state, key)
            seen = f"is {excerpt(value)}" if found else f"is not set ({_keys_at(state, reached)})"
            reasons.append(f"`{key}` {seen}; expected {excerpt(condition)}")
        return reasons or [f"the final state does not match {dict(self.spec)!r}"]


def _lookup(state: Mapping[str, Any], path: str) -> tuple[bool, Any, list[str]]:
    """Whether `path` is set, its value, and the parts of it that are (all when set)."""
    value: Any = state
    reached: list[str] = []
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None, reached
        reached.append(part)
    return True, value, reached


def _keys_at(state: Mapping[str, Any], reached: list[str]) -> str:
    """What is there where a path stops: the keys (or length) of the deepest value found."""
    _, value, _ = _lookup(state, ".".join(reached)) if reached else (True, state, [])
    where = f"`{'.'.join(reached)}`" if reached else "the state"
    if isinstance(value, Mapping):
        return f"keys of {where}: {excerpt(sorted(map(str, value)))}"
    if isinstance(value, list):
        return f"{where} is a list of {len(value)}"
    return f"{where} is {excerpt(value)}"


def state_query(name: str, spec: Mapping[str, Any]) -> StateQueryMetric:
    """A MongoDB-style query over the final state (the syntax of `state_matches`)."""
    compile_state_query(spec)
    return StateQueryMetric(name=name, spec=spec)
