"""Ray: one suite on a cluster, for suites past one machine.

The runs go out as Ray tasks, each a batch of case references (`Job`s, see
`_case_refs`) that a Ray worker runs with its own event loop, up to
`max_concurrency` at once, and answers as `EvalResult.to_data()`. The driver
merges the answers with the same `ResultCollector` as worker processes, so
progress, repeats, `stop_on_first_failure` and the suite mean the same.

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

import dataclasses
import importlib
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from ._callables import maybe_await
from ._case import EvalCase
from ._case_refs import (
    CaseLoader,
    CaseRef,
    Job,
    JobQueue,
    ResultCollector,
    WorkerSetup,
    case_refs,
    error_result,
    run_job,
    seeded,
)
from ._errors import EvalSetupError
from ._result import EvalResult
from ._suite import EvalSuiteResult, ResultCallback, StartCallback, check_suite

__all__ = ["FORWARDED_ENV_PREFIXES", "run_batch", "run_suite_on_ray"]

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


def _import_ray() -> ModuleType:
    try:
        ray = importlib.import_module("ray")
    except ImportError:
        raise EvalSetupError(
            "--executor ray needs Ray: pip install 'adk-eval[ray]' (and the same on the cluster)"
        ) from None
    return ray


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

        async def run(index: int, job: Job) -> None:
            async with limiter:
                answers[index] = (await run_job(loader, job)).to_data()

        async with anyio.create_task_group() as group:
            for index, (module, name, attempt) in enumerate(jobs):
                group.start_soon(run, index, Job(CaseRef(module, name), attempt))

    anyio.run(run_all)
    return answers


async def run_suite_on_ray(
    cases: Sequence[EvalCase],
    *,
    address: str | None,
    max_concurrency: int,
    stop_on_first_failure: bool = False,
    repeat: int = 1,
    on_start: StartCallback | None = None,
    on_result: ResultCallback | None = None,
    setup: WorkerSetup | None = None,
    durations: Mapping[str, float] | None = None,
    working_dir: Path | None = Path("."),
) -> EvalSuiteResult:
    """`run_eval_suite` on a Ray cluster (see the module doc).

    Args:
        cases: The cases; each must be bound at module level (see `case_refs`).
        address: The cluster (``host:port`` of its head); None starts a local Ray.
        max_concurrency: Runs in flight per task (and most runs per task).
        stop_on_first_failure: Cancel every task at the first run that is not ok.
        repeat: Runs per case.
        on_start: Called with ``(case, attempt)`` as its task is submitted.
        on_result: Called with each finished `EvalResult`.
        setup: The CLI's ``--model`` and ``--timeout``, applied on the workers.
        durations: Seconds per run of earlier runs, by case name: longest first.
        working_dir: Shipped to the workers (None: the modules are already there).

    Raises:
        AdkEvalError: Ray is not installed or the cluster cannot be reached.
        EvalSetupError: For what `run_eval_suite` refuses, or a case no module binds.
    """
    ray = _import_ray()
    check_suite(cases, repeat, max_concurrency)
    queue = JobQueue(case_refs(cases), repeat, durations)
    results = ResultCollector(cases, repeat, queue, on_result, stop_on_first_failure)
    setup = seeded(setup)
    started = time.perf_counter()
    _connect(ray, address, working_dir)
    remote = ray.remote(max_retries=0, num_cpus=1)(run_batch)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = max(1, min(max_concurrency, math.ceil(len(queue) / (cpus * _TASKS_PER_CPU * 2))))
    pending: dict[Any, list[Job]] = {}
    stop = False
    try:
        while not stop:
            while queue and len(pending) < cpus * _TASKS_PER_CPU:
                batch = [queue.pop() for _ in range(min(size, len(queue)))]
                jobs = [(job.ref.module, job.ref.name, job.attempt) for job in batch]
                pending[remote.remote(jobs, setup, max_concurrency)] = batch
                for job in batch:
                    if on_start is not None:
                        await maybe_await(on_start(results.case(job.ref.name), job.attempt))
            if not pending:
                break
            done, _ = await anyio.to_thread.run_sync(
                lambda: ray.wait(list(pending), num_returns=1, timeout=1.0),
                abandon_on_cancel=True,
            )
            for ref in done:
                batch = pending.pop(ref)
                for result in _answers(ray, ref, batch):
                    stop = await results.keep(result) or stop
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        ray.shutdown()
    return dataclasses.replace(results.suite(started), seed=setup.seed)


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
            error_result(job.ref.name, job.attempt, "RayTaskFailed", " ".join(message.split()))
            for job in batch
        ]
