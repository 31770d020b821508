"""Where sync user code runs: on the loop for a case alone, in worker threads when runs share it."""

from __future__ import annotations

import threading

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, ToolMock, run_eval, run_eval_suite
from adk_eval._callables import call_user, sharing_the_event_loop
from adk_eval.testing import ScriptedLlm, tool_call


def threads_of_mock_calls(name: str, seen: list[int]) -> EvalCase:
    def work() -> dict:
        """Does some work."""

    def mock(args, ctx):
        seen.append(threading.get_ident())
        return {"ok": True}

    agent = LlmAgent(name=name, model=ScriptedLlm([tool_call("work"), "done"]), tools=[work])
    return EvalCase(name=name, agent=agent, first_message="go", tool_mocks={"work": ToolMock(mock)})


async def test_a_case_alone_calls_sync_code_on_the_loop_thread():
    seen: list[int] = []
    result = await run_eval(threads_of_mock_calls("alone", seen))
    assert result.ok
    assert seen == [threading.get_ident()]


async def test_a_suite_at_concurrency_one_calls_sync_code_on_the_loop_thread():
    seen: list[int] = []
    cases = [threads_of_mock_calls(f"case{i}", seen) for i in range(2)]
    assert (await run_eval_suite(cases, parallel=False)).ok
    assert seen == [threading.get_ident()] * 2


async def test_runs_sharing_the_event_loop_call_sync_code_in_worker_threads():
    seen: list[int] = []
    cases = [threads_of_mock_calls(f"case{i}", seen) for i in range(2)]
    assert (await run_eval_suite(cases, max_concurrency=2)).ok
    assert len(seen) == 2
    assert threading.get_ident() not in seen


async def test_one_case_repeated_shares_the_loop_too():
    seen: list[int] = []
    assert (await run_eval_suite([threads_of_mock_calls("again", seen)], repeat=2)).ok
    assert len(seen) == 2
    assert threading.get_ident() not in seen


async def test_sharing_the_event_loop_is_scoped_and_results_are_awaited():
    async def later() -> str:
        return "awaited"

    def sync_returning_a_coroutine():
        return later(), threading.get_ident()

    with sharing_the_event_loop():
        coroutine, inside = await call_user(sync_returning_a_coroutine)
        assert inside != threading.get_ident()
        assert await coroutine == "awaited"
    coroutine, outside = await call_user(sync_returning_a_coroutine)
    assert outside == threading.get_ident()
    assert await coroutine == "awaited"


async def test_user_code_calling_sys_exit_is_an_error_of_that_code_not_the_end_of_the_process():
    def quitting(args, ctx):
        raise SystemExit(3)

    case = threads_of_mock_calls("quits", [])
    case = EvalCase(
        name="quits", agent=case.agent, first_message="go", tool_mocks={"work": ToolMock(quitting)}
    )
    for run in (run_eval(case), run_eval_suite([case], repeat=2)):
        outcome = await run
        results = outcome.results if hasattr(outcome, "results") else [outcome]
        for result in results:
            assert result.status == "error"
            assert "The mock for tool `work` raised UserCodeExit" in result.error.message
            assert "called sys.exit(3)" in result.error.message
