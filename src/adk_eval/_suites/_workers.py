"""`Workers`: one suite on several worker processes of this machine.

It starts N processes, spawned and never forked (no ADK, gRPC or asyncio state
is inherited), each with its own event loop. The parent keeps each worker at most
`max_concurrency` runs in flight, feeding it jobs from one `JobQueue`, and gets
each result back as data as soon as it finishes, so progress and callbacks work
as in one process. Each worker imports the cases it runs by reference (see
`_jobs`), so every case must be bound at module level.

* A worker that dies (a segfault, an OOM kill, ``os._exit``) turns its in-flight
  runs into ``error`` results naming the exit cause; a new worker takes its
  place and the rest of the suite goes on. After `MAX_WORKER_DEATHS` deaths the
  runs left are errors too, rather than a crash loop.
* Stopping (Ctrl-C, `stop_on_first_failure`, a callback that raises) kills every
  worker at once; runs in flight are not run, and what finished has already
  been passed to `on_result`.
* Workers ignore SIGINT and SIGTERM (a terminal's Ctrl-C and a CI's stop reach
  the whole process group): the parent decides, and a worker whose parent is gone
  exits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import anyio

from .._errors import EvalSetupError
from ._jobs import CaseRef, WorkerSetup, case_refs, error_result
from ._plan import SuitePlan, available_cores
from ._process import WorkerProcess
from ._queue import JobQueue, ResultCollector
from ._results import EvalSuiteResult

__all__ = ["MAX_WORKER_DEATHS", "Workers"]

MAX_WORKER_DEATHS = 8
"""Worker deaths after which the runs not started are errors instead of new workers."""

_POLL_SECONDS = 0.005
"""How long the parent sleeps when no worker has anything to say (a result waits at most this)."""


@dataclass(frozen=True)
class Workers:
    """Runs a suite on worker processes of this machine, ``max_concurrency`` runs each.

    Example:
        ``await run_eval_suite(CASES, executor=Workers(2))``

    Attributes:
        count: How many processes (at most one per run), or ``"auto"``: one per
            core this process may use.
        default_model: The model of every `LlmAgent` that names none, in the
            workers (``adk-eval run --model``). In one process, set it with
            ``LlmAgent.set_default_model``; workers import the cases afresh.
    """

    count: int | Literal["auto"] = "auto"
    default_model: str | None = None

    def __post_init__(self) -> None:
        if self.count != "auto" and (not isinstance(self.count, int) or self.count < 1):
            raise EvalSetupError(f"Workers(count) must be >= 1 or 'auto', got {self.count!r}")

    @property
    def processes(self) -> int:
        """The number of processes `count` asks for."""
        return available_cores() if self.count == "auto" else int(self.count)

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs `plan` (see the module doc).

        Raises:
            EvalSetupError: A case no module binds.
        """
        refs = {ref.name: ref for ref in case_refs(plan.cases)}
        modules = tuple(dict.fromkeys(ref.module for ref in refs.values()))
        setup = dataclasses.replace(WorkerSetup.of(plan, self.default_model), preload=modules)
        pool = _Pool(plan, refs, setup, min(self.processes, plan.total))
        return await pool.run()


class _Pool:
    """The worker processes of one suite, fed from its queue until it is done."""

    def __init__(
        self, plan: SuitePlan, refs: dict[str, CaseRef], setup: WorkerSetup, size: int
    ) -> None:
        self.plan = plan
        self.refs = refs
        self.setup = setup
        self.queue = JobQueue([case.name for case in plan.cases], plan.repeat, plan.durations)
        self.results = ResultCollector(plan, self.queue)
        self.workers = [WorkerProcess(setup) for _ in range(size)]
        self.deaths = 0
        self.last_cause = ""
        self.stop = False

    async def run(self) -> EvalSuiteResult:
        try:
            while not self.stop:
                await self._feed()
                if not self.queue and not any(w.in_flight for w in self.workers):
                    break
                if not self.workers:  # every worker died and none may replace them
                    await self._give_up()
                    break
                if not WorkerProcess.any_ready(self.workers):
                    await anyio.sleep(_POLL_SECONDS)  # a plain sleep: a clean cancellation point
                    continue
                for worker in list(self.workers):
                    await self._hear(worker)
        finally:
            clean = not self.stop and not any(w.in_flight for w in self.workers)
            for worker in self.workers:
                worker.stop(kill=not clean)
        return self.results.suite()

    async def _feed(self) -> None:
        """Sends jobs to every ready worker until each has `max_concurrency` in flight."""
        for worker in sorted(self.workers, key=lambda w: len(w.in_flight)):
            while (
                worker.ready_after is not None and len(worker.in_flight) < self.plan.max_concurrency
            ):
                if not self.queue or worker.gone:
                    break
                job = self.queue.pop()
                if not worker.send(self.refs[job.case], job):
                    self.queue.put_back(job)
                    break
                await self.results.started_run(job)

    async def _hear(self, worker: WorkerProcess) -> None:
        """Takes what `worker` says; replaces it if it died."""
        for result in worker.receive():
            self.stop = await self.results.keep(result) or self.stop
        if not worker.gone:
            return
        self.workers.remove(worker)
        self.deaths += 1
        self.last_cause = worker.exit_cause()
        message = (
            f"the worker process running this case died ({self.last_cause}); "
            "the rest of the suite went on"
        )
        for job in worker.in_flight.values():
            result = error_result(job.case, job.attempt, "WorkerDied", message)
            self.stop = await self.results.keep(result) or self.stop
        worker.in_flight.clear()
        if self.queue and self.deaths < MAX_WORKER_DEATHS:
            self.workers.append(WorkerProcess(self.setup))

    async def _give_up(self) -> None:
        """Every run not started is an error: too many workers died."""
        message = (
            f"not run: worker processes died {self.deaths} times (the last: {self.last_cause})"
        )
        for job in self.queue.clear():
            await self.results.keep(error_result(job.case, job.attempt, "WorkerDied", message))
