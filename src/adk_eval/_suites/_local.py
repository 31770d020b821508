"""`InProcess`: a suite in this process, on its event loop (the default executor).

`max_concurrency` lanes take jobs from one `JobQueue` until it is empty, so at
most that many runs are in flight; each run gets its own runner, services and
sessions (see `run_eval`), so runs share nothing but the agent objects. With more
than one run in flight, sync user code (mocks, script steps, metrics) runs in
worker threads, so one blocking mock does not stall the others.

``stop_on_first_failure`` cancels what is still running at the first run that
is not ok. Cancelling the suite (Ctrl-C in the CLI) cancels every run; no task
outlives the call, and `on_result` has already seen every run that finished. A
callback that raises stops the suite, and its exception is raised as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from .._callables import sharing_the_event_loop
from ._jobs import WorkerSetup, run_job
from ._plan import SuitePlan
from ._queue import JobQueue, ResultCollector
from ._results import EvalSuiteResult

__all__ = ["InProcess"]


@dataclass(frozen=True)
class InProcess:
    """Runs a suite in this process, on its event loop: the default executor.

    ``run_eval_suite(cases, max_concurrency=8)`` keeps at most 8 runs in flight.
    """

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs `plan` (see the module doc)."""
        setup = WorkerSetup.of(plan, None)
        cases = {case.name: setup.apply(case) for case in plan.cases}
        queue = JobQueue(
            list(cases), plan.repeat, plan.durations, by_attempt=plan.adaptive is not None
        )
        results = ResultCollector(plan, queue)
        raised: list[Exception] = []

        async with anyio.create_task_group() as group:

            async def lane() -> None:
                while queue:
                    job = queue.pop()
                    try:
                        await results.started_run(job)
                        result = await run_job(cases[job.case], job.attempt, plan.seed)
                        stop = await results.keep(result)
                    except Exception as error:  # a callback raised: stop, and raise it as is
                        raised.append(error)
                        stop = True
                    if stop:
                        group.cancel_scope.cancel()
                        return

            # More than one run at a time on this event loop: sync user code goes to worker
            # threads (each task keeps the context it starts with).
            with sharing_the_event_loop(plan.max_concurrency > 1 and plan.total > 1):
                for _ in range(min(plan.max_concurrency, len(queue))):
                    group.start_soon(lane)

        if raised:
            raise raised[0]
        return results.suite()
