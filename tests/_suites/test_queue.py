"""The job queue: the order runs start in."""

from __future__ import annotations

from google.adk.agents import LlmAgent

from adk_eval import EvalCase
from adk_eval._result import EvalResult
from adk_eval._suites._queue import JobQueue
from adk_eval.testing import ScriptedLlm

CASE = EvalCase(
    name="bound", agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])), first_message="hi"
)


def refs(*names: str) -> list[str]:
    return list(names)


def order(queue: JobQueue) -> list[tuple[str, int]]:
    jobs = []
    while queue:
        job = queue.pop()
        jobs.append((job.case, job.attempt))
    return jobs


def test_first_attempts_go_first_in_the_order_given():
    assert order(JobQueue(refs("a", "b"), repeat=2)) == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]


def test_known_durations_start_the_longest_first_and_unknown_cases_before_them():
    queue = JobQueue(refs("short", "long", "new"), repeat=1, durations={"short": 1, "long": 9})
    assert order(queue) == [("new", 0), ("long", 0), ("short", 0)]


def test_repeats_start_with_the_case_that_took_longest():
    queue = JobQueue(refs("a", "b", "c"), repeat=3)
    assert [queue.pop().case for _ in range(3)] == ["a", "b", "c"]
    queue.finished(EvalResult(name="a", status="passed", duration_ms=100))
    queue.finished(EvalResult(name="b", status="passed", duration_ms=5000))
    # c's first run has not finished: it is at least as long as anything seen, so it goes first
    assert [(job.case, job.attempt) for job in (queue.pop(), queue.pop())] == [
        ("c", 1),
        ("c", 2),
    ]
    assert order(queue) == [("b", 1), ("b", 2), ("a", 1), ("a", 2)]
    assert not queue.clear()


def test_a_run_put_back_starts_next():
    queue = JobQueue(refs("a", "b"), repeat=2)
    first = queue.pop()
    queue.put_back(first)
    assert queue.pop() == first
    order(queue)  # drain
    queue = JobQueue(refs("a"), repeat=2)
    queue.pop()
    repeat = queue.pop()
    queue.put_back(repeat)
    assert order(queue) == [("a", 1)]
