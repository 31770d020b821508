"""How a run ended: its status (`run_status`) and, for an error, why (`EvalErrorInfo`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .._termination import Termination
from ..metrics._types import MetricResult

__all__ = [
    "EXPECT_ERROR",
    "ErrorPhase",
    "EvalErrorInfo",
    "EvalStatus",
    "ExpectedError",
    "expected_error",
    "phase_words",
    "replies",
    "run_status",
]

EvalStatus: TypeAlias = Literal["passed", "failed", "error", "terminated"]
ErrorPhase: TypeAlias = Literal["setup", "system", "user_agent", "metric"]


_PHASE_WORDS = {
    "setup": "the case's setup",
    "system": "the agent under test",
    "user_agent": "a user agent",
    "metric": "a metric",
}


def phase_words(phase: str) -> str:
    """Where an error happened, in words: ``system`` is "the agent under test"."""
    return _PHASE_WORDS.get(phase, phase)


def replies(turns: int) -> str:
    """A run's turns in words: the user agents' replies after the first message.

    "first message only" (the agent answered the first message and nothing more
    was asked), "1 user reply", "3 user replies".
    """
    if turns == 0:
        return "first message only"
    return f"{turns} user repl{'y' if turns == 1 else 'ies'}"


@dataclass(frozen=True)
class EvalErrorInfo:
    """Why a run ended in ``error``.

    Attributes:
        phase: ``"setup"`` (the case is misconfigured), ``"system"`` (the agent
            under test, its model, or a tool), ``"user_agent"`` (a user agent or
            the bridge) or ``"metric"`` (a metric raised).
        message: What happened and, where known, what to do.
        type: The exception's class name.
    """

    phase: ErrorPhase
    message: str
    type: str

    @classmethod
    def from_exception(cls, phase: ErrorPhase, error: BaseException) -> EvalErrorInfo:
        """Records `error` as having happened in `phase`."""
        return cls(
            phase=phase,
            message=str(error) or repr(error),
            type=type(error).__name__,
        )


def run_status(
    error: EvalErrorInfo | None,
    termination: Termination | None,
    metrics: Mapping[str, MetricResult],
) -> EvalStatus:
    """A run's status, from what ended it and how its metrics scored.

    ``error`` if anything raised, else ``terminated`` if a limit hit, else ``passed``
    iff every metric that applies passed (else ``failed``). A metric that does not
    apply (it could not look), or an advisory one, neither passes nor fails the run, and reaching
    `TerminateWhen.state_matches` is a normal end, not a termination.
    """
    if error is not None:
        return "error"
    if termination is not None and termination.kind != "state_matches":
        return "terminated"
    applicable = [r for r in metrics.values() if r.applicable and not r.advisory]
    return "passed" if all(result.passed for result in applicable) else "failed"


ExpectedError: TypeAlias = "type[BaseException] | str"
"""What `EvalCase.expect_error` accepts: an exception class, or a pattern of ``Type: message``."""

EXPECT_ERROR = "expect_error"
"""The name of the metric that says whether a run ended in the error its case expects."""


def expected_error(
    expect: ExpectedError, error: EvalErrorInfo | None
) -> tuple[EvalErrorInfo | None, MetricResult]:
    """A run's error and the `EXPECT_ERROR` metric, for a case that expects an error.

    The expected error is no error of the run: it passes the metric and the
    run goes on to its status without it. Any other end fails the metric; an
    error that is not the expected one stays the run's error.
    """
    wanted = _described(expect)
    if error is None:
        said = f"expected the run to end in {wanted}; it ended without an error"
        return None, MetricResult(passed=False, score=0.0, value=None, evidence=[said])
    seen = f"{error.type}: {error.message}"
    if _matches(expect, error):
        evidence = [f"ended as expected, in {wanted}: {seen[:300]}"]
        return None, MetricResult(passed=True, score=1.0, value=error.type, evidence=evidence)
    said = f"expected {wanted}; the run ended in {seen[:300]}"
    return error, MetricResult(passed=False, score=0.0, value=error.type, evidence=[said])


def _described(expect: ExpectedError) -> str:
    if isinstance(expect, str):
        return f"an error matching {expect!r}"
    return f"`{expect.__name__}`"


def _matches(expect: ExpectedError, error: EvalErrorInfo) -> bool:
    if isinstance(expect, str):
        return re.search(expect, f"{error.type}: {error.message}") is not None
    names, pending = set(), [expect]
    while pending:  # the class and its subclasses, by name: results keep only the type's name
        kind = pending.pop()
        names.add(kind.__name__)
        pending.extend(kind.__subclasses__())
    return error.type in names
