"""`Lanes`: a suite's runs taken from its queue and run on this event loop.

`InProcess` runs a whole suite on them; the `Workers` pool runs on them while its
worker processes start. Each lane takes the next job, reports that it starts
(`on_start`), runs it and keeps its result (`on_result`), until the queue is
empty, the suite stops, or `keep_going` says no (the pool: its workers are ready).

A result that stops the suite (`stop_on_first_failure`, a spent budget) or a
callback that raises stops it: the lane cancels its task group, and the
callback's exception is kept for the executor to raise as it is, once the group
has ended.
"""

from __future__ import annotations

from collections.abc import Callable

from anyio import CancelScope
from anyio.abc import TaskGroup

from .._callables import sharing_the_event_loop
from .._result import EvalResult
from ..models._gateway._gate import Gateway
from ._jobs import WorkerSetup, run_job
from ._plan import SuitePlan
from ._queue import JobQueue, ResultCollector

__all__ = ["Lanes"]


def _always() -> bool:
    return True


class Lanes:
    """The runs of one suite in this process: its queue, its collector and its lanes.

    Args:
        plan: The suite.
        setup: What every case gets before it runs (`WorkerSetup.apply`).
        gateway: Where the runs' model calls go (the suite's settings, the
            executor's pacer).
        keep_going: Asked before each job is taken; False ends the lane (the
            queue then belongs to whatever else feeds from it).
    """

    def __init__(
        self,
        plan: SuitePlan,
        setup: WorkerSetup,
        gateway: Gateway,
        keep_going: Callable[[], bool] = _always,
    ) -> None:
        self.plan = plan
        self.gateway = gateway
        self.cases = {case.name: setup.apply(case) for case in plan.cases}
        self.queue = JobQueue(
            list(self.cases), plan.repeat, plan.durations, by_attempt=plan.adaptive is not None
        )
        self.results = ResultCollector(plan, self.queue)
        self.keep_going = keep_going
        self.stop = False
        """Whether the suite must stop (set by `keep`, for the lanes and whoever else keeps)."""
        self.raised: list[Exception] = []
        """What callbacks raised in the lanes, in order."""
        self.running = 0
        """Runs in flight in the lanes."""
        self.finished = 0
        """Runs the lanes finished."""

    def start(self, group: TaskGroup, *, share_loop: bool = True) -> None:
        """Starts ``max_concurrency`` lanes in `group` (fewer when fewer runs are queued).

        Args:
            group: Where the lanes run; the first lane that stops the suite cancels it.
            share_loop: Sync user code goes to worker threads, so one blocking
                mock does not stall the other runs on this event loop.
        """
        # Each task keeps the context it starts with, so the lanes share the loop from here.
        with sharing_the_event_loop(share_loop):
            for _ in range(min(self.plan.max_concurrency, len(self.queue))):
                group.start_soon(self._lane, group.cancel_scope)

    async def keep(self, result: EvalResult) -> None:
        """Keeps `result` in the collector (`on_result`); it may stop the suite."""
        self.stop = await self.results.keep(result) or self.stop

    def raise_first(self) -> None:
        """Raises the first exception a callback raised in a lane, as it is (if one did)."""
        if self.raised:
            raise self.raised[0]

    async def _lane(self, scope: CancelScope) -> None:
        """Runs jobs until the queue is empty, the suite stops or `keep_going` says no."""
        while self.queue and not self.stop and self.keep_going():
            job = self.queue.pop()
            self.running += 1
            try:
                await self.results.started_run(job)
                case = self.cases[job.case]
                result = await run_job(case, job.attempt, self.plan.seed, self.gateway)
                self.finished += 1
                await self.keep(result)
            except Exception as error:  # a callback raised: stop, and raise it as is
                self.raised.append(error)
                self.stop = True
            finally:
                self.running -= 1
            if self.stop:
                scope.cancel()
                return
