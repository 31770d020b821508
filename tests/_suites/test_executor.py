"""An executor of one's own: any object with an async ``run(plan)`` runs a suite."""

from __future__ import annotations

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, EvalResult, InProcess, run_eval_suite
from adk_eval._suites._jobs import WorkerSetup, run_job
from adk_eval._suites._plan import SuitePlan
from adk_eval._suites._queue import JobQueue, ResultCollector
from adk_eval._suites._results import EvalSuiteResult
from adk_eval._suites._run import Executor
from adk_eval.metrics import state_metric
from adk_eval.models._gateway._gate import Gateway
from adk_eval.testing import ScriptedLlm


class OneAtATime:
    """A user's executor: the jobs of the shared queue, one after the other."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, int]] = []

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        setup = WorkerSetup.of(plan, None)
        gateway = Gateway.alone(plan.model_calls)  # the suite's settings, a pacer of its own
        cases = {case.name: setup.apply(case) for case in plan.cases}
        queue = JobQueue(list(cases), plan.repeat, plan.durations)
        results = ResultCollector(plan, queue)
        while queue:
            job = queue.pop()
            self.ran.append((job.case, job.attempt))
            await results.started_run(job)
            result = await run_job(cases[job.case], job.attempt, plan.seed, gateway)
            if await results.keep(result):
                break
        return results.suite()


def cases() -> list[EvalCase]:
    said_yes = state_metric("x", "session", "x", lambda v: v == 1)
    return [
        EvalCase(
            name="greets", agent=LlmAgent(name="a", model=ScriptedLlm(["hi"])), first_message="hi"
        ),
        EvalCase(
            name="misses",
            agent=LlmAgent(name="a", model=ScriptedLlm(["no"])),
            first_message="hi",
            metrics=[said_yes],
        ),
    ]


async def test_a_class_with_an_async_run_is_an_executor_and_sums_up_as_in_process():
    ours = OneAtATime()
    assert isinstance(ours, Executor)
    seen: list[EvalResult] = []

    mine = await run_eval_suite(cases(), executor=ours, repeat=2, seed=7, on_result=seen.append)
    theirs = await run_eval_suite(cases(), executor=InProcess(), repeat=2, seed=7)

    assert ours.ran[:2] == [("greets", 0), ("misses", 0)]  # first attempts: the suite's order
    # repeats: the case whose first run took longer goes first, so their order is the clock's
    assert sorted(ours.ran[2:]) == [("greets", 1), ("misses", 1)]
    assert len(seen) == 4
    assert mine.summary == theirs.summary, (mine.explain(), theirs.explain())
    assert mine.summary["passed"] == mine.summary["failed"] == 2
    assert [(c.name, c.label) for c in mine.cases] == [(c.name, c.label) for c in theirs.cases]
    assert mine.runs_for_real == theirs.runs_for_real
