"""The pool behind `Workers`: worker processes, and this one while they start, on one queue.

Worker processes start in the background: forked ahead ones are there at once,
others arrive from starter threads (a fork server may still be importing). While
they start, this process runs cases itself (``max_concurrency`` lanes, as
`InProcess` does; ``run_while_starting``); once every worker is ready, it takes
no new run and only feeds them. It keeps each ready worker at most
``max_concurrency`` runs in flight, from the same `JobQueue`, and gets each result
back as data as soon as it finishes, so progress and callbacks work as in one
process.

* A worker that dies (a segfault, an OOM kill, ``os._exit``) turns its in-flight
  runs into ``error`` results naming the exit cause; a new worker takes its
  place and the rest of the suite goes on. After `MAX_WORKER_DEATHS` deaths the
  runs left are errors too, rather than a crash loop.
* Stopping (Ctrl-C, `stop_on_first_failure`, a callback that raises) cancels the
  runs here and kills every worker at once; what finished has already been
  passed to `on_result`.
* Workers ignore SIGINT and SIGTERM (a terminal's Ctrl-C and a CI's stop reach
  the whole process group): the parent decides, and a worker whose parent is
  gone exits.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque

import anyio
from anyio.abc import TaskGroup

from ...models._gateway._gate import Gateway
from .._jobs import CaseRef, WorkerSetup, error_result
from .._lanes import Lanes
from .._plan import SuitePlan
from .._results import EvalSuiteResult
from ._process import WorkerProcess

__all__ = ["AUTO_MIN_SECONDS", "AUTO_PROBE_SECONDS", "MAX_WORKER_DEATHS", "Pool", "WarmWorkers"]

MAX_WORKER_DEATHS = 8
"""Worker deaths after which the runs not started are errors instead of new workers."""

AUTO_PROBE_SECONDS = 1.0
"""How long ``Workers("auto")`` runs cases in this process before it estimates the rest."""

AUTO_MIN_SECONDS = 3.0
"""The runs left (in seconds of this process) from which ``Workers("auto")`` starts workers."""


class WarmWorkers:
    """Worker processes forked ahead of a suite (`Workers.prefork`), handed out once each."""

    def __init__(self, count: int) -> None:
        self._lock = threading.Lock()
        self._idle = [WorkerProcess(method="fork") for _ in range(count)]

    @property
    def count(self) -> int:
        """How many are not handed out yet."""
        return len(self._idle)

    def take(self) -> WorkerProcess | None:
        """One forked worker not handed out yet, or None."""
        with self._lock:
            return self._idle.pop() if self._idle else None

    def close(self) -> None:
        """Stops the workers nobody took."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop(kill=False)

    def __del__(self) -> None:
        for worker in getattr(self, "_idle", []):
            worker.process.kill()


_POLL_SECONDS = 0.005
"""How long the parent sleeps when no worker has anything to say (a result waits at most this)."""


class Pool:
    """The processes of one suite, fed from its queue until it is done.

    Args:
        plan: The suite.
        refs: Each case's reference, by name.
        setup: What every worker applies (its case modules to import first).
        gateway: Where this process's runs' model calls go (the pacer it serves
            its workers).
        workers: How many worker processes to start.
        interim: Whether this process runs cases until the workers are ready.
        auto: Start the workers only if the suite is long enough (``Workers("auto")``);
            this process runs the suite until then, and all of it if they would not pay.
        warm: Workers forked ahead, taken before any other is started.
    """

    def __init__(
        self,
        plan: SuitePlan,
        refs: dict[str, CaseRef],
        setup: WorkerSetup,
        gateway: Gateway,
        *,
        workers: int,
        interim: bool,
        auto: bool,
        warm: WarmWorkers | None,
    ) -> None:
        self.plan = plan
        self.refs = refs
        self.setup = setup
        self.size = workers
        self.interim = interim or auto
        self.auto = auto
        self.warm = warm
        self.here = Lanes(plan, setup, gateway, keep_going=lambda: not self._hand_over())
        """This process's lanes; their `keep` and `stop` serve the workers' results too."""
        self.queue = self.here.queue
        self.results = self.here.results
        self.workers: list[WorkerProcess] = []
        self.arrivals: deque[WorkerProcess] = deque()
        self.lock = threading.Lock()
        self.closing = False
        self.starting = 0
        self.deaths = 0
        self.last_cause = ""
        self.placement = ""
        self.forked = 0
        self.handed_over = False
        self.group: TaskGroup

    async def run(self) -> EvalSuiteResult:
        """Runs the suite; returns it with its `placement` said."""
        try:
            async with anyio.create_task_group() as group:
                self.group = group
                if self.interim and not (self._all_warm() and not self.auto):
                    self.here.start(group)
                group.start_soon(self._drive_workers)
        finally:
            self._close()
        self.here.raise_first()
        suite = self.results.suite()
        return dataclasses.replace(suite, placement=self.placement or self._placement())

    async def _drive_workers(self) -> None:
        """Starts the workers (for ``auto``, once they pay), feeds them and hears them."""
        if self.size < 1 or (self.auto and not await self._worth_starting()):
            self.size = 0  # this process runs every run
            if self.warm is not None:
                self.warm.close()
            return
        self._start(self.size)
        while not self.here.stop:
            self._welcome()
            await self._feed()
            busy = any(worker.in_flight for worker in self.workers)
            if not self.queue and not busy:
                break
            nobody = not self.workers and not self.starting and not self.arrivals
            if nobody and (self.handed_over or not self.interim):
                await self._give_up()  # every worker died or failed to start
                break
            if not self.workers or not WorkerProcess.any_ready(self.workers):
                await anyio.sleep(_POLL_SECONDS)  # a plain sleep: a clean cancellation point
                continue
            for worker in list(self.workers):
                await self._hear(worker)
        if self.here.stop:
            self.group.cancel_scope.cancel()

    def _all_warm(self) -> bool:
        """Whether every worker is forked ahead (ready at once: no run is worth starting here)."""
        return self.warm is not None and self.warm.count >= self.size

    def _hand_over(self) -> bool:
        """Whether this process stops taking runs: every worker it started is ready."""
        if not self.handed_over and self.size and len(self.workers) >= self.size:
            self.handed_over = all(w.ready_after is not None or w.gone for w in self.workers)
        return self.handed_over

    async def _worth_starting(self) -> bool:
        """``auto``: runs here for a while, then says whether workers would pay off."""
        began = time.perf_counter()
        elapsed = 0.0
        while self.queue:
            elapsed = time.perf_counter() - began
            if elapsed >= AUTO_PROBE_SECONDS and self.here.finished:
                estimate = (len(self.queue) + self.here.running) * elapsed / self.here.finished
                if estimate >= AUTO_MIN_SECONDS:
                    self.placement = (
                        f"auto: {self.size} worker process(es): about {estimate:.0f} s of runs "
                        f"were left after {elapsed:.1f} s in this process"
                    )
                    return True
                self.placement = (
                    f"auto: this process only: the runs left after {elapsed:.1f} s would take "
                    f"about {estimate:.1f} s here, under the {AUTO_MIN_SECONDS:.0f} s from which "
                    "a worker process pays off"
                )
                return False
            if elapsed >= 5 * AUTO_PROBE_SECONDS:  # no run finished yet: they are long
                self.placement = (
                    f"auto: {self.size} worker process(es): no run had finished after "
                    f"{elapsed:.1f} s in this process"
                )
                return True
            await anyio.sleep(0.02)
        self.placement = (
            f"auto: this process only: every run had started here after {elapsed:.1f} s, "
            "too few runs for a worker process to pay off"
        )
        return False

    def _start(self, count: int) -> None:
        """Starts `count` workers: forked ahead ones at once, others from starter threads."""
        for _ in range(count):
            worker = self.warm.take() if self.warm is not None else None
            if worker is not None:
                self.forked += 1
                self.arrivals.append(worker)
                continue
            with self.lock:
                self.starting += 1
            threading.Thread(
                target=self._start_one, name="adk-eval-worker-start", daemon=True
            ).start()

    def _start_one(self) -> None:
        """A starter thread: starts one worker (blocks while a fork server imports)."""
        worker: WorkerProcess | None = None
        try:
            worker = WorkerProcess()
        except Exception as error:  # no process could start: said when the suite gives up
            self.last_cause = f"it could not start: {type(error).__name__}: {error}"
        finally:
            with self.lock:
                self.starting -= 1
                if worker is not None and not self.closing:
                    self.arrivals.append(worker)
                    worker = None
        if worker is not None:  # the suite ended while it started
            worker.stop(kill=True)

    def _welcome(self) -> None:
        """Takes the workers that arrived: each gets the suite's set-up."""
        with self.lock:
            arrived = list(self.arrivals)
            self.arrivals.clear()
        for worker in arrived:
            worker.configure(self.setup)
            self.workers.append(worker)

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
            await self.here.keep(result)
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
            await self.here.keep(result)
        worker.in_flight.clear()
        if self.deaths >= MAX_WORKER_DEATHS:
            await self._give_up()
        elif self.queue:
            self._start(1)

    async def _give_up(self) -> None:
        """Every run not started is an error: too many workers died."""
        message = (
            f"not run: worker processes died {self.deaths} times (the last: {self.last_cause})"
            if self.deaths
            else f"not run: no worker process started ({self.last_cause})"
        )
        for job in self.queue.clear():
            result = error_result(job.case, job.attempt, "WorkerDied", message)
            await self.here.keep(result)

    def _close(self) -> None:
        """Stops every worker: asks them to exit when all went well, else kills them."""
        with self.lock:
            self.closing = True
            arrived = list(self.arrivals)
            self.arrivals.clear()
        clean = not self.here.stop and not any(w.in_flight for w in self.workers)
        for worker in [*self.workers, *arrived]:  # one still importing is not waited for
            worker.stop(kill=not clean or worker.ready_after is None)
        if self.warm is not None:
            self.warm.close()

    def _placement(self) -> str:
        """How the runs were spread, in words."""
        started = len(self.workers) + self.deaths
        if not started:
            return "this process only" if self.here.finished else "no worker process started"
        how = f", {self.forked} forked ahead" if self.forked else ""
        here = (
            f"; this process ran {self.here.finished} run(s) while they started"
            if self.here.finished
            else ""
        )
        return f"{started} worker process(es){how}{here}"
