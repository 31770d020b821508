"""What the repeats of one case tell about who failed.

A run is attributed on its own (`_result._attribution`): with a scripted user,
a run that failed its metrics is the agent's. But the repeats of a case can
show otherwise: when a failing run and a passing repeat made the same tool
calls up to a call that a tool running for real (one the case passed in)
answered differently with the same arguments, the runs parted at that tool's
answer, not at anything the agent chose. That failure is the set-up's: the
case runs a tool whose answers vary, and the fix is to mock it (or seed it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .._result import EvalResult
from .._result._attribution import Attribution
from .._trace import EvalTrace
from ..metrics._types import excerpt

__all__ = ["blame_real_tools"]


def blame_real_tools(results: Sequence[EvalResult]) -> list[EvalResult]:
    """`results`, with failures that parted from a passing repeat at a real tool re-attributed.

    Only failures attributed to the agent without an error are looked at; each
    is compared with the passing repeats of its case, in their order.
    """
    suspects = {r.name for r in results if _agents_failure(r)}
    if not suspects:  # nothing to compare: no trace is read
        return list(results)
    passing: dict[str, list[EvalResult]] = {}
    for result in results:
        if result.passed and result.name in suspects:
            passing.setdefault(result.name, []).append(result)
    return [_reattributed(result, passing.get(result.name, ())) for result in results]


def _agents_failure(result: EvalResult) -> bool:
    attribution = result.attribution
    return attribution is not None and attribution.party == "agent" and result.error is None


def _reattributed(result: EvalResult, passing: Sequence[EvalResult]) -> EvalResult:
    if not _agents_failure(result):
        return result
    for other in passing:
        parted = _parted_at_real_tool(result.trace, other.trace)
        if parted is not None:
            evidence = (
                f"the run made the same tool calls as passing run {other.attempt + 1} until "
                f"{parted}: the runs parted at a tool that runs for real, not at the agent; "
                "mock it (or fix its randomness) to test the agent alone"
            )
            moved = Attribution("setup", evidence, 0.85)
            return dataclasses.replace(result, attribution=moved)
    return result


def _parted_at_real_tool(failed: EvalTrace, passed: EvalTrace) -> str | None:
    """Where the two runs first differ, when it is a real tool's answer (else None)."""
    for mine, theirs in zip(failed.tool_calls, passed.tool_calls, strict=False):
        if (mine.name, mine.args, mine.path) != (theirs.name, theirs.args, theirs.path):
            return None  # the agent chose differently first
        if mine.response == theirs.response:
            continue
        if failed.source_of(mine) != "real" or passed.source_of(theirs) != "real":
            return None
        return (
            f"`{mine.name}` {excerpt(mine.args, 80)} answered {excerpt(mine.response, 80)} "
            f"here and {excerpt(theirs.response, 80)} there"
        )
    return None
