"""`run_eval_suite`: many cases, isolated and concurrent, on the executor you choose.

Every run gets its own runner, services and sessions (see `run_eval`), so runs
share nothing but the agent objects. Where the runs go is the `executor`:
`InProcess` (the default: this process, on its event loop), `Workers` (worker
processes of this machine), `Ray` (a Ray cluster), or any object with the one
method an `Executor` has. The three take their jobs from one job queue and build
the suite with one result collector, so the same seeded suite gives the same
statuses, metrics and summary on each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, cast, runtime_checkable

from .._case import EvalCase
from .._errors import EvalSetupError
from .._sandbox._scope import SANDBOX_MODES, TELEMETRY_MODES, SandboxMode, TelemetryMode
from .._sandbox._telemetry import describe
from .._seeds import new_seed
from .._termination import Budget
from ..models._settings import CacheRoles, ModelCalls, current_settings, using_settings
from ._faulted import cassettes_apart, check_fault_rate
from ._inventory import RunsForReal, of_trees
from ._jobs import WorkerSetup
from ._local import InProcess
from ._plan import (
    DEFAULT_MAX_CONCURRENCY,
    Adaptive,
    ResultCallback,
    StartCallback,
    SuitePlan,
    check_suite,
)
from ._results import EvalSuiteResult
from ._workers import Workers

__all__ = [
    "Executor",
    "adaptive_repeats",
    "check_a_list_of_cases",
    "check_applies_faults",
    "run_eval_suite",
    "runs_for_real",
]


@runtime_checkable
class Executor(Protocol):
    """Where a suite's runs go: any object with this one method.

    `InProcess`, `Workers` and `Ray` are executors; so is a class of your own
    with an async ``run(plan)``, passed as ``run_eval_suite(cases, executor=...)``.
    One that sends files elsewhere may also have ``shipping(cases)``, the lines
    `runs_for_real` lists (see `Ray.shipping`). One that applies ``plan.faults`` says
    so with ``applies_faults = True`` (see `check_applies_faults`); a suite with
    faults refuses any other.
    """

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs every run `plan` asks for; returns the suite they make.

        Each finished run goes to ``plan.on_result`` as it finishes, and the suite
        stops early where ``plan.stop_on_first_failure`` or ``plan.budget`` says so.
        """
        ...


_POSITIONAL = ("parallel", "max_concurrency", "stop_on_first_failure", "repeat")
"""The options `run_eval_suite` took by position before they became keyword-only."""


async def run_eval_suite(
    cases: Sequence[EvalCase],
    *legacy: Any,
    executor: Executor | None = None,
    parallel: bool = True,
    max_concurrency: int | None = None,
    stop_on_first_failure: bool = False,
    repeat: int | Adaptive | str = 1,
    max_duration: float | None = None,
    budget: Budget | None = None,
    sandbox: SandboxMode | None = None,
    telemetry: TelemetryMode | None = None,
    durations: Mapping[str, float] | None = None,
    seed: int | None = None,
    faults: float | None = None,
    on_start: StartCallback | None = None,
    on_result: ResultCallback | None = None,
    workers: int | None = None,
    model_calls: ModelCalls | None = None,
    cache: CacheRoles = None,
) -> EvalSuiteResult:
    """Runs many cases, each isolated, concurrently under a bound.

    Args:
        cases: The cases; names must be unique.
        *legacy: Deprecated (warns): the next four options by position.
        executor: Where the runs go: `InProcess()` (the default), `Workers(n)` or
            `Ray(address=...)` (cases must then be module-level names, docs/suites.md),
            or any `Executor` of your own.
        parallel: Run concurrently (False runs one at a time).
        max_concurrency: Runs in flight at once, per process or Ray task.
        stop_on_first_failure: Cancel the rest at the first run that is not ok.
        repeat: Runs per case (for pass^k, pass@k and flakiness), or adaptive repeats
            (`Adaptive`, ``"auto"``, ``"auto:MAX"``): runs only while a verdict is uncertain.
        max_duration: Caps every run's wall time in seconds (a case's shorter one stays).
        budget: Tokens and money for the whole suite; once spent, the rest is not run.
        sandbox: Overrides every case's `EvalCase.sandbox` (None: each keeps its own);
        telemetry: likewise `EvalCase.telemetry`.
        durations: Seconds per run of an earlier run, by case name: longest first.
        seed: The suite's seed for injected faults (None: a new one, `EvalSuiteResult.seed`).
        faults: The share of calls (above 0, at most 1) that fail on every mocked or
            simulated tool without faults of its own, drawn from the seed like
            `ToolMock.with_faults`; real tools are never faulted. The cases are not
            changed: each run gets a copy (docs/harness.md, "Robustness under faults").
            Its cassettes are recorded and replayed apart, under ``_faults-<rate>``.
        on_start: Called with ``(case, attempt)`` as a run starts (sync or async).
        on_result: Called with each finished `EvalResult` (sync or async).
        workers: Deprecated: ``executor=Workers(n)``.
        model_calls: How the suite's model calls are paced, retried, cached and
            recorded (`adk_eval.models.ModelCalls`; None: the command line's or
            the project's, see docs/models.md).
        cache: The roles whose model answers are cached (``"all"``,
            ``"agent,users"``, ...), over `model_calls`; a case's own
            `EvalCase.cache` wins.

    Raises:
        EvalSetupError: Duplicate case names, a bad `repeat`, `max_concurrency` or `faults`,
            an unknown executor or mode, or (workers, Ray) a case no module binds (a case's
            own set-up mistake does not stop the suite: its runs are errors).
    """
    check_a_list_of_cases(cases, "run_eval_suite")
    legacy_options = _legacy_options(legacy, workers)
    adaptive, runs, concurrency = _runs(legacy_options, repeat, max_concurrency, parallel, cases)
    plan = SuitePlan(
        cases=cases,
        repeat=runs,
        max_concurrency=concurrency,
        stop_on_first_failure=legacy_options.get("stop_on_first_failure", stop_on_first_failure),
        seed=seed if seed is not None else new_seed(),
        max_duration=max_duration,
        sandbox=_mode("sandbox", sandbox, SANDBOX_MODES),
        telemetry=_mode("telemetry", telemetry, TELEMETRY_MODES),
        durations=durations,
        on_start=on_start,
        on_result=on_result,
        adaptive=adaptive,
        budget=budget,
        faults=None if faults is None else check_fault_rate(faults),
    )
    chosen = _executor(legacy_options.get("executor", executor))
    if plan.faults is not None:
        check_applies_faults(chosen)
    if model_calls is None and cache is None and plan.faults is None:
        return await _run(plan, chosen)
    settings = model_calls if model_calls is not None else current_settings()
    if cache is not None:
        settings = settings.replace(cache=cache)
    with using_settings(cassettes_apart(settings, plan.faults)):
        return await _run(plan, chosen)


def adaptive_repeats(repeat: object) -> Adaptive | None:
    """`repeat` as adaptive repeats (``"auto"``, ``"auto:MAX"``, `Adaptive`), or None for a count.

    Raises:
        EvalSetupError: Neither a count nor adaptive repeats.
    """
    if isinstance(repeat, Adaptive):
        return repeat
    if isinstance(repeat, str):
        word, _, most = repeat.partition(":")
        if word.strip() == "auto":
            if not most:
                return Adaptive()
            if most.strip().isdigit():
                return Adaptive(max=int(most))
        raise EvalSetupError(
            "repeat must be a number of runs, 'auto' or 'auto:MAX' (e.g. 'auto:10'), "
            f"got {repeat!r}"
        )
    if not isinstance(repeat, int) or isinstance(repeat, bool):
        raise EvalSetupError(f"repeat must be a number of runs or 'auto[:MAX]', got {repeat!r}")
    return None


def _runs(
    legacy_options: Mapping[str, Any],
    repeat: object,
    max_concurrency: int | None,
    parallel: bool,
    cases: Sequence[EvalCase],
) -> tuple[Adaptive | None, int, int]:
    """Adaptive repeats (or None), the runs per case (their maximum) and the concurrency.

    The options given by position (deprecated) win; the suite is checked.
    """
    asked, max_concurrency = (legacy_options.get(k, v) for k, v in _given(repeat, max_concurrency))
    adaptive = adaptive_repeats(asked)
    runs = adaptive.max if adaptive is not None else cast(int, asked)
    check_suite(cases, runs, max_concurrency)
    if not legacy_options.get("parallel", parallel):
        return adaptive, runs, 1
    return adaptive, runs, max_concurrency or DEFAULT_MAX_CONCURRENCY


def _given(repeat: Any, max_concurrency: int | None) -> tuple[tuple[str, Any], ...]:
    return ("repeat", repeat), ("max_concurrency", max_concurrency)


async def _run(plan: SuitePlan, executor: Executor) -> EvalSuiteResult:
    """`plan` on `executor`, with what runs for real read off its cases before."""
    inventory = runs_for_real(plan.cases, executor, sandbox=plan.sandbox, telemetry=plan.telemetry)
    with _frozen_heap():
        suite = await executor.run(plan)
    return dataclasses.replace(suite, runs_for_real=inventory)


_FROZEN = [0]
"""How many suites of this process run with the heap frozen (only the outermost freezes)."""


@contextlib.contextmanager
def _frozen_heap() -> Iterator[None]:
    """What exists before a suite (its cases, agents, modules) left out of garbage collection.

    Python's full collections scan every object alive, and a suite's runs make
    enough garbage to trigger one every few hundred runs: without this, each
    run cost more than the one before as the suite grew (0.9 ms more per run
    at 2,000 runs). Frozen objects are not freed while the suite runs; they are
    thawed when it ends.
    """
    _FROZEN[0] += 1
    if _FROZEN[0] == 1:
        gc.freeze()
    try:
        yield
    finally:
        _FROZEN[0] -= 1
        if _FROZEN[0] == 0:
            gc.unfreeze()


def runs_for_real(
    cases: Sequence[EvalCase],
    executor: Executor | None = None,
    *,
    sandbox: SandboxMode | None = None,
    telemetry: TelemetryMode | None = None,
) -> RunsForReal:
    """What of the user's code and set-up will run for real in a suite of `cases`.

    The plugins, callbacks and toolsets of the cases' agents and Apps, the
    telemetry the user's modules installed and what the runs do to it, what
    `executor` ships (for Ray), and what each sandbox mode does with the rest.
    `sandbox` and `telemetry` override every case's own, as in `run_eval_suite`.
    """
    setup = WorkerSetup(sandbox=sandbox, telemetry=telemetry)
    cases = [setup.apply(case) for case in cases]
    keeping = [case.name for case in cases if case.telemetry == "keep"]
    shipping = getattr(executor, "shipping", None)
    return of_trees(case.agent_under_test for case in cases).with_items(
        telemetry=describe(keeping, len(cases)),
        shipping=shipping(cases) if callable(shipping) else (),
        sandbox=_sandbox_lines(cases),
    )


_SANDBOX = {
    "warn": "processes, signals, connections off this machine or to Unix sockets, binds, "
    "name lookups and file writes of the cases' own code (threads it starts included) are "
    "listed in each run's warnings",
    "strict": "the first process, signal, outside connection, bind, name lookup or file "
    "write of the case's own code (threads it starts included) is refused and ends the run "
    "in an error",
    "off": "not watched",
}


def _mode(name: str, value: str | None, allowed: Sequence[str]) -> Any:
    """`value` if it is one of `allowed` (or None).

    Raises:
        EvalSetupError: Naming the option and what it takes.
    """
    if value is not None and value not in allowed:
        raise EvalSetupError(
            f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}"
        )
    return value


def _sandbox_lines(cases: Sequence[EvalCase]) -> list[str]:
    """One line per sandbox mode the cases use (``warn (every case): ...``)."""
    modes: dict[str, list[str]] = {}
    for case in cases:
        modes.setdefault(case.sandbox, []).append(case.name)
    lines = []
    for mode, names in modes.items():
        who = "every case" if len(names) == len(cases) else ", ".join(f"`{n}`" for n in names)
        lines.append(f"{mode} ({who}): {_SANDBOX[mode]}")
    return lines


def check_applies_faults(executor: object) -> None:
    """Refuses, for a suite with faults, an executor that does not say it applies them.

    `InProcess`, `Workers` and `Ray` give each case they run the plan's faults
    (``applies_faults = True``). An executor of your own gets the plan's cases as
    written: one that ran them without ``plan.faults`` would make the pass with
    faults a pass without any, and the suite would look robust when it was never
    tested. None (the default, `InProcess`) is fine.

    Raises:
        EvalSetupError: `executor` does not set ``applies_faults = True``.
    """
    if executor is None or getattr(executor, "applies_faults", False) is True:
        return
    name = type(executor).__name__
    raise EvalSetupError(
        f"faults need an executor that applies them, and executor `{name}` does not say it "
        "does: its cases would run without faults; pass the plan on to InProcess(), "
        f"Workers(n) or Ray(...), which apply `plan.faults`, and set `applies_faults = True` "
        f"on `{name}`"
    )


def _executor(value: object) -> Executor:
    """`value` as an executor (None: `InProcess`).

    Raises:
        EvalSetupError: `value` is no executor.
    """
    if value is None:
        return InProcess()
    if isinstance(value, type):
        raise EvalSetupError(
            f"executor must be an instance, got the class `{value.__name__}`: "
            f"pass `{value.__name__}()`"
        )
    if not isinstance(value, Executor) or not callable(value.run):
        raise EvalSetupError(
            "executor must be InProcess(), Workers(n), Ray(...) or an object with an async "
            f"`run(plan)` method, got {value!r}"
        )
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


def check_a_list_of_cases(cases: Any, function: str) -> None:
    """Refuses one `EvalCase` where a list of them is due, in one line with the fix.

    Raises:
        EvalSetupError: `cases` is one case.
    """
    if isinstance(cases, EvalCase):
        raise EvalSetupError(
            f"{function} takes a list of cases, got the one case `{cases.name}`; write "
            f"{function}([case]) (or run_eval(case) for one run)"
        )
