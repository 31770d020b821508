"""Jobs: one run of one case, as every executor runs it, and the references that carry it.

A `Job` is a case's name and an attempt. `run_job` runs one the way a suite
counts it: the run's seed is derived from the suite's, its case and its attempt
(`run_seed`), its model calls go through the executor's `Gateway` (the suite's
`ModelCalls`, and the pacer the suite's runs share in that process), and a
set-up mistake or a crash of the harness is an ``error`` result rather than an
exception, so one bad case never stops a suite.

Cases hold live agent objects and do not pickle, so a case never crosses a
process. What crosses (to a worker process or a Ray task) is a `CaseRef`: the
module that binds the case at module level, and its name. The process that runs
it imports the module itself (`CaseLoader`), picks the case by name and runs it;
the result goes back as `EvalResult.to_data()`.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .._callables import sharing_the_event_loop
from .._case import EvalCase
from .._errors import EvalSetupError
from .._result import EvalErrorInfo, EvalResult
from .._run.loop import run_case
from .._sandbox._scope import SandboxMode, TelemetryMode
from .._seeds import derive_seed
from ..models._gateway._gate import Gateway
from ..models._gateway._settings import ModelCalls
from ..models._pacing._pacer import Pacer
from ..models._roles._roles import resolve_model
from ._discovery import cases_in
from ._faulted import with_default_faults
from ._plan import SuitePlan

__all__ = [
    "CaseLoader",
    "CaseRef",
    "Job",
    "WorkerSetup",
    "case_refs",
    "error_result",
    "run_job",
    "run_seed",
    "with_max_duration",
]


@dataclass(frozen=True)
class Job:
    """One run of a case: the case's name (unique in its suite) and the attempt (0-based)."""

    case: str
    attempt: int


@dataclass(frozen=True)
class CaseRef:
    """Where a process finds a case: `module` binds it at module level, named `name`."""

    module: str
    name: str


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker process (or Ray task) applies to every case it loads, as the parent would.

    Attributes:
        default_model: The model of every `LlmAgent` without its own (``--model``).
        max_duration: Caps each run's wall time (``--timeout``).
        seed: The suite's seed: each run derives its own from it.
        sandbox: Every case's sandbox mode (``--sandbox``; None: each case's own).
        telemetry: Every case's telemetry mode (``--telemetry``; None: each case's own).
        faults: Seeded faults at this rate on every mocked tool without its own
            (``--faults``; None: none added).
        model_calls: The suite's `ModelCalls`.
        preload: The case modules a worker imports before it says it is ready.
        environ: The parent's environment when the suite started, which a worker
            takes before it imports anything (a worker forked from the fork server
            would otherwise have the environment of when that server started), with
            the address of the pacer the parent serves its workers (`PACER_ENV`).
    """

    default_model: str | None = None
    max_duration: float | None = None
    seed: int | None = None
    sandbox: SandboxMode | None = None
    telemetry: TelemetryMode | None = None
    faults: float | None = None
    model_calls: ModelCalls = field(default_factory=ModelCalls)
    preload: tuple[str, ...] = ()
    environ: Mapping[str, str] | None = None

    @classmethod
    def of(cls, plan: SuitePlan, default_model: str | None) -> WorkerSetup:
        """The set-up of `plan`'s runs, with the executor's `default_model`."""
        return cls(
            default_model=default_model,
            max_duration=plan.max_duration,
            seed=plan.seed,
            sandbox=plan.sandbox,
            telemetry=plan.telemetry,
            faults=plan.faults,
            model_calls=plan.model_calls,
        )

    def apply(self, case: EvalCase) -> EvalCase:
        """`case` as the suite runs it: its wall time capped, the suite's modes and faults set."""
        case = with_default_faults(with_max_duration(case, self.max_duration), self.faults)
        if self.sandbox not in (None, case.sandbox):
            case = dataclasses.replace(case, sandbox=self.sandbox)
        if self.telemetry not in (None, case.telemetry):
            case = dataclasses.replace(case, telemetry=self.telemetry)
        return case


def run_seed(suite_seed: int, case: str, attempt: int) -> int:
    """The seed of one run of a suite: its own for every case and attempt."""
    return derive_seed(suite_seed, case, attempt)


def with_max_duration(case: EvalCase, max_duration: float | None) -> EvalCase:
    """`case` with its wall time capped at `max_duration` seconds (unchanged without one)."""
    limit = case.terminate_when.max_duration
    if max_duration is None or (limit is not None and limit <= max_duration):
        return case
    limits = dataclasses.replace(case.terminate_when, max_duration=max_duration)
    return dataclasses.replace(case, terminate_when=limits)


def error_result(name: str, attempt: int, type_: str, message: str) -> EvalResult:
    """An ``error`` run (phase ``system``) for a run its process could not finish."""
    return EvalResult(
        name=name,
        status="error",
        error=EvalErrorInfo(phase="system", type=type_, message=message),
        attempt=attempt,
    )


async def run_job(
    case: EvalCase, attempt: int, suite_seed: int | None, gateway: Gateway
) -> EvalResult:
    """Runs attempt `attempt` of `case` as a suite counts it (see the module doc).

    With `suite_seed`, the run's seed is derived from it (`run_seed`).
    """
    seed = run_seed(suite_seed, case.name, attempt) if suite_seed is not None else None
    try:
        result = await run_case(case, seed=seed, attempt=attempt, gateway=gateway)
    except EvalSetupError as error:
        result = EvalResult(
            name=case.name,
            status="error",
            error=EvalErrorInfo.from_exception("setup", error),
            description=case.description,
            xfail=case.xfail,
            seed=seed,
        )
    except Exception as error:  # a crash of the harness itself: this run is an error
        result = error_result(case.name, attempt, type(error).__name__, str(error))
    return dataclasses.replace(result, attempt=attempt)


def case_refs(cases: Sequence[EvalCase]) -> list[CaseRef]:
    """The reference of each case: a loaded module that binds it at module level.

    Raises:
        EvalSetupError: Naming the cases no module binds (built in a function or
            changed with ``dataclasses.replace``): another process cannot find them.
    """
    wanted = {id(case) for case in cases}
    owners: dict[int, str] = {}
    for module_name, module in list(sys.modules.items()):
        if module_name == "__mp_main__" or module is None:
            continue
        try:
            bound = cases_in(module)
        except TypeError:  # a module object without a namespace
            continue
        for _, case in bound:
            if id(case) in wanted:
                owners.setdefault(id(case), module_name)
    missing = [case.name for case in cases if id(case) not in owners]
    if missing:
        raise EvalSetupError(
            "worker processes import the cases they run, so each case must be a module-level "
            "name (or in a module-level list) of an importable module; not found: "
            + ", ".join(f"`{name}`" for name in missing[:5])
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        )
    return [CaseRef(module=owners[id(case)], name=case.name) for case in cases]


class CaseLoader:
    """A worker's side: imports the modules of case references, once each, and runs their jobs.

    Args:
        setup: What it applies to every case, the suite's seed and `ModelCalls`.
        pacer: Where its runs' model calls wait (None: the pacer the parent process
            handed this one, else one of its own).
    """

    def __init__(self, setup: WorkerSetup, pacer: Pacer | None = None) -> None:
        self.setup = setup
        """What it applies to every case, and the suite's seed."""
        if pacer is None:
            from ..models._pacing._shared import handed_pacer  # its wire: only when handed one

            pacer = handed_pacer()
        self.gateway = Gateway(setup.model_calls, pacer)
        """Where its runs' model calls go (the suite's settings, this process's pacer)."""
        self._modules: dict[str, dict[str, EvalCase] | str] = {}
        if setup.default_model:
            from google.adk.agents import LlmAgent

            LlmAgent.set_default_model(resolve_model(setup.default_model))

    def load(self, ref: CaseRef) -> EvalCase | EvalResult:
        """The case `ref` names, or (as an ``error`` result of attempt 0) why it is missing."""
        cases = self.preload(ref.module)
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
        return self.setup.apply(case)

    async def run(self, ref: CaseRef, attempt: int, gateway: Gateway | None = None) -> EvalResult:
        """Runs attempt `attempt` of the case `ref` names (`run_job`), or says why it cannot.

        `gateway`: the run's model calls go there (None: the loader's own).
        """
        case = self.load(ref)
        if isinstance(case, EvalResult):
            return dataclasses.replace(case, attempt=attempt)
        with sharing_the_event_loop():  # a worker or a Ray task runs many jobs on its loop
            return await run_job(case, attempt, self.setup.seed, gateway or self.gateway)

    def preload(self, module: str) -> dict[str, EvalCase] | str:
        """The cases `module` binds, by name, importing it the first time (or why it cannot)."""
        cases = self._modules.get(module)
        if cases is None:
            cases = self._modules[module] = self._import(module)
        return cases

    @staticmethod
    def _import(name: str) -> dict[str, EvalCase] | str:
        try:
            module = importlib.import_module(name)
        except (Exception, SystemExit) as error:
            return f"a worker process cannot import `{name}`: {type(error).__name__}: {error}"
        return {case.name: case for _, case in cases_in(module)}


def _setup_error(name: str, type_: str, message: str) -> EvalResult:
    return EvalResult(
        name=name,
        status="error",
        error=EvalErrorInfo(phase="setup", type=type_, message=message),
    )
