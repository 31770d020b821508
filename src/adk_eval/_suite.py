"""`run_eval_suite`: many cases, isolated, concurrently, optionally repeated.

Every run gets its own runner, services and sessions (see `run_eval`), so runs
share nothing but the agent objects, and run concurrently under a bound. With
``repeat=k`` each case runs k times and gets per-case statistics:

* **pass^k**: all k runs passed (the case is reliable);
* **pass@k**: at least one run passed (the case can pass);
* **pass rate**: passed runs / k;
* **label**: ``stable-pass`` (all passed), ``stable-fail`` (none passed) or ``flaky``.

``stop_on_first_failure`` cancels what is still running at the first run that
is not ok, and lists the cases that did not finish. Cancelling the suite (Ctrl-C
in the CLI) cancels every run; no task outlives the call, and the `on_result`
callback has already seen every run that finished.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias

import anyio

from ._callables import maybe_await, sharing_the_loop
from ._case import EvalCase
from ._errors import EvalSetupError
from ._result import EvalErrorInfo, EvalResult
from ._simulation import run_eval
from ._tools._faults import derive_seed, new_seed

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "CaseStats",
    "EvalSuiteResult",
    "check_suite",
    "run_attempt",
    "run_eval_suite",
    "suite_from_results",
]

DEFAULT_MAX_CONCURRENCY = 8
"""Runs in flight at once when `max_concurrency` is not given."""

StabilityLabel: TypeAlias = Literal["stable-pass", "flaky", "stable-fail"]
ResultCallback: TypeAlias = Callable[[EvalResult], Awaitable[None] | None]
StartCallback: TypeAlias = Callable[[EvalCase, int], Awaitable[None] | None]


@dataclass(frozen=True)
class CaseStats:
    """How one case did over its repetitions.

    Attributes:
        name: The case's name.
        runs: Its finished runs, by attempt.
        repeat: How many runs were asked for.
    """

    name: str
    runs: tuple[EvalResult, ...]
    repeat: int

    @property
    def passes(self) -> int:
        """Runs that passed."""
        return sum(result.passed for result in self.runs)

    @property
    def pass_rate(self) -> float:
        """Passed runs / finished runs (0.0 when none finished)."""
        return self.passes / len(self.runs) if self.runs else 0.0

    @property
    def pass_hat_k(self) -> bool:
        """pass^k: every one of the k runs finished and passed."""
        return len(self.runs) == self.repeat and self.passes == self.repeat

    @property
    def pass_at_k(self) -> bool:
        """pass@k: at least one run passed."""
        return self.passes > 0

    @property
    def label(self) -> StabilityLabel:
        """``stable-pass``, ``stable-fail`` or ``flaky``."""
        if self.runs and self.passes == len(self.runs):
            return "stable-pass"
        if self.passes == 0:
            return "stable-fail"
        return "flaky"

    @property
    def ok(self) -> bool:
        """Whether every run of the case leaves the suite green."""
        return len(self.runs) == self.repeat and all(result.ok for result in self.runs)


@dataclass(frozen=True)
class EvalSuiteResult:
    """What `run_eval_suite` produced.

    Attributes:
        summary: Counts of runs: ``total`` (asked for), ``passed``, ``failed``,
            ``errors``, ``terminated``, ``xfailed``, ``xpassed``, ``not_run``.
        results: Every finished run, ordered by case then attempt.
        cases: Per-case statistics, in the order the cases were given.
        not_run: Names of cases with at least one run that did not finish.
        repeat: Runs per case.
        duration_ms: Wall time of the suite.
        stopped_early: True when `stop_on_first_failure` cancelled runs.
        interrupted: True when Ctrl-C stopped the suite (what finished is kept).
        seed: The suite's seed: each run's (`EvalResult.seed`) is derived from it,
            the case's name and the attempt, so ``run_eval_suite(..., seed=seed)``
            (``adk-eval run --seed``) injects the same faults again.
    """

    summary: dict[str, int]
    results: list[EvalResult]
    cases: list[CaseStats] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    repeat: int = 1
    duration_ms: float = 0.0
    stopped_early: bool = False
    seed: int | None = None
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        """Whether every run finished and is ok (passed, or failed as expected).

        Like `EvalResult.ok` and `CaseStats.ok`: an xfailed run counts as ok.
        """
        return not self.not_run and all(result.ok for result in self.results)

    @property
    def passed(self) -> bool:
        """Deprecated alias of `ok` (it never meant "every status is passed")."""
        warnings.warn(
            "EvalSuiteResult.passed is deprecated (it meant `ok`: xfailed runs count); "
            "use EvalSuiteResult.ok",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.ok

    @property
    def pass_rate(self) -> float:
        """Passed runs / finished runs (xfailed runs left out of both)."""
        counted = [r for r in self.results if r.outcome != "xfailed"]
        return sum(r.passed for r in counted) / len(counted) if counted else 1.0

    def explain(self) -> str:
        """Every run that is not ok, explained, after a one-line summary."""
        s = self.summary
        lines = [
            f"{s['total']} runs: {s['passed']} passed, {s['failed']} failed, {s['errors']} errors, "
            f"{s['terminated']} terminated, {s['xfailed']} xfailed, {s['xpassed']} xpassed, "
            f"{s['not_run']} not run"
        ]
        if self.not_run:
            lines.append("not run: " + ", ".join(self.not_run))
        for result in self.results:
            if not result.ok:
                lines.append("")
                lines.append(result.explain())
        return "\n".join(lines)


def _summary(results: Sequence[EvalResult], total: int) -> dict[str, int]:
    outcomes = [result.outcome for result in results]
    return {
        "total": total,
        "passed": outcomes.count("passed"),
        "failed": outcomes.count("failed"),
        "errors": outcomes.count("error"),
        "terminated": outcomes.count("terminated"),
        "xfailed": outcomes.count("xfailed"),
        "xpassed": outcomes.count("xpassed"),
        "not_run": total - len(results),
    }


def run_seed(suite_seed: int, case: str, attempt: int) -> int:
    """The seed of one run of a suite: its own for every case and attempt."""
    return derive_seed(suite_seed, case, attempt)


async def run_attempt(case: EvalCase, attempt: int, suite_seed: int | None = None) -> EvalResult:
    """One run of `case` as a suite counts it: a setup mistake is an ``error`` result.

    With `suite_seed`, the run's seed is derived from it (`run_seed`).
    """
    seed = run_seed(suite_seed, case.name, attempt) if suite_seed is not None else None
    try:
        result = await run_eval(case, seed=seed, attempt=attempt)
    except EvalSetupError as error:
        result = EvalResult(
            name=case.name,
            status="error",
            error=EvalErrorInfo.from_exception("setup", error),
            description=case.description,
            xfail=case.xfail,
            seed=seed,
        )
    return replace(result, attempt=attempt)


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


async def run_eval_suite(
    cases: Sequence[EvalCase],
    parallel: bool = True,
    max_concurrency: int | None = None,
    stop_on_first_failure: bool = False,
    repeat: int = 1,
    *,
    workers: int = 1,
    on_start: StartCallback | None = None,
    on_result: ResultCallback | None = None,
    seed: int | None = None,
) -> EvalSuiteResult:
    """Runs many cases, each isolated, concurrently under a bound.

    Args:
        cases: The cases; names must be unique.
        parallel: Run concurrently (False runs one at a time).
        max_concurrency: Most runs in flight at once, per worker process with
            `workers` (default `DEFAULT_MAX_CONCURRENCY`).
        stop_on_first_failure: Cancel the rest at the first run that is not ok.
        repeat: Runs per case (for pass^k, pass@k and flakiness).
        workers: Worker processes (1: this process). With more, every case must be a
            module-level name of an importable module, since each worker imports
            the cases afresh (see docs/suites.md); results come back as data.
        on_start: Called with ``(case, attempt)`` as a run starts (sync or async).
        on_result: Called with each finished `EvalResult` (sync or async).
        seed: The suite's seed for injected faults (None: a random one); each run
            derives its own from it, its case and its attempt, whatever runs when
            or where. The result keeps it (`EvalSuiteResult.seed`).

    A case with a setup mistake does not stop the suite: its runs are errors
    with phase ``setup``.

    Raises:
        EvalSetupError: For duplicate case names, ``repeat < 1``, ``max_concurrency < 1``,
            ``workers < 1``, or (with workers) a case no module binds.
    """
    check_suite(cases, repeat, max_concurrency)
    if workers < 1:
        raise EvalSetupError(f"workers must be >= 1, got {workers}")
    suite_seed = seed if seed is not None else new_seed()
    if workers > 1:
        from ._case_refs import WorkerSetup
        from ._workers import run_suite_on_workers

        return await run_suite_on_workers(
            cases,
            workers=workers,
            max_concurrency=(max_concurrency or DEFAULT_MAX_CONCURRENCY) if parallel else 1,
            stop_on_first_failure=stop_on_first_failure,
            repeat=repeat,
            on_start=on_start,
            on_result=on_result,
            setup=WorkerSetup(seed=suite_seed),
        )
    started = time.perf_counter()
    bound = (max_concurrency or DEFAULT_MAX_CONCURRENCY) if parallel else 1
    limiter = anyio.CapacityLimiter(bound)
    finished: dict[tuple[int, int], EvalResult] = {}
    callback_errors: list[Exception] = []
    stopped_early = False

    async with anyio.create_task_group() as group:

        async def run_job(index: int, case: EvalCase, attempt: int) -> None:
            nonlocal stopped_early
            async with limiter:
                try:
                    if on_start is not None:
                        await maybe_await(on_start(case, attempt))
                    result = await run_attempt(case, attempt, suite_seed)
                    finished[(index, attempt)] = result
                    if on_result is not None:
                        await maybe_await(on_result(result))
                except Exception as error:  # a callback raised: stop, and raise it as is
                    callback_errors.append(error)
                    group.cancel_scope.cancel()
                    return
                if stop_on_first_failure and not result.ok:
                    stopped_early = True
                    group.cancel_scope.cancel()

        # More than one run at a time on this loop: sync user code goes to worker
        # threads (each task keeps the context it starts with).
        with sharing_the_loop(bound > 1 and len(cases) * repeat > 1):
            for index, case in enumerate(cases):
                for attempt in range(repeat):
                    group.start_soon(run_job, index, case, attempt)

    if callback_errors:
        raise callback_errors[0]

    suite = suite_from_results(
        [finished[key] for key in sorted(finished)],
        case_names=[case.name for case in cases],
        repeat=repeat,
        duration_ms=(time.perf_counter() - started) * 1000,
        stopped_early=stopped_early,
    )
    return replace(suite, seed=suite_seed)


def suite_from_results(
    results: Sequence[EvalResult],
    *,
    case_names: Sequence[str],
    repeat: int,
    duration_ms: float,
    stopped_early: bool = False,
) -> EvalSuiteResult:
    """The suite of `results` (runs of `case_names`, in case order, each `repeat` times).

    One path for a suite run here and one merged from shards run elsewhere.
    """
    by_case: dict[str, list[EvalResult]] = {name: [] for name in case_names}
    for result in results:
        by_case[result.name].append(result)
    stats = [
        CaseStats(
            name=name,
            runs=tuple(sorted(by_case[name], key=lambda r: r.attempt)),
            repeat=repeat,
        )
        for name in case_names
    ]
    ordered = [run for stat in stats for run in stat.runs]
    return EvalSuiteResult(
        summary=_summary(ordered, total=len(case_names) * repeat),
        results=ordered,
        cases=stats,
        not_run=[s.name for s in stats if len(s.runs) < repeat],
        repeat=repeat,
        duration_ms=duration_ms,
        stopped_early=stopped_early,
    )
