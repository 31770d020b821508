"""`InProcess`: a suite in this process, on its event loop (the default executor).

`max_concurrency` lanes (`Lanes`) take jobs from one `JobQueue` until it is empty, so at
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

from dataclasses import dataclass, field
from typing import ClassVar

import anyio

from ..models._gateway._gate import Gateway
from ..models._pacing._pacer import LocalPacer
from ._jobs import WorkerSetup
from ._lanes import Lanes
from ._plan import SuitePlan
from ._results import EvalSuiteResult

__all__ = ["InProcess"]


@dataclass(frozen=True)
class InProcess:
    """Runs a suite in this process, on its event loop: the default executor.

    ``run_eval_suite(cases, max_concurrency=8)`` keeps at most 8 runs in flight.
    """

    pacer: LocalPacer = field(default_factory=LocalPacer, init=False, repr=False, compare=False)
    """Where the model calls of the suites it runs wait for their turn."""
    applies_faults: ClassVar[bool] = True
    """It gives each case the plan's faults (`SuitePlan.faults`)."""

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs `plan` (see the module doc)."""
        lanes = Lanes(plan, WorkerSetup.of(plan, None), Gateway(plan.model_calls, self.pacer))
        async with anyio.create_task_group() as group:
            # One run at a time needs no threads for sync user code.
            lanes.start(group, share_loop=plan.max_concurrency > 1 and plan.total > 1)
        lanes.raise_first()
        return lanes.results.suite()
