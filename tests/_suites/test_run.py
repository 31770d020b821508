"""run_eval_suite: concurrency, isolation, repeats, early stop, cancellation, xfail."""

from __future__ import annotations

import asyncio
import itertools

import anyio
import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

from adk_eval import (
    Adaptive,
    EvalCase,
    EvalSetupError,
    InProcess,
    TerminateWhen,
    ToolMock,
    Workers,
    run_eval_suite,
)
from adk_eval._statistics import wilson
from adk_eval.metrics import state_metric
from adk_eval.models import ModelCalls
from adk_eval.testing import ScriptedLlm, tool_call


def simple_case(name: str, model: ScriptedLlm, **kwargs) -> EvalCase:
    return EvalCase(name=name, agent=LlmAgent(name="a", model=model), first_message="hi", **kwargs)


@pytest.mark.slow
async def test_a_slow_case_does_not_serialise_the_others():
    fast_done = anyio.Event()

    async def slow(request):
        with anyio.fail_after(3):  # completes only if the fast case runs meanwhile
            await fast_done.wait()
        return "slow done"

    def fast(request):
        fast_done.set()
        return "fast done"

    def cases():
        return [
            simple_case("slow", ScriptedLlm(responder=slow)),
            simple_case("fast", ScriptedLlm(responder=fast)),
        ]

    parallel = await run_eval_suite(cases(), max_concurrency=2)
    assert parallel.ok, parallel.explain()

    fast_done = anyio.Event()
    # the slow model's TimeoutError, not retried (a real provider's timeout is: 3 times)
    serial = await run_eval_suite(cases(), parallel=False, model_calls=ModelCalls(server_retries=0))
    assert [r.status for r in serial.results] == ["error", "passed"]
    assert "TimeoutError" in serial.results[0].error.message


async def test_fifty_concurrent_cases_sharing_one_agent_are_isolated():
    def bump(tool_context: ToolContext) -> dict:
        """Counts in user state (safe)."""
        count = tool_context.state.get("user:count", 0) + 1
        tool_context.state["user:count"] = count
        return {"count": count}

    agent = LlmAgent(
        name="counter",
        model=ScriptedLlm([tool_call("bump"), tool_call("bump"), "done"]),
        tools=[bump],
    )
    cases = [
        EvalCase(
            name=f"case-{i}",
            agent=agent,
            first_message="go",
            tool_mocks={"bump": bump},
            initial_state={"user": {"count": i * 10}},
            metrics=[state_metric("count", "user", "count", lambda v, i=i: v == i * 10 + 2)],
        )
        for i in range(50)
    ]

    suite = await run_eval_suite(cases, max_concurrency=50)

    assert suite.ok, suite.explain()
    assert suite.summary["passed"] == 50
    assert [r.final_state["user"]["count"] for r in suite.results] == [
        i * 10 + 2 for i in range(50)
    ]


async def test_repeat_reports_pass_hat_k_pass_at_k_and_stability():
    attempts = itertools.count()

    def escalate(tool_context: ToolContext) -> dict:
        """Escalates (safe: state only)."""
        tool_context.state["escalated"] = True
        return {}

    def flaky_model(request):
        # the first model call of each run decides; every other run escalates
        if not any(c.role == "model" for c in request.contents):
            return tool_call("escalate") if next(attempts) % 2 == 0 else "no need"
        return "ok"

    escalated = state_metric("escalated", "session", "escalated", lambda v: v is True)

    def case(name, model):
        return EvalCase(
            name=name,
            agent=LlmAgent(name="a", model=model, tools=[escalate]),
            first_message="hi",
            tool_mocks={"escalate": escalate},
            metrics=[escalated],
        )

    suite = await run_eval_suite(
        [
            case("always", ScriptedLlm([tool_call("escalate"), "ok"])),
            case("never", ScriptedLlm(["no need"])),
            case("flaky", ScriptedLlm(responder=flaky_model)),
        ],
        repeat=4,
    )

    stats = {s.name: s for s in suite.cases}
    assert (stats["always"].pass_hat_k, stats["always"].pass_at_k, stats["always"].label) == (
        True,
        True,
        "stable-pass",
    )
    assert (stats["never"].pass_hat_k, stats["never"].pass_at_k, stats["never"].label) == (
        False,
        False,
        "stable-fail",
    )
    assert (stats["flaky"].pass_hat_k, stats["flaky"].pass_at_k, stats["flaky"].label) == (
        False,
        True,
        "flaky",
    )
    assert stats["flaky"].pass_rate == 0.5
    assert suite.summary == {
        "total": 12,
        "passed": 6,
        "failed": 6,
        "errors": 0,
        "terminated": 0,
        "xfailed": 0,
        "xpassed": 0,
        "not_run": 0,
    }
    assert sorted(r.attempt for r in suite.results if r.name == "flaky") == [0, 1, 2, 3]
    assert suite.pass_rate == 0.5
    assert not suite.ok
    # every rate with its 95 % Wilson interval
    assert stats["flaky"].pass_rate_interval == wilson(2, 4)
    assert stats["always"].pass_rate_interval.low == pytest.approx(0.5101, abs=1e-4)  # 4 of 4
    flaky_k = stats["flaky"].pass_hat_k_estimate  # the chance 4 fresh runs all pass
    assert flaky_k.estimate == 0.0  # C(2, 4) / C(4, 4): no 4 runs of these all passed
    assert (flaky_k.low, flaky_k.high) == (wilson(2, 4).low ** 4, wilson(2, 4).high ** 4)
    assert stats["flaky"].pass_at_k_estimate.estimate == 1.0
    assert suite.pass_rate_interval == wilson(6, 12)
    assert suite.pass_hat_k_interval == wilson(1, 3)  # `always` of the three cases
    assert suite.pass_at_k_interval == wilson(2, 3)


async def test_stop_on_first_failure_cancels_the_rest_and_says_what_did_not_run():
    hung_cancelled = []

    async def hang(request):
        try:
            await anyio.sleep_forever()
        finally:
            hung_cancelled.append(True)

    failing = EvalCase(
        name="fails",
        agent=LlmAgent(name="a", model=ScriptedLlm(["no"])),
        first_message="hi",
        metrics=[state_metric("x", "session", "x", lambda v: v == 1)],
    )
    before = set(asyncio.all_tasks())
    suite = await run_eval_suite(
        [
            simple_case("slow-1", ScriptedLlm(responder=hang)),
            failing,
            simple_case("slow-2", ScriptedLlm(responder=hang)),
            simple_case("queued", ScriptedLlm(["fine"])),
        ],
        max_concurrency=3,
        stop_on_first_failure=True,
    )

    assert suite.stopped_early
    assert [r.name for r in suite.results] == ["fails"]
    assert suite.not_run == ["slow-1", "slow-2", "queued"]
    assert suite.summary["not_run"] == 3
    assert len(hung_cancelled) == 2
    assert not suite.ok
    await asyncio.sleep(0)
    assert {t for t in asyncio.all_tasks() if t not in before} - {asyncio.current_task()} == set()


async def test_cancelling_a_suite_leaves_no_tasks_and_reports_what_finished():
    seen: list[str] = []
    first_done = anyio.Event()

    async def hang(request):
        await anyio.sleep_forever()

    def record(result):
        seen.append(result.name)
        first_done.set()

    before = set(asyncio.all_tasks())
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: run_eval_suite(
                [
                    simple_case("quick", ScriptedLlm(["done"])),
                    simple_case("stuck-1", ScriptedLlm(responder=hang)),
                    simple_case("stuck-2", ScriptedLlm(responder=hang)),
                ],
                on_result=record,
            )
        )
        await first_done.wait()
        group.cancel_scope.cancel()  # what Ctrl-C does to the CLI's suite

    assert seen == ["quick"]
    await asyncio.sleep(0)
    assert {t for t in asyncio.all_tasks() if t not in before} - {asyncio.current_task()} == set()


async def test_a_misconfigured_case_is_a_setup_error_and_the_others_run():
    bad = EvalCase(
        name="bad-mock",
        agent=LlmAgent(name="a", model=ScriptedLlm(["x"])),
        first_message="hi",
        tool_mocks={"nope": ToolMock.returning({})},
    )
    suite = await run_eval_suite([bad, simple_case("good", ScriptedLlm(["ok"]))])

    bad_result, good_result = suite.results
    assert bad_result.status == "error"
    assert bad_result.error.phase == "setup"
    assert "no tool by that name" in bad_result.error.message
    assert good_result.passed


async def test_duplicate_names_and_bad_settings_are_refused():
    one = simple_case("same", ScriptedLlm(["x"]))
    two = simple_case("same", ScriptedLlm(["x"]))
    with pytest.raises(EvalSetupError, match="repeated: `same`"):
        await run_eval_suite([one, two])
    with pytest.raises(EvalSetupError, match="repeat must be >= 1"):
        await run_eval_suite([one], repeat=0)
    with pytest.raises(EvalSetupError, match="max_concurrency must be >= 1"):
        await run_eval_suite([one], max_concurrency=0)
    with pytest.raises(
        EvalSetupError, match=r"got the one case `same`; write run_eval_suite\(\[case\]\)"
    ):
        await run_eval_suite(one)  # type: ignore[arg-type]


async def test_xfail_cases_count_as_expected_and_strictly():
    metric = state_metric("x", "session", "x", lambda v: v == 1)
    fails = simple_case("known-gap", ScriptedLlm(["no"]), metrics=[metric], xfail="gap #12")
    suite = await run_eval_suite([fails])
    assert suite.results[0].status == "failed"
    assert suite.results[0].outcome == "xfailed"
    assert suite.summary["xfailed"] == 1
    assert suite.ok
    assert "expected not to pass (xfail): gap #12" in suite.results[0].explain()

    passes = simple_case("fixed-gap", ScriptedLlm(["yes"]), xfail="gap #13")
    suite = await run_eval_suite([passes])
    assert suite.results[0].outcome == "xpassed"
    assert not suite.ok


async def test_a_callback_that_raises_stops_the_suite_with_its_own_error():
    def explode(result):
        raise RuntimeError("progress display broke")

    with pytest.raises(RuntimeError, match="progress display broke"):
        await run_eval_suite([simple_case("one", ScriptedLlm(["x"]))], on_result=explode)


async def test_the_old_passed_name_still_answers_but_warns():
    suite = await run_eval_suite([simple_case("one", ScriptedLlm(["hi"]))])
    with pytest.warns(DeprecationWarning, match="use EvalSuiteResult.ok"):
        assert suite.passed is suite.ok is True


async def test_a_blocking_sync_mock_does_not_stall_the_other_cases():
    import threading

    from google.adk.agents import LlmAgent

    from adk_eval import EvalCase, ToolMock
    from adk_eval.testing import tool_call

    waiting, released = threading.Event(), threading.Event()
    outcome: dict[str, bool] = {}

    def blocking(args, ctx):  # blocks its thread until the other case's mock runs
        waiting.set()
        outcome["released"] = released.wait(10)
        return {"ok": True}

    def releasing(args, ctx):
        outcome["saw_waiting"] = waiting.wait(10)
        released.set()
        return {"ok": True}

    def case(name: str, mock) -> EvalCase:
        def work() -> dict:
            """Does some work."""

        agent = LlmAgent(name=name, model=ScriptedLlm([tool_call("work"), "done"]), tools=[work])
        return EvalCase(
            name=name, agent=agent, first_message="go", tool_mocks={"work": ToolMock(mock)}
        )

    suite = await run_eval_suite([case("blocker", blocking), case("releaser", releasing)])
    assert suite.ok
    assert outcome == {"released": True, "saw_waiting": True}  # they ran side by side


async def test_options_are_keywords_and_an_unknown_one_is_one_line_naming_the_right_one():
    cases = [simple_case("one", ScriptedLlm(["hi"]))]
    with pytest.raises(TypeError):
        await run_eval_suite(cases, False)  # type: ignore[misc]
    with pytest.raises(EvalSetupError, match=r"no option `repeats` \(did you mean `repeat`\?\)$"):
        await run_eval_suite(cases, repeats=2)  # type: ignore[call-arg]
    with pytest.raises(EvalSetupError, match=r"no option `workers`: pass executor=Workers\(n\)"):
        await run_eval_suite(cases, workers=2)  # type: ignore[call-arg]
    with pytest.raises(EvalSetupError, match=r"no option `cache`: pass model_calls=ModelCalls"):
        await run_eval_suite(cases, cache="all")  # type: ignore[call-arg]


async def test_an_executor_needs_a_run_method_and_workers_count_from_one():
    cases = [simple_case("one", ScriptedLlm(["hi"]))]
    with pytest.raises(
        EvalSetupError,
        match=r"executor must be InProcess\(\), Workers\(n\), Ray\(\.\.\.\) or an object "
        r"with an async `run\(plan\)` method, got 'ray'",
    ):
        await run_eval_suite(cases, executor="ray")  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match=r"got the class `InProcess`: pass `InProcess\(\)`"):
        await run_eval_suite(cases, executor=InProcess)  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match=r"Workers\(count\) must be >= 1 or 'auto'"):
        Workers(0)
    assert Workers("auto").processes >= 1
    suite = await run_eval_suite(cases, executor=InProcess(), seed=5)
    assert (suite.ok, suite.seed) == (True, 5)


async def test_max_duration_caps_each_run_and_a_shorter_limit_of_the_case_stays():
    async def hang(request):
        await anyio.sleep(30)
        return "never"

    capped = simple_case("capped", ScriptedLlm(responder=hang))
    shorter = simple_case(
        "shorter", ScriptedLlm(responder=hang), terminate_when=TerminateWhen(max_duration=0.05)
    )
    suite = await run_eval_suite([capped, shorter], max_duration=0.3)
    limits = {r.name: r.termination.limit for r in suite.results}
    assert limits == {"capped": 0.3, "shorter": 0.05}
    assert {r.status for r in suite.results} == {"terminated"}


async def test_durations_of_an_earlier_run_start_the_longest_case_first():
    started = []
    cases = [simple_case(name, ScriptedLlm(["hi"])) for name in ("short", "long", "new")]
    await run_eval_suite(
        cases,
        parallel=False,
        durations={"short": 1.0, "long": 9.0},
        on_start=lambda case, attempt: started.append(case.name),
    )
    assert started == ["new", "long", "short"]


async def test_a_gate_on_the_pass_rate_never_lets_an_error_through_unless_told():
    def bad(args, ctx):
        raise RuntimeError("mock bug")

    def lookup(key: str) -> dict:
        """Looks up."""
        return {}

    broken = EvalCase(
        name="broken",
        agent=LlmAgent(
            name="b", tools=[lookup], model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "ok"])
        ),
        first_message="hi",
        tool_mocks={"lookup": ToolMock(bad)},
    )
    cases = [simple_case(f"fine-{i}", ScriptedLlm(["hi"])) for i in range(3)] + [broken]
    suite = await run_eval_suite(cases)
    assert suite.summary["errors"] == 1
    assert suite.pass_rate == 0.75
    assert not suite.meets(0.5)
    assert suite.meets(0.5, allow_errors=True)
    assert not suite.meets(0.9, allow_errors=True)
    assert suite.meets() is suite.ok is False


def _coin_case(name: str, outcomes) -> EvalCase:
    """A case whose n-th run passes when `outcomes(n)` is true (its first model call decides)."""
    runs = itertools.count()

    def escalate(tool_context: ToolContext) -> dict:
        """Escalates (safe: state only)."""
        tool_context.state["escalated"] = True
        return {}

    def model(request):
        if not any(c.role == "model" for c in request.contents):
            return tool_call("escalate") if outcomes(next(runs)) else "no need"
        return "ok"

    return EvalCase(
        name=name,
        agent=LlmAgent(name="a", model=ScriptedLlm(responder=model), tools=[escalate]),
        first_message="hi",
        tool_mocks={"escalate": escalate},
        metrics=[state_metric("escalated", "session", "escalated", lambda v: v is True)],
    )


def _mixed_suite() -> list[EvalCase]:
    return [
        _coin_case("always", lambda n: True),
        _coin_case("never", lambda n: False),
        _coin_case("coin", lambda n: n % 2 == 0),
    ]


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_adaptive_repeats_stop_settled_cases_and_run_uncertain_ones_to_max(concurrency):
    suite = await run_eval_suite(
        _mixed_suite(), repeat=Adaptive(max=12), max_concurrency=concurrency, seed=7
    )

    needed = {stats.name: len(stats.runs) for stats in suite.cases}
    if concurrency == 1:  # 4 agreeing runs settle a verdict at 95 %: 4/4 has [51%, 100%]
        assert needed == {"always": 4, "never": 4, "coin": 12}
    else:  # runs already in flight when a verdict settles still finish, and count
        assert 4 <= needed["always"] < 12
        assert 4 <= needed["never"] < 12
        assert needed["coin"] == 12
    assert {stats.name: stats.repeat for stats in suite.cases} == needed
    assert suite.repeat == 12
    assert suite.attempts_saved == 36 - sum(needed.values())
    assert suite.summary["total"] == sum(needed.values())
    assert suite.not_run == []
    fixed = await run_eval_suite(_mixed_suite(), repeat=12, max_concurrency=concurrency, seed=7)
    assert len(fixed.results) == 36 > len(suite.results)  # counted, not timed


async def test_repeat_auto_is_adaptive_and_a_bad_repeat_is_one_clear_error():
    suite = await run_eval_suite(_mixed_suite()[:1], repeat="auto:6", max_concurrency=1)
    assert suite.adaptive == Adaptive(max=6)
    assert len(suite.results) == 4

    with pytest.raises(EvalSetupError, match="'auto' or 'auto:MAX'"):
        await run_eval_suite(_mixed_suite(), repeat="often")
    with pytest.raises(EvalSetupError, match="threshold"):
        Adaptive(threshold=1.5)


async def test_a_suite_of_workflow_app_and_agent_tool_cases_keeps_and_reads_their_traces():
    from adk_eval._trace._spool import SpooledTrace
    from tests import shapes_support
    from tests.shapes_support import agent_tool_case, app_case, workflow_case

    shapes_support.RAN.clear()
    suite = await run_eval_suite([workflow_case(), app_case(), agent_tool_case()])

    assert [(r.name, r.status) for r in suite.results] == [
        ("workflow", "passed"),
        ("app", "passed"),
        ("agent_tool", "passed"),
    ], [r.explain() for r in suite.results]
    assert all(isinstance(r._trace, SpooledTrace) for r in suite.results)  # spooled, the default
    workflow, app, nested = suite.results
    assert workflow.final_state["session"]["formatter"].startswith("<function open_ledger.")
    (output,) = [e.output for e in workflow.events if isinstance(e.output, dict)]
    assert output["text"] == "owls hunt at night"  # kept, next to the lock kept as its repr
    assert output["guard"].startswith("<unlocked _thread.lock object")
    texts = [m.text for m in workflow.trace.messages if m.role == "agent"]
    assert texts == ["owls hunt at night", "Confirmed: owls hunt at night"]
    assert [c.response for c in app.trace.tool_calls] == [{"facts": "mocked"}]
    assert [c.name for c in nested.trace.nested_tool_calls] == ["finder", "lookup"]
    assert shapes_support.RAN == ["confirm"]  # the declared node; never the mocked tool
    for result in suite.results:
        assert result.explain().startswith(f"EvalCase `{result.name}`: PASSED")
        assert result.to_data()["status"] == "passed"
