"""`Ray`: one suite on a Ray cluster, for suites past one machine.

The runs go out as Ray tasks, each a batch of case references (see `_jobs`)
that a Ray worker runs with its own event loop, up to `max_concurrency` at once,
and answers as `EvalResult.to_data()`. The driver takes jobs from the same
`JobQueue` and keeps results in the same `ResultCollector` as the other
executors, so progress, repeats, `stop_on_first_failure` and the suite mean the
same.

What the cluster needs: adk-eval (and your agents' packages) installed where its
workers run, and your eval modules importable there: by default the current
directory is shipped with Ray's ``runtime_env`` ``working_dir`` (Ray's size
limits and ignore rules apply); with ``working_dir=None`` the modules must
already be importable on every node (a shared filesystem on ``PYTHONPATH``).
Environment variables do not travel with Ray tasks: those named ``ADK_EVAL_*``,
``LITELLM_*`` and the model providers' keys (``GOOGLE_*``, ``GEMINI_*``,
``OPENAI_*``, ``ANTHROPIC_*``, ``VERTEXAI_*``) are forwarded in the runtime
environment; set anything else on the cluster.

A task that fails (its worker process dies, or Ray loses it) turns its runs into
``error`` results naming Ray's reason; tasks are never retried, so a crash is
reported rather than repeated. Stopping (Ctrl-C, `stop_on_first_failure`)
cancels every task not finished, killing its worker.
"""

from __future__ import annotations

import importlib
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from .._errors import EvalSetupError
from .._result import EvalResult
from ._jobs import CaseLoader, CaseRef, Job, WorkerSetup, case_refs, error_result
from ._plan import SuitePlan
from ._queue import JobQueue, ResultCollector
from ._results import EvalSuiteResult

__all__ = ["FORWARDED_ENV_PREFIXES", "Ray", "run_batch"]

FORWARDED_ENV_PREFIXES = (
    "ADK_EVAL_",
    "LITELLM_",
    "GOOGLE_",
    "GEMINI_",
    "OPENAI_",
    "ANTHROPIC_",
    "VERTEXAI_",
)
"""Environment variables with these prefixes reach the Ray workers."""

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
        working_dir: The folder shipped to the workers (default: the current
            directory); None when the eval modules are already importable there.
        default_model: The model of every `LlmAgent` that names none, on the
            workers (``adk-eval run --model``).
    """

    address: str | None = None
    working_dir: Path | None = Path(".")
    default_model: str | None = None

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs `plan`: batches of runs as Ray tasks, `max_concurrency` runs per task.

        Raises:
            EvalSetupError: Ray is not installed, the cluster cannot be reached, or a
                case no module binds.
        """
        ray = _import_ray()
        refs = {ref.name: ref for ref in case_refs(plan.cases)}
        queue = JobQueue(list(refs), plan.repeat, plan.durations)
        results = ResultCollector(plan, queue)
        setup = WorkerSetup(
            default_model=self.default_model, max_duration=plan.max_duration, seed=plan.seed
        )
        _connect(ray, self.address, self.working_dir)
        remote = ray.remote(max_retries=0, num_cpus=1)(run_batch)
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
                    pending[remote.remote(jobs, setup, plan.max_concurrency)] = batch
                    for job in batch:
                        await results.started_run(job)
                if not pending:
                    break
                done, _ = await anyio.to_thread.run_sync(
                    lambda: ray.wait(list(pending), num_returns=1, timeout=1.0),
                    abandon_on_cancel=True,
                )
                for ref in done:
                    for result in _answers(ray, ref, pending.pop(ref)):
                        stop = await results.keep(result) or stop
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            ray.shutdown()
        return results.suite()


def run_batch(
    jobs: Sequence[tuple[str, str, int]], setup: WorkerSetup, concurrency: int
) -> list[dict[str, Any]]:
    """What one Ray task runs: `jobs` (module, case name, attempt), `concurrency` at a time.

    A Ray worker process runs many tasks; it imports each eval module once.
    """
    loader = _loaders.get(setup)
    if loader is None:
        loader = _loaders[setup] = CaseLoader(setup)
    answers: list[dict[str, Any]] = [{} for _ in jobs]

    async def run_all() -> None:
        limiter = anyio.CapacityLimiter(concurrency)

        async def run(index: int, ref: CaseRef, attempt: int) -> None:
            async with limiter:
                answers[index] = (await loader.run(ref, attempt)).to_data()

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


def _connect(ray: ModuleType, address: str | None, working_dir: Path | None) -> None:
    env = {
        name: value for name, value in os.environ.items() if name.startswith(FORWARDED_ENV_PREFIXES)
    }
    runtime_env: dict[str, Any] = {"env_vars": env}
    if working_dir is not None:
        runtime_env["working_dir"] = str(working_dir.resolve())
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


def _answers(ray: ModuleType, ref: Any, batch: list[Job]) -> list[EvalResult]:
    try:
        return [EvalResult.from_data(data) for data in ray.get(ref)]
    except ray.exceptions.RayError as error:
        cause = getattr(error, "cause", None) or error
        message = f"the Ray task running this case failed: {type(cause).__name__}: {cause}"
        return [
            error_result(job.case, job.attempt, "RayTaskFailed", " ".join(message.split()))
            for job in batch
        ]
