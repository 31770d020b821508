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
import difflib
import gc
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, TypedDict, Unpack, cast, runtime_checkable

from .._case import EvalCase
from .._errors import EvalSetupError
from .._sandbox._scope import SANDBOX_MODES, TELEMETRY_MODES, SandboxMode, TelemetryMode
from .._sandbox._telemetry import describe
from .._seeds import new_seed
from .._termination import Budget
from ..models._gateway._settings import ModelCalls, project_settings
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

__all__ = [
    "Executor",
    "SuiteOptions",
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


class SuiteOptions(TypedDict, total=False):
    """The options of `run_eval_suite`: each keyword-only, optional and checked.

    The others are the `SuitePlan` fields of their names: ``stop_on_first_failure``
    (default False), ``max_duration``, ``budget``, ``sandbox``, ``telemetry``,
    ``durations``, ``on_start``, ``on_result`` (default None).
    """

    executor: Executor
    """Where the runs go: `InProcess()` (the default), `Workers(n)` or `Ray(address=...)`
    (cases must then be module-level names, docs/suites.md), or an `Executor` of your own."""
    parallel: bool
    """Run concurrently (the default); False runs one at a time."""
    max_concurrency: int | None
    """Runs in flight at once, per process or Ray task (default `DEFAULT_MAX_CONCURRENCY`)."""
    repeat: int | Adaptive | str
    """Runs per case (default 1), or adaptive repeats (`Adaptive`, ``"auto"``, ``"auto:MAX"``)."""
    seed: int | None
    """The suite's seed for injected faults (None, the default: a new one, in the result)."""
    faults: float | None
    """The share of calls (above 0, at most 1) that fail on every mocked or simulated tool
    without faults of its own (`SuitePlan.faults`; docs/harness.md, "Robustness under
    faults"); its cassettes are recorded and replayed apart, under ``_faults-<rate>``."""
    model_calls: ModelCalls | None
    """How the model calls are paced, retried, cached and recorded (None, the default: the
    project's ``[tool.adk-eval.limits]``; docs/models.md); a case's `EvalCase.cache` wins."""
    stop_on_first_failure: bool
    max_duration: float | None
    budget: Budget | None
    sandbox: SandboxMode | None
    telemetry: TelemetryMode | None
    durations: Mapping[str, float] | None
    on_start: StartCallback | None
    on_result: ResultCallback | None


async def run_eval_suite(
    cases: Sequence[EvalCase], **options: Unpack[SuiteOptions]
) -> EvalSuiteResult:
    """Runs many cases, each isolated, concurrently under a bound.

    Args:
        cases: The cases; names must be unique.
        **options: `SuiteOptions`: the executor, repeats, concurrency, limits,
            modes, seed, faults, callbacks and model calls.

    Raises:
        EvalSetupError: Duplicate case names, an unknown or bad option, or (workers,
            Ray) a case no module binds (a case's own set-up mistake is its runs' error).
    """
    check_a_list_of_cases(cases, "run_eval_suite")
    unknown = sorted(set(options) - set(SuiteOptions.__annotations__))
    if unknown:
        close = difflib.get_close_matches(unknown[0], SuiteOptions.__annotations__, n=1)
        hint = _MOVED.get(unknown[0]) or (f" (did you mean `{close[0]}`?)" if close else "")
        raise EvalSetupError(f"run_eval_suite has no option `{unknown[0]}`{hint}")
    return await _run(_plan(cases, options), _executor(options.get("executor")))


_MOVED = {
    "workers": ": pass executor=Workers(n)",
    "cache": ': pass model_calls=ModelCalls(cache="all") (or the roles to cache)',
}
"""Options that became part of another: how to say them now."""


def _plan(cases: Sequence[EvalCase], options: SuiteOptions) -> SuitePlan:
    """The suite `options` ask for, each checked (see `SuiteOptions`)."""
    repeat = options.get("repeat", 1)
    adaptive = adaptive_repeats(repeat)
    runs = adaptive.max if adaptive is not None else cast(int, repeat)
    concurrency = options.get("max_concurrency")
    check_suite(cases, runs, concurrency)
    faults = options.get("faults")
    rate = None if faults is None else check_fault_rate(faults)
    seed = options.get("seed")
    settings = options.get("model_calls") or project_settings()
    return SuitePlan(
        cases=cases,
        repeat=runs,
        max_concurrency=(
            (concurrency or DEFAULT_MAX_CONCURRENCY) if options.get("parallel", True) else 1
        ),
        stop_on_first_failure=options.get("stop_on_first_failure", False),
        seed=seed if seed is not None else new_seed(),
        max_duration=options.get("max_duration"),
        sandbox=_mode("sandbox", options.get("sandbox"), SANDBOX_MODES),
        telemetry=_mode("telemetry", options.get("telemetry"), TELEMETRY_MODES),
        durations=options.get("durations"),
        on_start=options.get("on_start"),
        on_result=options.get("on_result"),
        adaptive=adaptive,
        budget=options.get("budget"),
        faults=rate,
        model_calls=cassettes_apart(settings, rate),
    )


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


async def _run(plan: SuitePlan, executor: Executor) -> EvalSuiteResult:
    """`plan` on `executor`, with what runs for real read off its cases before.

    Raises:
        EvalSetupError: The plan has faults and `executor` does not apply them.
    """
    if plan.faults is not None:
        check_applies_faults(executor)
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
