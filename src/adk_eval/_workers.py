"""Worker processes: one suite on every core.

`run_suite_on_workers` starts N processes, spawned and never forked (no ADK,
gRPC or asyncio state is inherited), each with its own event loop. The parent
keeps each worker at most `max_concurrency` runs in flight, feeding it `Job`s
from one `JobQueue` (see `_case_refs`), and gets each result back as data as
soon as it finishes, so progress and callbacks work as in one process.

* A worker that dies (a segfault, an OOM kill, ``os._exit``) turns its in-flight
  runs into ``error`` results naming the exit cause; a new worker takes its
  place and the rest of the suite goes on. After `MAX_WORKER_DEATHS` deaths the
  runs left are errors too, rather than a crash loop.
* Stopping (Ctrl-C, `stop_on_first_failure`, a callback that raises) kills every
  worker at once; runs in flight are not run, and what finished has already
  been passed to `on_result`.
* Workers ignore SIGINT (a terminal sends Ctrl-C to the whole process group):
  the parent decides, and a worker whose parent is gone exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import signal
import time
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection, wait
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
from ._result import EvalResult
from ._suite import EvalSuiteResult, ResultCallback, StartCallback, check_suite

__all__ = ["MAX_WORKER_DEATHS", "WorkerProcess", "run_suite_on_workers"]

MAX_WORKER_DEATHS = 8
"""Worker deaths after which the runs not started are errors instead of new workers."""

_SPAWN = multiprocessing.get_context("spawn")
_POLL_SECONDS = 0.005
"""How long the parent sleeps when no worker has anything to say (a result waits at most this)."""


class WorkerProcess:
    """One spawned worker and the runs it has in flight.

    Attributes:
        started: `time.perf_counter()` when it was spawned.
        ready_after: Seconds from spawn to ready (imports done), once ready.
        in_flight: The runs sent to it and not answered, by (case name, attempt).
    """

    def __init__(self, setup: WorkerSetup) -> None:
        self._conn, child = _SPAWN.Pipe()
        self.process = _SPAWN.Process(
            target=_serve, args=(child, setup), name="adk-eval-worker", daemon=False
        )
        self.started = time.perf_counter()
        self.process.start()
        child.close()
        self.ready_after: float | None = None
        self.in_flight: dict[tuple[str, int], Job] = {}
        self.gone = False

    def send(self, job: Job) -> bool:
        """Starts `job` on this worker; False when the worker is gone (nothing was sent)."""
        try:
            self._conn.send((job.ref.module, job.ref.name, job.attempt))
        except OSError:
            self.gone = True
            return False
        self.in_flight[(job.ref.name, job.attempt)] = job
        return True

    def receive(self) -> list[Any]:
        """The messages waiting; marks the worker gone when its end of the pipe closed."""
        messages = []
        try:
            while self._conn.poll():
                messages.append(self._conn.recv())
        except (EOFError, OSError):
            self.gone = True
        if not self.process.is_alive():
            self.gone = True
        return messages

    def waitables(self) -> list[Any]:
        """What `multiprocessing.connection.wait` watches: the pipe and the process."""
        return [self._conn, self.process.sentinel]

    def exit_cause(self) -> str:
        """How the process ended, in words."""
        self.process.join(1)
        code = self.process.exitcode
        if code is None:
            return "it closed its connection"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def stop(self, kill: bool) -> None:
        """Asks the worker to exit (or kills it) and waits for it."""
        if kill:
            self.process.kill()
        else:
            with contextlib.suppress(OSError):
                self._conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self._conn.close()


async def run_suite_on_workers(
    cases: Sequence[EvalCase],
    *,
    workers: int,
    max_concurrency: int,
    stop_on_first_failure: bool = False,
    repeat: int = 1,
    on_start: StartCallback | None = None,
    on_result: ResultCallback | None = None,
    setup: WorkerSetup | None = None,
    durations: Mapping[str, float] | None = None,
) -> EvalSuiteResult:
    """`run_eval_suite` on `workers` spawned processes (see the module doc).

    Args:
        cases: The cases; each must be bound at module level (see `case_refs`).
        workers: How many processes.
        max_concurrency: Runs in flight per worker.
        stop_on_first_failure: Stop every worker at the first run that is not ok.
        repeat: Runs per case.
        on_start: Called with ``(case, attempt)`` as a run is sent to a worker.
        on_result: Called with each finished `EvalResult`.
        setup: The CLI's ``--model`` and ``--timeout``, applied in every worker.
        durations: Seconds per run of earlier runs, by case name: longest first.

    Raises:
        EvalSetupError: For what `run_eval_suite` refuses, or a case no module binds.
    """
    check_suite(cases, repeat, max_concurrency)
    queue = JobQueue(case_refs(cases), repeat, durations)
    results = ResultCollector(cases, repeat, queue, on_result, stop_on_first_failure)
    setup = seeded(setup)
    started = time.perf_counter()
    pool = [WorkerProcess(setup) for _ in range(min(workers, len(queue)))]
    deaths = 0
    cause = ""
    stop = False
    try:
        while not stop:
            for worker in sorted(pool, key=lambda w: len(w.in_flight)):
                while worker.ready_after is not None and len(worker.in_flight) < max_concurrency:
                    if not queue or worker.gone:
                        break
                    job = queue.pop()
                    if not worker.send(job):
                        queue.put_back(job)
                        break
                    if on_start is not None:
                        await maybe_await(on_start(results.case(job.ref.name), job.attempt))
            if not queue and not any(worker.in_flight for worker in pool):
                break
            if not pool:  # every worker died and none may replace them
                message = f"not run: worker processes died {deaths} times (the last: {cause})"
                for job in queue.clear():
                    await results.keep(
                        error_result(job.ref.name, job.attempt, "WorkerDied", message)
                    )
                break
            waitables = [item for worker in pool for item in worker.waitables()]
            if not wait(waitables, 0):  # nothing yet: a plain sleep is a clean cancellation point
                await anyio.sleep(_POLL_SECONDS)
                continue
            for worker in list(pool):
                for message in worker.receive():
                    if message[0] == "ready":
                        worker.ready_after = time.perf_counter() - worker.started
                    else:
                        result = EvalResult.from_data(message[1])
                        worker.in_flight.pop((result.name, result.attempt), None)
                        stop = await results.keep(result) or stop
                if not worker.gone:
                    continue
                pool.remove(worker)
                deaths += 1
                cause = worker.exit_cause()
                message = (
                    f"the worker process running this case died ({cause}); "
                    "the rest of the suite went on"
                )
                for job in worker.in_flight.values():
                    result = error_result(job.ref.name, job.attempt, "WorkerDied", message)
                    stop = await results.keep(result) or stop
                worker.in_flight.clear()
                if queue and deaths < MAX_WORKER_DEATHS:
                    pool.append(WorkerProcess(setup))
    finally:
        clean = not stop and not any(worker.in_flight for worker in pool)
        for worker in pool:
            worker.stop(kill=not clean)
    return dataclasses.replace(results.suite(started), seed=setup.seed)


def _serve(conn: Connection, setup: WorkerSetup) -> None:
    """A worker's main: announces itself ready, then runs what the parent sends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    loader = CaseLoader(setup)
    conn.send(("ready",))
    anyio.run(_serve_jobs, conn, loader)


def _receive(conn: Connection) -> Any:
    try:
        return conn.recv()
    except (EOFError, OSError):  # the parent is gone
        return None


async def _serve_jobs(conn: Connection, loader: CaseLoader) -> None:
    async def run(job: Job) -> None:
        result = await run_job(loader, job)
        conn.send(("result", result.to_data()))

    async with anyio.create_task_group() as group:
        while True:
            message = await anyio.to_thread.run_sync(_receive, conn)
            if message is None:
                group.cancel_scope.cancel()
                return
            module, name, attempt = message
            group.start_soon(run, Job(CaseRef(module, name), attempt))
