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

Against an ADK golden the calls are compared turn by turn, as ADK does:
invocation *i* of the run with invocation *i* of the golden (a turn starts at
each user message). The score is the share of turns that match (ADK's
``tool_trajectory_avg_score``); the metric passes when every turn matches, or,
given a ``threshold``, when the score reaches it (ADK's rule, so the same
threshold gives the same verdict as ``adk eval``). ``per_turn=False`` compares
the whole conversation as one list, as for a plain list of expected calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from deepdiff import DeepDiff
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import get_all_tool_calls
from google.genai import types

from .._errors import EvalSetupError
from .._trace import EvalTrace, Message, ToolCall
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
    raise EvalSetupError(
        "expected calls are ExpectedCall, {'name': ..., 'args': {...}}, (name, args), a tool "
        f"name, or a genai FunctionCall; got {item!r}"
    )


def expected_calls_from(golden: AdkEvalCase | Iterable[ExpectedLike]) -> list[ExpectedCall]:
    """The expected trajectory of an ADK `EvalCase` golden (all invocations), or of a list."""
    if isinstance(golden, AdkEvalCase):
        return [call for turn in expected_turns_from(golden) for call in turn]
    return [_as_expected(item) for item in golden]


def expected_turns_from(golden: AdkEvalCase) -> list[list[ExpectedCall]]:
    """The expected calls of each invocation of an ADK `EvalCase` golden."""
    return [
        [_as_expected(call) for call in get_all_tool_calls(invocation.intermediate_data)]
        for invocation in golden.conversation or []
    ]


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
        turns: The expected calls per invocation (from a golden): the run's
            turn *i* is compared with invocation *i*. None: one whole list.
        threshold: Pass when the score reaches it (ADK's rule) instead of only
            on a full match.
    """

    @property
    def needs(self) -> frozenset[str]:
        """What it reads: the tool calls, and their arguments unless `args` is ignore."""
        return frozenset({"tools"}) | (frozenset() if self.args == "ignore" else {"content"})

    concurrent: ClassVar[bool] = False
    """It only reads the trace: scored in order, without a task of its own."""

    name: str
    expected: Sequence[ExpectedCall]
    mode: MatchMode = "exact"
    args: ArgsMode = "exact"
    ignore_tools: frozenset[str] = frozenset()
    nested: bool = False
    turns: tuple[tuple[ExpectedCall, ...], ...] | None = None
    threshold: float | None = None

    def _same(self, expected: ExpectedCall, actual: _Actual) -> bool:
        if expected.name != actual.name:
            return False
        if self.args == "ignore":
            return True
        if self.args == "exact":
            return expected.args == actual.args
        return bool(self.args(expected.args, actual.args))

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Matches the actual calls against the expected ones (turn by turn for goldens)."""
        if self.turns is not None:
            return self._per_turn(trace)
        actual = [call for turn in self._actual_turns(trace) for call in turn]
        matched, problem, score = self._match(list(self.expected), actual)
        evidence = [
            f"{self.mode}: expected {[str(c) for c in self.expected]}, "
            f"actual {[str(c) for c in actual]}"
        ]
        if problem:
            evidence.insert(0, problem)
        passed = self._verdict(problem is None, score)
        if not passed and self._names_only_would_pass(actual):
            evidence.insert(1, _NAMES_ONLY)
        return MetricResult(passed=passed, score=score, value=matched, evidence=evidence)

    def _names_only_would_pass(self, actual: list[_Actual]) -> bool:
        """Whether bare expected names (no args given) fail only on the default exact args."""
        if self.args != "exact" or any(call.args for call in self.expected):
            return False
        names_only = dataclasses.replace(self, args="ignore")
        _, problem, score = names_only._match(list(self.expected), actual)
        return names_only._verdict(problem is None, score)

    def _verdict(self, full_match: bool, score: float) -> bool:
        return full_match if self.threshold is None else score >= self.threshold

    def _match(
        self, expected: list[ExpectedCall], actual: list[_Actual]
    ) -> tuple[int, str | None, float]:
        """Matched calls, the first problem (None: a match), and a score that grows with both."""
        matched, problem = {
            "exact": self._exact,
            "in_order": self._in_order,
            "any_order": self._any_order,
            "subset": self._subset,
        }[self.mode](expected, actual)
        denominator = {
            "exact": max(len(expected), len(actual)),  # extra calls lower it too
            "subset": len(actual),
        }.get(self.mode, len(expected))
        return matched, problem, matched / denominator if denominator else 1.0

    def _actual_turns(self, trace: EvalTrace) -> list[list[_Actual]]:
        """The run's calls, per turn (a turn starts at each user message)."""
        turns: list[list[_Actual]] = [[]]
        for item in trace.all_items if self.nested else trace.items:
            if isinstance(item, Message) and item.role == "user" and not item.path:
                turns.append([])
            elif isinstance(item, ToolCall) and item.name not in self.ignore_tools:
                turns[-1].append(_Actual(item.name, stable_call_args(item.name, item.args)))
        before_first, *rest = turns  # calls before any user message belong to the first turn
        if rest:
            rest[0][:0] = before_first
            return rest
        return [before_first] if before_first else []

    def _per_turn(self, trace: EvalTrace) -> MetricResult:
        assert self.turns is not None
        if not self.turns:  # ADK reports it not evaluated; here it fails, never passes silently
            return MetricResult(
                passed=False,
                evidence=["nothing to compare: the golden holds no invocations"],
            )
        actual = self._actual_turns(trace)
        count = max(len(self.turns), len(actual))
        problems: list[str] = []
        matching = 0
        for index in range(count):
            want = list(self.turns[index]) if index < len(self.turns) else []
            got = actual[index] if index < len(actual) else []
            _, problem, _ = self._match(want, got)
            if problem is None:
                matching += 1
            elif index >= len(actual):
                problems.append(f"turn {index + 1}: the run ended before this turn")
            elif index >= len(self.turns):
                problems.append(f"turn {index + 1}: the golden has no such turn; {problem}")
            else:
                problems.append(f"turn {index + 1}: {problem}")
        score = matching / count
        summary = f"{self.mode}, turn by turn: {matching} of {count} turns match"
        if self.threshold is not None:
            summary += f" (score {score:.2f}, threshold {self.threshold:.2f})"
        return MetricResult(
            passed=self._verdict(not problems, score),
            score=score,
            value=matching,
            evidence=[*problems, summary],
        )

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
                near = self._nearest(want, actual, expected)
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
            near = self._nearest(missing[0], actual, expected)
            return len(expected) - len(missing), f"expected call {missing[0]} never made{near}"
        return len(expected), None

    def _subset(
        self, expected: list[ExpectedCall], actual: list[_Actual]
    ) -> tuple[int, str | None]:
        for index, got in enumerate(actual):
            if not any(self._same(want, got) for want in expected):
                return index, f"call #{index + 1} {got} is not among the expected calls"
        return len(actual), None

    def _nearest(
        self, want: ExpectedCall, actual: list[_Actual], expected: list[ExpectedCall]
    ) -> str:
        same = [i for i, got in enumerate(actual) if self._same(want, got)]
        if same:  # the call was made: the problem is its order or its count
            wanted = sum(
                1 for other in expected if self._same(want, _Actual(other.name, other.args))
            )
            if len(same) < wanted:
                return f"; `{want.name}` was called {len(same)} time(s), expected {wanted}"
            at = ", ".join(f"#{i + 1}" for i in same)
            return f"; `{want.name}` was called at {at}, out of the expected order"
        positions = [i for i, got in enumerate(actual) if got.name == want.name]
        if not positions:
            return ""
        if self.args == "ignore":
            at = ", ".join(f"#{i + 1}" for i in positions)
            return f"; `{want.name}` was called at {at}, out of the expected order"
        return f"; closest: {self._diff(want, actual[positions[0]])}"


_NAMES_ONLY = (
    "hint: the expected calls name tools without arguments, so with the default "
    'args="exact" each call is expected with no arguments; the names alone match: '
    'pass args="ignore" to compare names only'
)


def trajectory_match(
    name: str,
    expected: AdkEvalCase | Iterable[ExpectedLike],
    mode: MatchMode = "exact",
    args: ArgsMode = "exact",
    *,
    ignore_tools: Iterable[str] = (),
    nested: bool = False,
    per_turn: bool = True,
    threshold: float | None = None,
) -> TrajectoryMetric:
    """The agent's tool calls against an expected list or an ADK `EvalCase` golden.

    A golden is compared turn by turn (``per_turn=False``: as one list); the
    score is then the share of matching turns, and ``threshold`` applies ADK's
    rule (pass when the score reaches it) instead of requiring every turn.

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
        raise EvalSetupError(
            f"trajectory_match `{name}`: mode must be exact, in_order, any_order or subset, "
            f"got {mode!r}"
        )
    if not (args in ("exact", "ignore") or callable(args)):
        raise EvalSetupError(
            f"trajectory_match `{name}`: args must be 'exact', 'ignore' or a function, got {args!r}"
        )
    if threshold is not None and not 0 <= threshold <= 1:
        raise EvalSetupError(f"trajectory_match `{name}`: threshold must be between 0 and 1")
    turns = None
    if isinstance(expected, AdkEvalCase) and per_turn:
        turns = tuple(tuple(turn) for turn in expected_turns_from(expected))
    return TrajectoryMetric(
        name=name,
        expected=expected_calls_from(expected),
        mode=mode,
        args=args,
        ignore_tools=frozenset(ignore_tools),
        nested=nested,
        turns=turns,
        threshold=threshold,
    )
