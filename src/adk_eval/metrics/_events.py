"""`event_count_metric`: an assertion on how many items of a kind the trace holds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from .._callables import call_user, describe
from .._errors import EvalSetupError
from .._trace import EvalTrace, TraceEventType
from ._types import MetricResult

__all__ = ["EventCountMetric", "event_count_metric"]

CountAssertion = Callable[[int], bool | Awaitable[bool]]


@dataclass(frozen=True)
class EventCountMetric:
    """Counts trace items of `event_type` accepted by `filter`, then asserts on the count.

    Attributes:
        name: Metric name.
        event_type: ``"tool_call"``, ``"tool_response"``, ``"user_message"``,
            ``"agent_message"``, ``"state_change"`` or ``"error"``.
        filter: ``item -> bool`` choosing which items count (None counts all);
            a tool call item has ``.name``, ``.args``, ``.response``, ``.author``
            and ``.path`` (the `AgentTool` calls it was made inside).
        assertion: ``count -> bool``, sync or async.
        nested: Count what ran inside `AgentTool` calls too.
        attempted: For tool calls, count those that never reached their tool
            or mock too (ADK rejected their arguments, a callback answered,
            the case refused them; see `EvalTrace.made`). By default a tool
            call counts only when it was made.
    """

    concurrent: ClassVar[bool] = False
    """It only reads the trace: scored in order, without a task of its own."""

    @property
    def needs(self) -> frozenset[str]:
        """What a record may lack that it reads: what was said, the state's changes, the tools."""
        if self.event_type in ("tool_call", "tool_response"):
            return frozenset({"tools"})
        if self.event_type in ("user_message", "agent_message"):
            return frozenset({"content"})
        return frozenset({"state"}) if self.event_type == "state_change" else frozenset()

    name: str
    event_type: TraceEventType
    assertion: CountAssertion
    filter: Callable[[Any], bool] | None = None
    nested: bool = False
    attempted: bool = False

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Counts and applies the assertion."""
        items = trace.select(self.event_type, self.filter, nested=self.nested)
        unmade: Counter[str] = Counter()
        if self.event_type == "tool_call" and not self.attempted:
            unmade.update(trace.source_of(item) for item in items if not trace.made(item))
            items = [item for item in items if trace.made(item)]
        count = len(items)
        passed = bool(await call_user(self.assertion, count))
        what = self.event_type + ("" if self.filter is None else " (filtered)")
        # The count is the value; the score is 0 or 1 like every pass/fail metric's, so
        # reports can average scores across metrics.
        expected = describe(self.assertion)
        said = f"{count} {what}" + (f"; expected: {expected}" if expected else "")
        evidence = [said]
        inside = [item.path[0] for item in items if self.nested and item.path]
        if inside:
            tools = ", ".join(sorted(set(inside)))
            evidence.append(
                f"counted with nested=True: {len(inside)} of them ran inside AgentTool "
                f"calls ({tools})"
            )
        if unmade:
            kinds = ", ".join(f"{n} {_UNMADE.get(k, k)}" for k, n in sorted(unmade.items()))
            evidence.append(f"not counted, asked for but never made: {kinds}")
        return MetricResult(passed=passed, score=float(passed), value=count, evidence=evidence)


_UNMADE = {
    "rejected": "rejected by ADK for its arguments",
    "callback": "answered by a callback",
    "refused": "refused (not allowed)",
    "invariant": "stopped by an invariant",
    "stopped": "not run (the run was stopping)",
}


def event_count_metric(
    name: str,
    event_type: TraceEventType,
    filter: Callable[[Any], bool] | None = None,
    assertion: CountAssertion | None = None,
    *,
    nested: bool = False,
    attempted: bool = False,
) -> EventCountMetric:
    """An assertion on a count of trace items.

    Example:
        ::

            event_count_metric(
                name="efficient_triage",
                event_type="tool_call",
                filter=lambda call: call.name == "ask",
                assertion=lambda count: count <= 5,
            )
    """
    if assertion is None:
        raise EvalSetupError(
            f"event_count_metric `{name}` needs an `assertion`, e.g. lambda n: n <= 5"
        )
    valid = {"tool_call", "tool_response", "user_message", "agent_message", "state_change", "error"}
    if event_type not in valid:
        raise EvalSetupError(
            f"event_count_metric `{name}`: event_type must be one of {sorted(valid)}, "
            f"got {event_type!r}"
        )
    return EventCountMetric(
        name=name,
        event_type=event_type,
        assertion=assertion,
        filter=filter,
        nested=nested,
        attempted=attempted,
    )
