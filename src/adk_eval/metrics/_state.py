"""`state_metric`: an assertion on one value of the final state."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .._callables import maybe_await
from .._state import SESSION
from .._trace import EvalTrace
from ._types import MetricResult

__all__ = ["StateMetric", "state_metric"]

StateAssertion = Callable[[Any], bool | MetricResult | Awaitable[bool | MetricResult]]

_MISSING = object()


@dataclass(frozen=True)
class StateMetric:
    """Passes when `assertion(value)` holds for ``final_state[scope][key]``.

    A missing key is passed to the assertion as None; if the assertion then
    raises, the metric fails with the reason "not set" instead of erroring.

    Attributes:
        name: Metric name.
        scope: State scope (``"session"``, ``"user"``, ``"patient"``, ...).
        key: Key within the scope.
        assertion: ``value -> bool`` (or a `MetricResult`), sync or async.
    """

    name: str
    scope: str
    key: str
    assertion: StateAssertion

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Applies the assertion to the final value."""
        value = trace.final_state.get(self.scope, {}).get(self.key, _MISSING)
        where = f"`{self.scope}.{self.key}`"
        if value is _MISSING:
            try:
                verdict = await maybe_await(self.assertion(None))
            except Exception as error:
                return MetricResult(
                    passed=False,
                    evidence=[
                        f"{where} is not set in the final state (the assertion raised "
                        f"{type(error).__name__} on None); keys of `{self.scope}`: "
                        f"{sorted(trace.state(self.scope))}"
                    ],
                )
            return _as_result(verdict, None, f"{where} is not set in the final state")
        verdict = await maybe_await(self.assertion(value))
        return _as_result(verdict, value, f"{where} = {value!r}")


def _as_result(verdict: bool | MetricResult, value: Any, evidence: str) -> MetricResult:
    if isinstance(verdict, MetricResult):
        return verdict
    return MetricResult(passed=bool(verdict), value=value, evidence=[evidence])


def state_metric(
    name: str, scope: str = SESSION, key: str = "", assertion: StateAssertion | None = None
) -> StateMetric:
    """An assertion on a final state value.

    Example:
        ::

            state_metric(
                name="correctly_escalated",
                scope="session",
                key="escalation",
                assertion=lambda v: v is not None and v["urgency"] == "emergency_999",
            )
    """
    if not key:
        raise ValueError(f"state_metric `{name}` needs a `key`")
    if assertion is None:
        raise ValueError(f"state_metric `{name}` needs an `assertion`, e.g. lambda v: v is True")
    return StateMetric(name=name, scope=scope, key=key, assertion=assertion)
