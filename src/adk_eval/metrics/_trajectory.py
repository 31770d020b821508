"""`trajectory_match`: the agent's tool calls against an expected trajectory.

Modes (the first three are ADK's ``ToolTrajectoryCriterion`` match types):

============  ==========================================================
``exact``     the same calls in the same order, nothing else
``in_order``  every expected call, in this order; other calls may come between
``any_order`` every expected call, in any order; other calls allowed
``subset``    every actual call is one of the expected calls (the agent did
              nothing unexpected); expected calls may be missing
============  ==========================================================

Arguments are compared with `args`: ``"exact"`` (equal), ``"ignore"`` (names
only), or a function ``(expected_args, actual_args) -> bool``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from deepdiff import DeepDiff
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import get_all_tool_calls
from google.genai import types

from .._trace import EvalTrace
from .._turns import stable_call_args
from ._types import MetricResult

__all__ = ["ExpectedCall", "TrajectoryMetric", "expected_calls_from", "trajectory_match"]

MatchMode: TypeAlias = Literal["exact", "in_order", "any_order", "subset"]
ArgsMatcher: TypeAlias = Callable[[dict[str, Any], dict[str, Any]], bool]
ArgsMode: TypeAlias = Literal["exact", "ignore"] | ArgsMatcher


@dataclass(frozen=True)
class ExpectedCall:
    """A tool call the agent should make.

    Attributes:
        name: Tool name.
        args: Expected arguments (ignored when the metric ignores args).
    """

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.name}({self.args})"


ExpectedLike: TypeAlias = (
    ExpectedCall | types.FunctionCall | Mapping[str, Any] | tuple[str, Mapping[str, Any]] | str
)


def _as_expected(item: ExpectedLike) -> ExpectedCall:
    if isinstance(item, ExpectedCall):
        return item
    if isinstance(item, types.FunctionCall):
        return ExpectedCall(item.name or "", stable_call_args(item.name or "", item.args or {}))
    if isinstance(item, str):
        return ExpectedCall(item)
    if isinstance(item, tuple) and len(item) == 2:
        return ExpectedCall(str(item[0]), dict(item[1]))
    if isinstance(item, Mapping) and "name" in item:
        return ExpectedCall(str(item["name"]), dict(item.get("args") or {}))
    raise TypeError(
        "expected calls are ExpectedCall, {'name': ..., 'args': {...}}, (name, args), a tool "
        f"name, or a genai FunctionCall; got {item!r}"
    )


def expected_calls_from(golden: AdkEvalCase | Iterable[ExpectedLike]) -> list[ExpectedCall]:
    """The expected trajectory of an ADK `EvalCase` golden (all invocations), or of a list."""
    if isinstance(golden, AdkEvalCase):
        calls: list[ExpectedCall] = []
        for invocation in golden.conversation or []:
            for call in get_all_tool_calls(invocation.intermediate_data):
                calls.append(_as_expected(call))
        return calls
    return [_as_expected(item) for item in golden]


@dataclass(frozen=True)
class _Actual:
    name: str
    args: dict[str, Any]

    def __str__(self) -> str:
        return f"{self.name}({self.args})"


@dataclass(frozen=True)
class TrajectoryMetric:
    """Compares the trace's tool calls with `expected` (see the module doc for modes).

    Attributes:
        name: Metric name.
        expected: The expected calls, in order.
        mode: ``exact``, ``in_order``, ``any_order`` or ``subset``.
        args: ``exact``, ``ignore`` or ``(expected_args, actual_args) -> bool``.
        ignore_tools: Tool names left out of the actual calls (e.g. ``transfer_to_agent``).
        nested: Count the calls made inside `AgentTool` calls too, each right
            after its AgentTool call (ADK goldens hold only the top-level calls).
    """

    name: str
    expected: Sequence[ExpectedCall]
    mode: MatchMode = "exact"
    args: ArgsMode = "exact"
    ignore_tools: frozenset[str] = frozenset()
    nested: bool = False

    def _same(self, expected: ExpectedCall, actual: _Actual) -> bool:
        if expected.name != actual.name:
            return False
        if self.args == "ignore":
            return True
        if self.args == "exact":
            return expected.args == actual.args
        return bool(self.args(expected.args, actual.args))

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Matches the actual calls against the expected ones."""
        actual = [
            _Actual(call.name, stable_call_args(call.name, call.args))
            for call in (trace.nested_tool_calls if self.nested else trace.tool_calls)
            if call.name not in self.ignore_tools
        ]
        matched, problem = {
            "exact": self._exact,
            "in_order": self._in_order,
            "any_order": self._any_order,
            "subset": self._subset,
        }[self.mode](list(self.expected), actual)
        denominator = len(actual) if self.mode == "subset" else len(self.expected)
        score = matched / denominator if denominator else 1.0
        evidence = [
            f"{self.mode}: expected {[str(c) for c in self.expected]}, "
            f"actual {[str(c) for c in actual]}"
        ]
        if problem:
            evidence.insert(0, problem)
        return MetricResult(passed=problem is None, score=score, value=matched, evidence=evidence)

    def _diff(self, expected: ExpectedCall, actual: _Actual) -> str:
        if expected.name != actual.name:
            return f"expected `{expected.name}`, got `{actual.name}`"
        if self.args in ("exact", "ignore"):
            diff = DeepDiff(expected.args, actual.args, verbose_level=2)
            return f"`{expected.name}` args differ: {diff.pretty() or diff}"
        return f"`{expected.name}` args {actual.args} rejected by the args matcher"

    def _exact(self, expected: list[ExpectedCall], actual: list[_Actual]) -> tuple[int, str | None]:
        matched = 0
        for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
            if not self._same(want, got):
                return matched, f"first divergence at call #{index + 1}: {self._diff(want, got)}"
            matched += 1
        if len(actual) > len(expected):
            return matched, f"unexpected extra call #{len(expected) + 1}: {actual[len(expected)]}"
        if len(expected) > len(actual):
            return matched, f"missing call #{len(actual) + 1}: {expected[len(actual)]}"
        return matched, None

    def _in_order(
        self, expected: list[ExpectedCall], actual: list[_Actual]
    ) -> tuple[int, str | None]:
        position = 0
        for index, want in enumerate(expected):
            while position < len(actual) and not self._same(want, actual[position]):
                position += 1
            if position == len(actual):
                near = self._nearest(want, actual)
                return index, f"expected call #{index + 1} {want} not found in order{near}"
            position += 1
        return len(expected), None

    def _any_order(
        self, expected: list[ExpectedCall], actual: list[_Actual]
    ) -> tuple[int, str | None]:
        remaining = list(actual)
        missing: list[ExpectedCall] = []
        for want in expected:
            found = next((got for got in remaining if self._same(want, got)), None)
            if found is None:
                missing.append(want)
            else:
                remaining.remove(found)
        if missing:
            near = self._nearest(missing[0], actual)
            return len(expected) - len(missing), f"expected call {missing[0]} never made{near}"
        return len(expected), None

    def _subset(
        self, expected: list[ExpectedCall], actual: list[_Actual]
    ) -> tuple[int, str | None]:
        for index, got in enumerate(actual):
            if not any(self._same(want, got) for want in expected):
                return index, f"call #{index + 1} {got} is not among the expected calls"
        return len(actual), None

    def _nearest(self, want: ExpectedCall, actual: list[_Actual]) -> str:
        positions = [i for i, got in enumerate(actual) if got.name == want.name]
        if not positions:
            return ""
        if self.args == "ignore":
            at = ", ".join(f"#{i + 1}" for i in positions)
            return f"; `{want.name}` was called at {at}, out of the expected order"
        return f"; closest: {self._diff(want, actual[positions[0]])}"


def trajectory_match(
    name: str,
    expected: AdkEvalCase | Iterable[ExpectedLike],
    mode: MatchMode = "exact",
    args: ArgsMode = "exact",
    *,
    ignore_tools: Iterable[str] = (),
    nested: bool = False,
) -> TrajectoryMetric:
    """The agent's tool calls against an expected list or an ADK `EvalCase` golden.

    Example:
        ::

            trajectory_match(
                "asks_then_escalates",
                [ExpectedCall("read", {"policy_id": "chest_pain"}), "ask", "escalate"],
                mode="in_order",
                args="ignore",
            )
    """
    if mode not in ("exact", "in_order", "any_order", "subset"):
        raise ValueError(
            f"trajectory_match `{name}`: mode must be exact, in_order, any_order or subset, "
            f"got {mode!r}"
        )
    if not (args in ("exact", "ignore") or callable(args)):
        raise ValueError(
            f"trajectory_match `{name}`: args must be 'exact', 'ignore' or a function, got {args!r}"
        )
    return TrajectoryMetric(
        name=name,
        expected=expected_calls_from(expected),
        mode=mode,
        args=args,
        ignore_tools=frozenset(ignore_tools),
        nested=nested,
    )
