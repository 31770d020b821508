"""`run_eval_suite`: many cases, isolated and concurrent, on the executor you choose.

Every run gets its own runner, services and sessions (see `run_eval`), so runs
share nothing but the agent objects. Where the runs go is the `executor`:
`InProcess` (the default: this process, on its event loop), `Workers` (worker
processes of this machine) or `Ray` (a Ray cluster). All three take their jobs
from one job queue and build the suite with one result collector, so the same
seeded suite gives the same statuses, metrics and summary on each.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from .._case import EvalCase
from .._errors import EvalSetupError
from .._tools._faults import new_seed
from ._local import InProcess
from ._plan import DEFAULT_MAX_CONCURRENCY, ResultCallback, StartCallback, SuitePlan, check_suite
from ._ray import Ray
from ._results import EvalSuiteResult
from ._workers import Workers

__all__ = ["Executor", "run_eval_suite"]

Executor: TypeAlias = InProcess | Workers | Ray
"""Where a suite's runs go."""

_POSITIONAL = ("parallel", "max_concurrency", "stop_on_first_failure", "repeat")
"""The options `run_eval_suite` took by position before they became keyword-only."""


async def run_eval_suite(
    cases: Sequence[EvalCase],
    *legacy: Any,
    executor: Executor | None = None,
    parallel: bool = True,
    max_concurrency: int | None = None,
    stop_on_first_failure: bool = False,
    repeat: int = 1,
    max_duration: float | None = None,
    durations: Mapping[str, float] | None = None,
    seed: int | None = None,
    on_start: StartCallback | None = None,
    on_result: ResultCallback | None = None,
    workers: int | None = None,
) -> EvalSuiteResult:
    """Runs many cases, each isolated, concurrently under a bound.

    Args:
        cases: The cases; names must be unique.
        *legacy: Deprecated: `parallel`, `max_concurrency`, `stop_on_first_failure`
            and `repeat` by position (a positional call warns).
        executor: Where the runs go: `InProcess()` (the default), `Workers(n)` or
            `Ray(address=...)`; with the last two every case must be a module-level
            name of an importable module (docs/suites.md).
        parallel: Run concurrently (False runs one at a time).
        max_concurrency: Most runs in flight at once, per worker process or Ray
            task (default `DEFAULT_MAX_CONCURRENCY`).
        stop_on_first_failure: Cancel the rest at the first run that is not ok.
        repeat: Runs per case (for pass^k, pass@k and flakiness).
        max_duration: Caps every run's wall time in seconds, as a case's own
            ``TerminateWhen.max_duration`` does (the shorter of the two applies).
        durations: Seconds per run of an earlier run, by case name: longest first.
        seed: The suite's seed for injected faults (None: a new one, kept in
            `EvalSuiteResult.seed`); each run derives its own from it.
        on_start: Called with ``(case, attempt)`` as a run starts (sync or async).
        on_result: Called with each finished `EvalResult` (sync or async).
        workers: Deprecated: ``executor=Workers(n)``.

    Raises:
        EvalSetupError: For duplicate case names, ``repeat < 1``, ``max_concurrency < 1``,
            an unknown executor, or (with workers or Ray) a case no module binds. A
            case's own set-up mistake does not stop the suite: its runs are errors.
    """
    legacy_options = _legacy_options(legacy, workers)
    repeat = legacy_options.get("repeat", repeat)
    max_concurrency = legacy_options.get("max_concurrency", max_concurrency)
    check_suite(cases, repeat, max_concurrency)
    parallel = legacy_options.get("parallel", parallel)
    plan = SuitePlan(
        cases=cases,
        repeat=repeat,
        max_concurrency=(max_concurrency or DEFAULT_MAX_CONCURRENCY) if parallel else 1,
        stop_on_first_failure=legacy_options.get("stop_on_first_failure", stop_on_first_failure),
        seed=seed if seed is not None else new_seed(),
        max_duration=max_duration,
        durations=durations,
        on_start=on_start,
        on_result=on_result,
    )
    return await _executor(legacy_options.get("executor", executor)).run(plan)


def _executor(value: object) -> Executor:
    """`value` as an executor (None: `InProcess`).

    Raises:
        EvalSetupError: `value` is no executor.
    """
    if value is None:
        return InProcess()
    if not isinstance(value, InProcess | Workers | Ray):
        raise EvalSetupError(f"executor must be InProcess(), Workers(n) or Ray(...), got {value!r}")
    return value


def _legacy_options(legacy: Sequence[Any], workers: int | None) -> dict[str, Any]:
    """The options of a call in the old style, with a `DeprecationWarning` for each kind.

    Raises:
        EvalSetupError: More positional arguments than the old signature had.
    """
    options: dict[str, Any] = {}
    if legacy:
        if len(legacy) > len(_POSITIONAL):
            raise EvalSetupError(
                f"run_eval_suite takes the cases and keyword options, got {len(legacy) + 1} "
                "positional arguments"
            )
        names = _POSITIONAL[: len(legacy)]
        warnings.warn(
            "passing " + ", ".join(f"`{name}`" for name in names) + " to run_eval_suite by "
            "position is deprecated; pass " + ", ".join(f"{name}=..." for name in names),
            DeprecationWarning,
            stacklevel=3,
        )
        options.update(zip(names, legacy, strict=False))
    if workers is not None:
        warnings.warn(
            f"run_eval_suite(workers={workers!r}) is deprecated; pass "
            f"executor=Workers({workers!r})",
            DeprecationWarning,
            stacklevel=3,
        )
        if workers < 1:
            raise EvalSetupError(f"workers must be >= 1, got {workers}")
        options["executor"] = Workers(workers) if workers > 1 else InProcess()
    return options
