"""State metrics: `state_metric` (one value of the final state), `final_state_match` (all of it)."""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._callables import call_user
from .._errors import EvalSetupError
from .._state import SESSION, flatten_state, public_state
from .._trace import EvalTrace
from ._types import MetricResult, excerpt

__all__ = ["FinalStateMetric", "StateMetric", "final_state_match", "state_metric"]

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
                verdict = await call_user(self.assertion, None)
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
        verdict = await call_user(self.assertion, value)
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
        raise EvalSetupError(f"state_metric `{name}` needs a `key`")
    if assertion is None:
        raise EvalSetupError(
            f"state_metric `{name}` needs an `assertion`, e.g. lambda v: v is True"
        )
    return StateMetric(name=name, scope=scope, key=key, assertion=assertion)


@dataclass(frozen=True)
class FinalStateMetric:
    """Passes when the final state equals `expected`, keys matching `ignore` aside.

    Both sides are ADK's flat state (``"key"``, ``"user:key"``, ``"patient:key"``)
    without ADK's internal keys. Each differing key is named in the evidence with
    a short excerpt of both values; ignored keys that differ are named too.

    Attributes:
        name: Metric name.
        expected: The state to find (a golden's ``final_session_state``).
        ignore: Keys or glob patterns (``"*timestamp*"``) whose values may differ.
    """

    name: str
    expected: Mapping[str, Any]
    ignore: tuple[str, ...] = ()

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Compares the final state with `expected`, key by key."""
        actual = public_state(flatten_state(trace.final_state, what="final_state"))
        expected = public_state(self.expected)
        differing = sorted(
            key
            for key in expected.keys() | actual.keys()
            if expected.get(key, _MISSING) != actual.get(key, _MISSING)
        )
        ignored = [key for key in differing if self._ignored(key)]
        counted = [key for key in differing if key not in ignored]
        evidence = [_difference(key, expected, actual) for key in counted]
        if not counted:
            evidence.append(f"the final state matches ({len(expected)} keys)")
        if ignored:
            evidence.append(f"ignored, and different: {', '.join(f'`{k}`' for k in ignored)}")
        total = len(expected.keys() | actual.keys()) - len(ignored)
        return MetricResult(
            passed=not counted,
            score=1.0 if not counted else 0.0,
            value={"differing": counted, "ignored": ignored, "keys": total},
            evidence=evidence,
        )

    def _ignored(self, key: str) -> bool:
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.ignore)


def _difference(key: str, expected: Mapping[str, Any], actual: Mapping[str, Any]) -> str:
    if key not in actual:
        return f"`{key}` is not set; expected {excerpt(expected[key])}"
    if key not in expected:
        return f"`{key}` = {excerpt(actual[key])}, which the expected state does not hold"
    return f"`{key}` = {excerpt(actual[key])}; expected {excerpt(expected[key])}"


def final_state_match(
    name: str, expected: Mapping[str, Any], *, ignore: Sequence[str] = ()
) -> FinalStateMetric:
    """The whole final state against an expected one (flat ADK keys).

    Example:
        ::

            final_state_match("final_state", golden.final_session_state or {},
                              ignore=["user:last_seen", "*timestamp*"])
    """
    return FinalStateMetric(name=name, expected=dict(expected), ignore=tuple(ignore))
