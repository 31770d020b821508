"""Case references: the unit a suite is distributed in (worker processes, Ray tasks).

Cases hold live agent objects and do not pickle, so a case never crosses a
process. What crosses is a `Job`: a `CaseRef` (the module that binds the case at
module level, and the case's name) and the attempt number. The process that
runs it imports the module itself, picks the case by name and runs it; the
result goes back as `EvalResult.to_data()` and the parent merges results with
`suite_from_results`, the same path as a one-process run.

`JobQueue` decides what runs next: first attempts in the order given (longest
first when durations from an earlier run are known), then the repeats of the
cases that took longest, so long cases do not start last and stretch the tail.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ._callables import maybe_await, sharing_the_loop
from ._case import EvalCase
from ._errors import EvalSetupError
from ._result import EvalErrorInfo, EvalResult
from ._suite import EvalSuiteResult, ResultCallback, suite_from_results
from ._tools._faults import new_seed

__all__ = [
    "CaseLoader",
    "CaseRef",
    "Job",
    "JobQueue",
    "ResultCollector",
    "WorkerSetup",
    "case_refs",
    "error_result",
    "run_job",
    "seeded",
    "with_timeout",
]


@dataclass(frozen=True)
class CaseRef:
    """Where a process finds a case: `module` binds it at module level, named `name`."""

    module: str
    name: str


@dataclass(frozen=True)
class Job:
    """One run of a case: its reference and the attempt (0-based)."""

    ref: CaseRef
    attempt: int


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker applies to every case it loads, as the parent would.

    Attributes:
        default_model: The CLI's ``--model``: every `LlmAgent` without its own model uses it.
        timeout: The CLI's ``--timeout``: caps each run's wall time.
        seed: The suite's seed (``--seed``): each run derives its own from it.
    """

    default_model: str | None = None
    timeout: float | None = None
    seed: int | None = None


def seeded(setup: WorkerSetup | None) -> WorkerSetup:
    """`setup` (or the default one) with a suite seed: the one it has, else a new one."""
    setup = setup or WorkerSetup()
    return setup if setup.seed is not None else dataclasses.replace(setup, seed=new_seed())


def with_timeout(case: EvalCase, timeout: float | None) -> EvalCase:
    """`case` with its wall time capped at `timeout` seconds (unchanged without one)."""
    limit = case.terminate_when.max_duration
    if timeout is None or (limit is not None and limit <= timeout):
        return case
    limits = dataclasses.replace(case.terminate_when, max_duration=timeout)
    return dataclasses.replace(case, terminate_when=limits)


def _bound_cases(value: object) -> Iterable[object]:
    return value if isinstance(value, list | tuple) else (value,)


def case_refs(cases: Sequence[EvalCase]) -> list[CaseRef]:
    """The reference of each case: a loaded module that binds it at module level.

    Raises:
        EvalSetupError: Naming the cases no module binds (built in a function or
            changed with ``dataclasses.replace``): another process cannot find them.
    """
    wanted = {id(case): case for case in cases}
    owners: dict[int, str] = {}
    for module_name, module in list(sys.modules.items()):
        if module_name == "__mp_main__" or module is None:
            continue
        try:
            values = list(vars(module).items())
        except TypeError:
            continue
        for attribute, value in values:
            if attribute.startswith("_") or not isinstance(value, EvalCase | list | tuple):
                continue
            for candidate in _bound_cases(value):
                if id(candidate) in wanted and isinstance(candidate, EvalCase):
                    owners.setdefault(id(candidate), module_name)
    missing = [case.name for case in cases if id(case) not in owners]
    if missing:
        raise EvalSetupError(
            "worker processes import the cases they run, so each case must be a module-level "
            "name (or in a module-level list) of an importable module; not found: "
            + ", ".join(f"`{name}`" for name in missing[:5])
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        )
    return [CaseRef(module=owners[id(case)], name=case.name) for case in cases]


def error_result(name: str, attempt: int, type_: str, message: str) -> EvalResult:
    """An ``error`` run (phase ``system``) for a run its process could not finish."""
    return EvalResult(
        name=name,
        status="error",
        error=EvalErrorInfo(phase="system", type=type_, message=message),
        attempt=attempt,
    )


class CaseLoader:
    """Imports the modules of case references, once each, and finds the cases in them."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        """What it applies to every case, and the suite's seed."""
        self._modules: dict[str, dict[str, EvalCase] | str] = {}
        if setup.default_model:
            from google.adk.agents import LlmAgent

            from .models import resolve_model

            LlmAgent.set_default_model(resolve_model(setup.default_model))

    def load(self, ref: CaseRef) -> EvalCase | EvalResult:
        """The case `ref` names, or (as an ``error`` result of attempt 0) why it is missing."""
        cases = self._modules.get(ref.module)
        if cases is None:
            cases = self._modules[ref.module] = self._import(ref.module)
        if isinstance(cases, str):
            return _setup_error(ref.name, "CaseImportError", cases)
        case = cases.get(ref.name)
        if case is None:
            return _setup_error(
                ref.name,
                "CaseNotFound",
                f"case `{ref.name}` is defined in module `{ref.module}` in the parent process "
                "but not when a worker process imports it; the cases a module defines must not "
                "depend on what the parent did at run time",
            )
        return with_timeout(case, self.setup.timeout)

    @staticmethod
    def _import(name: str) -> dict[str, EvalCase] | str:
        try:
            module = importlib.import_module(name)
        except (Exception, SystemExit) as error:
            return f"a worker process cannot import `{name}`: {type(error).__name__}: {error}"
        return {
            case.name: case
            for attribute, value in vars(module).items()
            if not attribute.startswith("_")
            for case in _bound_cases(value)
            if isinstance(case, EvalCase)
        }


async def run_job(loader: CaseLoader, job: Job) -> EvalResult:
    """Runs `job` as `run_eval_suite` runs one attempt; a crash of the harness is an error."""
    from ._suite import run_attempt

    case = loader.load(job.ref)
    if isinstance(case, EvalResult):
        return dataclasses.replace(case, attempt=job.attempt)
    try:
        with sharing_the_loop():  # a worker or a Ray task runs many jobs on its loop
            return await run_attempt(case, job.attempt, loader.setup.seed)
    except Exception as error:
        return error_result(job.ref.name, job.attempt, type(error).__name__, str(error))


def _setup_error(name: str, type_: str, message: str) -> EvalResult:
    return EvalResult(
        name=name,
        status="error",
        error=EvalErrorInfo(phase="setup", type=type_, message=message),
    )


class JobQueue:
    """The runs not yet started, in the order they should start.

    First attempts go first, in the order given or, with `durations` (seconds per
    run from an earlier run), longest first with unknown cases before known ones.
    Repeats follow, the case with the longest known run first; a case whose first
    run is still going counts as the longest (it is at least that long).
    """

    def __init__(
        self,
        refs: Sequence[CaseRef],
        repeat: int,
        durations: Mapping[str, float] | None = None,
    ) -> None:
        known = dict(durations or {})
        order = sorted(range(len(refs)), key=lambda i: -known.get(refs[i].name, math.inf))
        self._first: deque[Job] = deque(Job(refs[i], 0) for i in order)
        self._repeats: dict[int, deque[Job]] = {
            index: deque(Job(ref, attempt) for attempt in range(1, repeat))
            for index, ref in enumerate(refs)
            if repeat > 1
        }
        self._index = {ref.name: index for index, ref in enumerate(refs)}
        self._observed: dict[str, list[float]] = {}
        self._prior = known

    def __len__(self) -> int:
        return len(self._first) + sum(len(jobs) for jobs in self._repeats.values())

    def pop(self) -> Job:
        """The next run to start.

        Raises:
            IndexError: When nothing is left.
        """
        if self._first:
            return self._first.popleft()
        if not self._repeats:
            raise IndexError("no runs left")
        index = min(self._repeats, key=lambda i: (-self._expected(i), i))
        jobs = self._repeats[index]
        job = jobs.popleft()
        if not jobs:
            del self._repeats[index]
        return job

    def put_back(self, job: Job) -> None:
        """Returns a run that could not start; it starts next."""
        if job.attempt == 0:
            self._first.appendleft(job)
        else:
            self._repeats.setdefault(self._index[job.ref.name], deque()).appendleft(job)

    def finished(self, result: EvalResult) -> None:
        """Learns how long a run of `result.name` takes."""
        self._observed.setdefault(result.name, []).append(result.duration_ms / 1000)

    def clear(self) -> list[Job]:
        """Removes and returns every run not started."""
        left = list(self._first) + [job for jobs in self._repeats.values() for job in jobs]
        self._first.clear()
        self._repeats.clear()
        return left

    def _expected(self, index: int) -> float:
        name = next(iter(self._repeats[index])).ref.name
        observed = self._observed.get(name)
        if observed:
            return sum(observed) / len(observed)
        return self._prior.get(name, math.inf)


class ResultCollector:
    """The parent's side of a distributed suite: keeps results and builds the suite.

    Args:
        cases: The suite's cases, in order.
        repeat: Runs per case.
        queue: The runs not started (told how long each finished run took).
        on_result: Called with every result kept.
        stop_on_first_failure: `keep` says stop at the first run that is not ok.
    """

    def __init__(
        self,
        cases: Sequence[EvalCase],
        repeat: int,
        queue: JobQueue,
        on_result: ResultCallback | None,
        stop_on_first_failure: bool,
    ) -> None:
        self._cases = {case.name: case for case in cases}
        self._names = [case.name for case in cases]
        self._repeat = repeat
        self._queue = queue
        self._on_result = on_result
        self._stop_on_failure = stop_on_first_failure
        self._results: list[EvalResult] = []
        self.stopped_early = False

    def case(self, name: str) -> EvalCase:
        """The parent's case named `name`."""
        return self._cases[name]

    async def keep(self, result: EvalResult) -> bool:
        """Keeps `result` and reports it; True when the suite must stop now."""
        if result.status == "error" and result.description is None:
            case = self._cases[result.name]
            result = dataclasses.replace(result, description=case.description, xfail=case.xfail)
        self._queue.finished(result)
        self._results.append(result)
        if self._on_result is not None:
            await maybe_await(self._on_result(result))
        if self._stop_on_failure and not result.ok:
            self.stopped_early = True
        return self.stopped_early

    def suite(self, started: float) -> EvalSuiteResult:
        """The suite of every result kept; `started` is its `time.perf_counter()` start."""
        return suite_from_results(
            self._results,
            case_names=self._names,
            repeat=self._repeat,
            duration_ms=(time.perf_counter() - started) * 1000,
            stopped_early=self.stopped_early,
        )
