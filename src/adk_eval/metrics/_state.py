"""State metrics: `state_metric` (one value of the final state), `final_state_match` (all of it)."""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .._callables import call_user, describe
from .._errors import EvalSetupError
from .._state import SESSION, flatten_state, public_state
from .._trace import EvalTrace
from ._types import MetricResult, excerpt
from ._volatile import VolatileMode, same_or_volatile

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

    concurrent: ClassVar[bool] = False
    """It only reads the trace: scored in order, without a task of its own."""
    needs: ClassVar[frozenset[str]] = frozenset({"state"})
    """It reads the session's state (a trace source may not carry it)."""

    name: str
    scope: str
    key: str
    assertion: StateAssertion

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Applies the assertion to the final value."""
        value = trace.final_state.get(self.scope, {}).get(self.key, _MISSING)
        where = f"`{self.scope}.{self.key}`"
        if value is _MISSING:
            keys = f"keys of `{self.scope}`: {sorted(trace.state(self.scope))}"
            try:
                verdict = await call_user(self.assertion, None)
            except Exception as error:
                return MetricResult(
                    passed=False,
                    evidence=[
                        f"{where} is not set in the final state (the assertion raised "
                        f"{type(error).__name__} on None); {keys}"
                        + (
                            f"; expected: {expected}"
                            if (expected := describe(self.assertion))
                            else ""
                        )
                    ],
                )
            return _as_result(verdict, None, f"{where} is not set in the final state; {keys}")
        verdict = await call_user(self.assertion, value)
        expected = describe(self.assertion)
        said = f"{where} = {value!r}" + (f"; expected: {expected}" if expected else "")
        return _as_result(verdict, value, said)


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
    a short excerpt of both values; ignored keys that differ are named too, and so
    are the keys whose values differ only as two clock readings or two random ids.

    Attributes:
        name: Metric name.
        expected: The state to find (a golden's ``final_session_state``).
        ignore: Keys or glob patterns (``"*timestamp*"``) whose values may differ.
        volatile: ``"by_kind"`` (the default): a clock reading matches any clock
            reading and a random id any random id, inside dicts and lists too
            (see `adk_eval.metrics._volatile`); ``"exact"``: every value equal.
    """

    concurrent: ClassVar[bool] = False
    """It only reads the trace: scored in order, without a task of its own."""
    needs: ClassVar[frozenset[str]] = frozenset({"state"})
    """It reads the session's state (a trace source may not carry it)."""

    name: str
    expected: Mapping[str, Any]
    ignore: tuple[str, ...] = ()
    volatile: VolatileMode = "by_kind"

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
        by_kind = [
            key
            for key in differing
            if key not in ignored
            and self.volatile == "by_kind"
            and key in expected
            and key in actual
            and same_or_volatile(expected[key], actual[key])
        ]
        counted = [key for key in differing if key not in ignored and key not in by_kind]
        evidence = [_difference(key, expected, actual) for key in counted]
        if not counted:
            evidence.append(f"the final state matches ({len(expected)} keys)")
        if by_kind:
            evidence.append(
                "different clock readings or random ids, matched by kind: "
                + ", ".join(f"`{k}`" for k in by_kind)
            )
        if ignored:
            evidence.append(f"ignored, and different: {', '.join(f'`{k}`' for k in ignored)}")
        total = len(expected.keys() | actual.keys()) - len(ignored)
        value: dict[str, Any] = {"differing": counted, "ignored": ignored, "keys": total}
        if by_kind:  # (only then: the value of an exact match keeps its shape)
            value["by_kind"] = by_kind
        return MetricResult(
            passed=not counted, score=1.0 if not counted else 0.0, value=value, evidence=evidence
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
    name: str,
    expected: Mapping[str, Any],
    *,
    ignore: Sequence[str] = (),
    volatile: VolatileMode = "by_kind",
) -> FinalStateMetric:
    """The whole final state against an expected one (flat ADK keys).

    Clock readings and random ids match by kind unless ``volatile="exact"``
    (see `FinalStateMetric`).

    Example:
        ::

            final_state_match("final_state", golden.final_session_state or {},
                              ignore=["user:last_seen", "*timestamp*"])
    """
    if volatile not in ("by_kind", "exact"):
        raise EvalSetupError(
            f"final_state_match `{name}`: volatile must be 'by_kind' or 'exact', got {volatile!r}"
        )
    return FinalStateMetric(
        name=name, expected=dict(expected), ignore=tuple(ignore), volatile=volatile
    )
