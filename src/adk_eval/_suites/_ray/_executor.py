"""`Ray`: one suite on a Ray cluster, for suites past one machine.

The runs go out as Ray tasks, each a batch of case references (see `_jobs`)
that a Ray worker runs with its own event loop, up to `max_concurrency` at once,
and answers as `EvalResult.to_data()`. The driver takes jobs from the same
`JobQueue` and keeps results in the same `ResultCollector` as the other
executors, so progress, repeats, `stop_on_first_failure` and the suite mean the
same.

What the cluster needs: adk-eval and every installed package your agents import,
installed where its workers run. Your project's own code goes with the run: by
default Ray's ``runtime_env`` ships, as ``py_modules``, the project's top-level
packages and modules the suite loaded (never ``.env`` files, keys, databases,
``.git`` or virtual environments; see `_shipping`, and `Ray.shipping` for the
preview); ``working_dir=`` ships one folder instead, and ``ship_modules=False``
nothing (the modules are already importable on every node). Environment
variables do not travel with Ray tasks: those named ``ADK_EVAL_*``, ``LITELLM_*``
and the model providers' (``GOOGLE_*``, ``GEMINI_*``, ``OPENAI_*``,
``ANTHROPIC_*``, ``VERTEXAI_*``) are forwarded in the runtime environment, except
a name holding ``PASSWORD``, ``SECRET`` or ``TOKEN``; set anything else on the
cluster.

The suite's model calls, in every task, are paced by one `Pacer` that a Ray
actor holds for the suite (`models._pacing._ray`), so that together they stay
within each provider's quota; the tasks take the suite's `ModelCalls` in their
`WorkerSetup`.

A task that fails (its worker process dies, or Ray loses it) turns its runs into
``error`` results naming Ray's reason; tasks are never retried, so a crash is
reported rather than repeated. Stopping (Ctrl-C, `stop_on_first_failure`)
cancels every task not finished, killing its worker.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import anyio

from ..._case import EvalCase
from ..._errors import EvalSetupError
from ..._result import EvalResult
from ...models._gateway._gate import Gateway
from ...models._pacing._ray import ACTOR_OPTIONS, PacerActor, RayPacerClient
from .._jobs import CaseLoader, CaseRef, Job, WorkerSetup, case_refs, error_result
from .._plan import SuitePlan
from .._queue import JobQueue, ResultCollector
from .._results import EvalSuiteResult
from ._shipping import FORWARDED_ENV_PREFIXES, ShippingPlan, plan_shipping

__all__ = ["FORWARDED_ENV_PREFIXES", "Ray", "run_batch"]

_TASKS_PER_CPU = 2
"""Tasks kept in flight per cluster CPU (the rest wait in the driver, in queue order)."""

_loaders: dict[WorkerSetup, CaseLoader] = {}
"""The case loader of each suite set-up in this Ray worker process (it imports each module once)."""


@dataclass(frozen=True)
class Ray:
    """Runs a suite on a Ray cluster (``pip install 'adk-eval[ray]'``; see the module doc).

    Example:
        ``await run_eval_suite(CASES, executor=Ray(address="head:6379"))``

    Attributes:
        address: The cluster's head (``host:port``); None starts a local Ray.
        working_dir: A folder to ship as Ray's ``working_dir`` instead of the
            project's modules (None, the default: ship the modules the suite loaded).
        default_model: The model of every `LlmAgent` that names none, on the
            workers (``adk-eval run --model``).
        ship_modules: False when the eval modules are already importable on
            every node (a shared filesystem): nothing is shipped.
        excludes: More ``.gitignore``-style patterns left out of what is shipped.
    """

    address: str | None = None
    working_dir: Path | None = None
    default_model: str | None = None
    ship_modules: bool = True
    excludes: tuple[str, ...] = ()
    applies_faults: ClassVar[bool] = True
    """Its tasks give each case the plan's faults (`SuitePlan.faults`)."""

    def __post_init__(self) -> None:
        excludes: Any = self.excludes  # what a caller passed, whatever the annotation says
        if isinstance(excludes, str):
            raise EvalSetupError("Ray(excludes=...) takes a list of patterns, not one string")
        object.__setattr__(self, "excludes", tuple(excludes))

    def shipping(self, cases: Sequence[EvalCase]) -> list[str]:
        """What a run of `cases` ships to the cluster, as lines for the user.

        It is computed as the run computes it (the same plan), without starting Ray
        or touching the network: the code shipped with its files' count and size, the
        largest file, what is left out and why, the env vars forwarded and held back.
        """
        try:
            modules = [ref.module for ref in case_refs(cases)]
        except EvalSetupError:  # the run refuses such cases; the preview shows the rest
            modules = []
        return self._plan(modules).lines(self.address)

    def _plan(self, case_modules: Sequence[str]) -> ShippingPlan:
        return plan_shipping(
            case_modules,
            working_dir=self.working_dir,
            ship_modules=self.ship_modules,
            excludes=self.excludes,
        )

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs `plan`: batches of runs as Ray tasks, `max_concurrency` runs per task.

        Raises:
            EvalSetupError: Ray is not installed, the cluster cannot be reached, a
                case no module binds, or what would be shipped is over Ray's limit.
        """
        refs = {ref.name: ref for ref in case_refs(plan.cases)}
        modules = list(dict.fromkeys(ref.module for ref in refs.values()))
        shipping = await anyio.to_thread.run_sync(self._plan, modules)
        shipping.check_size()
        ray = _import_ray()
        queue = JobQueue(
            list(refs), plan.repeat, plan.durations, by_attempt=plan.adaptive is not None
        )
        results = ResultCollector(plan, queue)
        setup = WorkerSetup.of(plan, self.default_model)
        _connect(ray, self.address, shipping.runtime_env())
        remote = ray.remote(max_retries=0, num_cpus=1)(run_batch)
        pacing = _Pacing(ray)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = max(
            1, min(plan.max_concurrency, math.ceil(len(queue) / (cpus * _TASKS_PER_CPU * 2)))
        )
        pending: dict[Any, list[Job]] = {}
        stop = False
        try:
            while not stop:
                while queue and len(pending) < cpus * _TASKS_PER_CPU:
                    batch = [queue.pop() for _ in range(min(size, len(queue)))]
                    jobs = [(refs[job.case].module, job.case, job.attempt) for job in batch]
                    pending[pacing.submit(remote, jobs, setup, plan.max_concurrency)] = batch
                    for job in batch:
                        await results.started_run(job)
                if not pending:
                    break
                done, _ = await anyio.to_thread.run_sync(
                    lambda: ray.wait(list(pending), num_returns=1, timeout=1.0),
                    abandon_on_cancel=True,
                )
                for ref in done:
                    answers, failed = _answers(ray, ref, pending.pop(ref))
                    pacing.finished(ref, failed)
                    for result in answers:
                        stop = await results.keep(result) or stop
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            pacing.close()
            ray.shutdown()
        return results.suite()


class _Pacing:
    """The suite's `PacerActor`, as every task gets it.

    Each task is an owner of its own on the actor: when one fails, what it held is
    given back.
    """

    def __init__(self, ray: ModuleType) -> None:
        self.ray = ray
        self.actor = ray.remote(PacerActor).options(**ACTOR_OPTIONS).remote()
        self.owners: dict[Any, str] = {}
        self._count = itertools.count(1)

    def submit(self, remote: Any, jobs: list[Any], setup: WorkerSetup, concurrency: int) -> Any:
        """Starts the task of `jobs`; its object ref."""
        owner = f"task-{next(self._count)}"
        task = remote.remote(jobs, setup, concurrency, (self.actor, owner))
        self.owners[task] = owner
        return task

    def finished(self, task: Any, failed: bool) -> None:
        """`task` is over; when it `failed`, the actor forgets what it held."""
        owner = self.owners.pop(task, None)
        if failed and owner is not None:
            with contextlib.suppress(Exception):  # the actor is gone: nothing to give back
                self.actor.drop.remote(owner)

    def close(self) -> None:
        """Stops the actor."""
        with contextlib.suppress(Exception):  # gone with the cluster already
            self.ray.kill(self.actor)


def run_batch(
    jobs: Sequence[tuple[str, str, int]],
    setup: WorkerSetup,
    concurrency: int,
    pacer: tuple[Any, str] | None = None,
) -> list[dict[str, Any]]:
    """What one Ray task runs: `jobs` (module, case name, attempt), `concurrency` at a time.

    A Ray worker process runs many tasks; it imports each eval module once. Its
    model calls follow the suite's `ModelCalls` (in `setup`) and are paced by the
    suite's `PacerActor` (`pacer`: its handle and this task's owner name on it).
    """
    loader = _loaders.get(setup)
    if loader is None:
        loader = _loaders[setup] = CaseLoader(setup)
    gateway = None if pacer is None else Gateway(setup.model_calls, RayPacerClient(*pacer))
    answers: list[dict[str, Any]] = [{} for _ in jobs]

    async def run_all() -> None:
        limiter = anyio.CapacityLimiter(concurrency)

        async def run(index: int, ref: CaseRef, attempt: int) -> None:
            async with limiter:
                answers[index] = (await loader.run(ref, attempt, gateway)).to_data()

        async with anyio.create_task_group() as group:
            for index, (module, name, attempt) in enumerate(jobs):
                group.start_soon(run, index, CaseRef(module, name), attempt)

    anyio.run(run_all)
    return answers


def _import_ray() -> ModuleType:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise EvalSetupError(
            "the Ray executor needs Ray: pip install 'adk-eval[ray]' (and the same on the cluster)"
        ) from None


def _connect(ray: ModuleType, address: str | None, runtime_env: dict[str, Any]) -> None:
    try:
        ray.init(
            address=address,
            runtime_env=runtime_env,
            log_to_driver=False,
            logging_level=logging.WARNING,
            include_dashboard=False if address is None else None,
            ignore_reinit_error=True,
        )
    except (ConnectionError, ValueError, RuntimeError) as error:
        raise EvalSetupError(
            f"cannot connect to the Ray cluster at {address or 'a new local Ray'}: {error}"
        ) from None


def _answers(ray: ModuleType, ref: Any, batch: list[Job]) -> tuple[list[EvalResult], bool]:
    """The results of the task `ref`, and whether it failed (its runs are then errors)."""
    try:
        return [EvalResult.from_data(data) for data in ray.get(ref)], False
    except ray.exceptions.RayError as error:
        cause = getattr(error, "cause", None) or error
        message = f"the Ray task running this case failed: {type(cause).__name__}: {cause}"
        failed = [
            error_result(job.case, job.attempt, "RayTaskFailed", " ".join(message.split()))
            for job in batch
        ]
        return failed, True
