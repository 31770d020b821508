"""What a suite is asked to do, as every executor receives it (`SuitePlan`).

Importing this module imports no ADK (the CLI reads its defaults to print its
help): the types it names come in for type checkers only.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from .._errors import EvalSetupError
from ..models._gateway._settings import ModelCalls, project_settings

if TYPE_CHECKING:
    from .._case import EvalCase
    from .._result import EvalResult
    from .._sandbox._scope import SandboxMode, TelemetryMode
    from .._termination import Budget

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "Adaptive",
    "ResultCallback",
    "StartCallback",
    "SuitePlan",
    "available_cores",
    "check_suite",
]

DEFAULT_MAX_CONCURRENCY = 8
"""Runs in flight at once (per worker process or Ray task) when `max_concurrency` is not given."""

ResultCallback: TypeAlias = "Callable[[EvalResult], Awaitable[None] | None]"
StartCallback: TypeAlias = "Callable[[EvalCase, int], Awaitable[None] | None]"


@dataclass(frozen=True)
class Adaptive:
    """Adaptive repeats: more runs only for the cases whose verdict is still uncertain.

    ``run_eval_suite(cases, repeat=Adaptive(max=10))`` (or ``repeat="auto"``,
    ``adk-eval run --repeat auto:10``) runs each case until the 95 % interval of
    its pass rate lies wholly above `threshold` or wholly below it, or `max` runs.
    A case that always passes (or always fails) stops after 4 runs at the
    default threshold; one that passes half the time runs `max` times. The suite
    counts the runs each case needed (`CaseStats.repeat`) and the runs saved
    against `max` for every case (`EvalSuiteResult.attempts_saved`).

    Attributes:
        max: The most runs of a case.
        threshold: The pass rate a case's interval must clear, either way.
        confidence: The interval's confidence.
    """

    max: int = 10
    threshold: float = 0.5
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.max < 1:
            raise EvalSetupError(f"Adaptive(max=...) must be >= 1, got {self.max}")
        if not 0 < self.threshold < 1:
            raise EvalSetupError(
                f"Adaptive(threshold=...) is a pass rate between 0 and 1 (exclusive), "
                f"got {self.threshold}"
            )
        if not 0 < self.confidence < 1:
            raise EvalSetupError(
                f"Adaptive(confidence=...) must be between 0 and 1, got {self.confidence}"
            )

    def __str__(self) -> str:
        return f"auto:{self.max} (threshold {self.threshold:.0%}, {self.confidence:.0%} interval)"


@dataclass(frozen=True)
class SuitePlan:
    """One suite, as `run_eval_suite` hands it to an executor.

    Attributes:
        cases: The cases, in order; names are unique.
        repeat: Runs per case.
        max_concurrency: Runs in flight at once (per worker process or Ray task).
        stop_on_first_failure: Stop everything at the first run that is not ok.
        seed: The suite's seed; each run derives its own from it.
        max_duration: Caps each run's wall time in seconds (a case's own shorter
            ``max_duration`` stays); None leaves the cases as they are.
        durations: Seconds per run of an earlier run, by case name: the longest
            cases start first.
        on_start: Called with ``(case, attempt)`` as a run starts.
        on_result: Called with each finished `EvalResult`.
        sandbox: Every case's sandbox mode (None: each case's own).
        telemetry: Every case's telemetry mode (None: each case's own).
        adaptive: Adaptive repeats (`repeat` is then their `Adaptive.max`).
        budget: Tokens and money the whole suite may spend; once spent, runs not
            finished are cancelled and reported as not run.
        faults: Seeded faults at this rate on every mocked tool without its own
            (`adk_eval._suites._faulted`); None: the cases as written.
        model_calls: How every run's model calls are paced, retried, cached and
            recorded (the executor hands them to each run, in any process).
    """

    cases: Sequence[EvalCase]
    repeat: int
    max_concurrency: int
    stop_on_first_failure: bool
    seed: int
    max_duration: float | None = None
    durations: Mapping[str, float] | None = None
    on_start: StartCallback | None = None
    on_result: ResultCallback | None = None
    sandbox: SandboxMode | None = None
    telemetry: TelemetryMode | None = None
    adaptive: Adaptive | None = None
    budget: Budget | None = None
    faults: float | None = None
    model_calls: ModelCalls = field(default_factory=project_settings)

    @property
    def total(self) -> int:
        """Runs asked for."""
        return len(self.cases) * self.repeat


def check_suite(cases: Sequence[EvalCase], repeat: int, max_concurrency: int | None) -> None:
    """Refuses what no suite can run: duplicate case names, ``repeat < 1``, ``max_concurrency < 1``.

    Raises:
        EvalSetupError: Naming the problem.
    """
    if repeat < 1:
        raise EvalSetupError(f"repeat must be >= 1, got {repeat}")
    if max_concurrency is not None and max_concurrency < 1:
        raise EvalSetupError(f"max_concurrency must be >= 1, got {max_concurrency}")
    names = [case.name for case in cases]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise EvalSetupError(
            "case names must be unique within a suite; repeated: "
            + ", ".join(f"`{name}`" for name in duplicates)
        )


def available_cores() -> int:
    """The cores this process may run on (``Workers("auto")``, ``--workers auto``)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
