"""The job queue and the result collector: the bookkeeping every executor shares.

`JobQueue` decides what runs next: first attempts in the order given (longest
first when durations from an earlier run are known), then the repeats of the
cases that took longest, so long cases do not start last and stretch the tail.

`ResultCollector` keeps what finished (each run's trace written to a spool
file, read back when asked for, so a suite of many runs stays small in
memory): it calls `on_result`, says when
`stop_on_first_failure` must stop the suite, and builds the `EvalSuiteResult`
with `suite_from_results`, the same way for runs in this process, in worker
processes and on Ray.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import deque
from collections.abc import Mapping, Sequence

from .._callables import maybe_await
from .._case import EvalCase
from .._result import EvalResult
from .._statistics import settled
from .._termination import Termination
from .._trace._spool import TraceSpool
from ._jobs import Job
from ._plan import SuitePlan
from ._repeats import blame_real_tools
from ._results import EvalSuiteResult, suite_from_results

__all__ = ["JobQueue", "ResultCollector"]


class JobQueue:
    """The runs not yet started, in the order they should start.

    First attempts go first, in the order given or, with `durations` (seconds per
    run from an earlier run), longest first with unknown cases before known ones.
    Repeats follow, the case with the longest known run first; a case whose first
    run is still going counts as the longest (it is at least that long).

    With `by_attempt` (adaptive repeats), repeats go by attempt instead: the second
    run of every case, then the third, so each case's verdict builds up from its
    finished runs and a settled case has few runs in flight to waste.

    Args:
        names: The case names, in the suite's order.
        repeat: Runs per case.
        durations: Seconds per run of an earlier run, by case name.
        by_attempt: Repeats in attempt order (see above).
    """

    def __init__(
        self,
        names: Sequence[str],
        repeat: int,
        durations: Mapping[str, float] | None = None,
        *,
        by_attempt: bool = False,
    ) -> None:
        known = dict(durations or {})
        order = sorted(range(len(names)), key=lambda i: -known.get(names[i], math.inf))
        self._first: deque[Job] = deque(Job(names[i], 0) for i in order)
        self._repeats: dict[int, deque[Job]] = {
            index: deque(Job(name, attempt) for attempt in range(1, repeat))
            for index, name in enumerate(names)
            if repeat > 1
        }
        self._index = {name: index for index, name in enumerate(names)}
        self._observed: dict[str, list[float]] = {}
        self._prior = known
        self._by_attempt = by_attempt

    def __len__(self) -> int:
        return len(self._first) + sum(len(jobs) for jobs in self._repeats.values())

    def pop(self) -> Job:
        """The next run to start.

        Raises:
            IndexError: When nothing is left.
        """
        if self._first:
            return self._first.popleft()
        if not self._repeats:
            raise IndexError("no runs left")
        if self._by_attempt:
            index = min(self._repeats, key=lambda i: (self._repeats[i][0].attempt, i))
        else:
            index = min(self._repeats, key=lambda i: (-self._expected(i), i))
        jobs = self._repeats[index]
        job = jobs.popleft()
        if not jobs:
            del self._repeats[index]
        return job

    def put_back(self, job: Job) -> None:
        """Returns a run that could not start; it starts next."""
        if job.attempt == 0:
            self._first.appendleft(job)
        else:
            self._repeats.setdefault(self._index[job.case], deque()).appendleft(job)

    def finished(self, result: EvalResult) -> None:
        """Learns how long a run of `result.name` takes."""
        self._observed.setdefault(result.name, []).append(result.duration_ms / 1000)

    def drop(self, case: str) -> int:
        """Removes the runs of `case` not started; returns how many there were."""
        dropped = len(self._repeats.pop(self._index[case], ()))
        kept = deque(job for job in self._first if job.case != case)
        dropped += len(self._first) - len(kept)
        self._first = kept
        return dropped

    def clear(self) -> list[Job]:
        """Removes and returns every run not started."""
        left = list(self._first) + [job for jobs in self._repeats.values() for job in jobs]
        self._first.clear()
        self._repeats.clear()
        return left

    def _expected(self, index: int) -> float:
        name = next(iter(self._repeats[index])).case
        observed = self._observed.get(name)
        if observed:
            return sum(observed) / len(observed)
        return self._prior.get(name, math.inf)


class ResultCollector:
    """Keeps the results of a suite's runs and builds the suite from them.

    Args:
        plan: The suite.
        queue: Its runs not started (told how long each finished run took).
    """

    def __init__(self, plan: SuitePlan, queue: JobQueue) -> None:
        self._plan = plan
        self._cases = {case.name: case for case in plan.cases}
        self._queue = queue
        self._results: list[EvalResult] = []
        self._attempts = {case.name: plan.repeat for case in plan.cases}
        self._tally: dict[str, list[int]] = {}  # adaptive: [passes, runs] of each case
        self._spent = [0.0, 0.0]  # tokens and US dollars of the runs kept
        self.budget_reached: Termination | None = None
        """The suite's budget limit that stopped it, if one did."""
        self.stopped_early = False
        """Whether `stop_on_first_failure` stopped the suite."""
        self.started = time.perf_counter()
        """When the suite started (`time.perf_counter()`)."""
        self._spool = TraceSpool()

    def case(self, name: str) -> EvalCase:
        """The suite's case named `name`."""
        return self._cases[name]

    async def started_run(self, job: Job) -> None:
        """Reports that `job` starts (`on_start`)."""
        if self._plan.on_start is not None:
            await maybe_await(self._plan.on_start(self._cases[job.case], job.attempt))

    async def keep(self, result: EvalResult) -> bool:
        """Keeps `result` and reports it (`on_result`); True when the suite must stop now."""
        if result.status == "error" and result.description is None:
            case = self._cases[result.name]
            result = dataclasses.replace(result, description=case.description, xfail=case.xfail)
        self._queue.finished(result)
        self._results.append(result.spooled(self._spool))  # its trace on disk, not in memory
        self._adapt(result)
        if self._plan.on_result is not None:
            await maybe_await(self._plan.on_result(result))
        if self._plan.stop_on_first_failure and not result.ok:
            self.stopped_early = True
        self._spend(result)
        return self.stopped_early

    def _spend(self, result: EvalResult) -> None:
        """Adds what `result` spent; the suite stops once its budget is spent."""
        budget = self._plan.budget
        if budget is None:
            return
        self._spent[0] += sum(item.total_tokens for item in result.usage)
        self._spent[1] += sum(item.cost_usd or 0.0 for item in result.usage)
        reached = budget.exceeded(int(self._spent[0]), self._spent[1])
        if reached is not None and self.budget_reached is None:
            self.budget_reached = Termination(*reached)
            self.stopped_early = True

    def _adapt(self, result: EvalResult) -> None:
        """Adaptive repeats: once a case's verdict is settled, its other runs never start."""
        adaptive = self._plan.adaptive
        if adaptive is None:
            return
        tally = self._tally.setdefault(result.name, [0, 0])
        tally[0] += result.passed
        tally[1] += 1
        if settled(tally[0], tally[1], adaptive.threshold, adaptive.confidence):
            self._attempts[result.name] -= self._queue.drop(result.name)

    def suite(self) -> EvalSuiteResult:
        """The suite of every result kept, timed from `started`."""
        suite = suite_from_results(
            blame_real_tools(self._results),
            case_names=[case.name for case in self._plan.cases],
            repeat=self._plan.repeat,
            duration_ms=(time.perf_counter() - self.started) * 1000,
            stopped_early=self.stopped_early,
            seed=self._plan.seed,
            attempts=self._attempts if self._plan.adaptive else None,
        )
        return dataclasses.replace(
            suite, adaptive=self._plan.adaptive, budget_reached=self.budget_reached
        )
