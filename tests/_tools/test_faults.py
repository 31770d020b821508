"""Seeded fault and latency injection: reproducible by seed, under concurrency and repeats."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, EvalSetupError, TerminateWhen, ToolMock, run_eval, run_eval_suite
from adk_eval._tools._faults import Faults
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(key: str) -> dict:
    """Looks a key up."""
    return {"value": key.upper(), "real": True}


def clock() -> dict:
    """Tells the time."""
    raise AssertionError("mocked")


KEYS = [f"k{i}" for i in range(8)]


def lookups_case(name: str, mock: ToolMock, **kwargs) -> EvalCase:
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([*(tool_call("lookup", {"key": k}) for k in KEYS), "Done."]),
        tools=[lookup, clock],
    )
    return EvalCase(
        name=name, agent=agent, first_message="Look them up", tool_mocks={"lookup": mock}, **kwargs
    )


def faults_of(result) -> list[tuple[str, str]]:
    """Per call: its key and what answered it."""
    calls = result.trace.select("tool_call")
    return [(c.args["key"], result.trace.source_of(c)) for c in calls]


def test_a_decision_depends_on_seed_args_and_occurrence_only():
    faults = Faults(error_rate=0.5, latency=(0.1, 2.0))
    one = [faults.decide(7, 0, "lookup", {"key": k}, 0) for k in KEYS]
    assert one == [faults.decide(7, 0, "lookup", {"key": k}, 0) for k in reversed(KEYS)][::-1]
    assert one != [faults.decide(8, 0, "lookup", {"key": k}, 0) for k in KEYS]
    assert all(0.1 <= d.latency <= 2.0 for d in one)
    assert {d.fault for d in one} == {"error", None}
    again = [faults.decide(7, 0, "lookup", {"key": k}, 1) for k in KEYS]
    assert again != one  # the second time a call is made, it draws anew
    # an own seed: the same faults whatever the run's seed, but per attempt
    own = Faults(error_rate=0.5, seed=3)
    assert own.decide(1, 0, "lookup", {"key": "a"}, 0) == own.decide(
        2, 0, "lookup", {"key": "a"}, 0
    )
    per_attempt = {own.decide(1, a, "lookup", {"key": k}, 0).fault for a in range(4) for k in KEYS}
    assert per_attempt == {"error", None}


def test_match_args_limits_the_calls_affected():
    faults = Faults(error_rate=1.0, match_args={"key": "k1"})
    assert faults.decide(1, 0, "lookup", {"key": "k1"}, 0).fault == "error"
    assert faults.decide(1, 0, "lookup", {"key": "k2"}, 0).fault is None


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"error_rate": 1.5}, "error_rate"),
        ({"error_rate": 0.6, "timeout_rate": 0.6}, "at most 1"),
        ({"latency": (3, 1)}, "latency"),
        ({"latency": "slow"}, "latency"),
        ({"error": "boom"}, "error="),
        ({"match_args": ["key"]}, "match_args"),
        ({"latency": float("inf")}, "latency"),
        ({"latency": (0, float("nan"))}, "latency"),
        ({"timeout": float("inf")}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"error": SystemExit(3)}, "ends a process or a task"),
        ({"error": KeyboardInterrupt()}, "ends a process or a task"),
        ({"error": asyncio.CancelledError()}, "ends a process or a task"),
    ],
)
def test_bad_faults_are_refused_naming_the_argument(kwargs, problem):
    with pytest.raises(EvalSetupError, match=problem):
        ToolMock.returning({}).with_faults(**kwargs)


async def test_the_same_seed_injects_the_same_faults_under_concurrency_and_repeats():
    mock = ToolMock(lambda args, ctx: {"value": args["key"]}).with_faults(error_rate=0.4)
    cases = [lookups_case(f"case{i}", mock) for i in range(3)]
    first = await run_eval_suite(cases, max_concurrency=3, repeat=2, seed=1234)
    second = await run_eval_suite(list(reversed(cases)), max_concurrency=2, repeat=2, seed=1234)
    assert first.seed == second.seed == 1234
    by_run = {(r.name, r.attempt): faults_of(r) for r in first.results}
    assert len(by_run) == 6
    assert by_run == {(r.name, r.attempt): faults_of(r) for r in second.results}
    assert {r.seed for r in first.results} == {r.seed for r in second.results}
    assert len({r.seed for r in first.results}) == 6  # every run its own seed
    injected = [src for calls in by_run.values() for _, src in calls]
    assert 0 < injected.count("fault") < len(injected)
    assert len({tuple(calls) for calls in by_run.values()}) > 1  # runs differ from each other
    # one run again, alone, with its seed: the same faults at the same calls
    some = first.results[4]
    alone = await run_eval(lookups_case(some.name, mock), seed=some.seed, attempt=some.attempt)
    assert faults_of(alone) == faults_of(some)
    other = await run_eval_suite(cases, max_concurrency=3, repeat=2, seed=99)
    assert {(r.name, r.attempt): faults_of(r) for r in other.results} != by_run


async def test_an_injected_error_is_the_tools_answer_or_its_exception():
    mock = ToolMock.returning({"value": "x"}).with_faults(error_rate=1.0)
    answered = await run_eval(lookups_case("answer", mock))
    assert answered.ok, answered.explain()
    first = answered.trace.select("tool_call")[0]
    assert first.response == {
        "error_code": 500,
        "error_message": "Internal server error (injected by adk_eval)",
    }
    assert "(injected fault)" in answered.explain(last_turns=20)
    raising = ToolMock.returning({"value": "x"}).with_faults(
        error_rate=1.0, error=ConnectionError("CRM unreachable")
    )
    failed = await run_eval(lookups_case("raise", raising))
    assert failed.status == "error"
    assert "ConnectionError: CRM unreachable" in failed.error.message


async def test_the_agents_error_callback_sees_an_injected_exception():
    def on_error(tool, args, tool_context, error):
        return {"handled": f"{type(error).__name__}: {error}"}

    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([tool_call("lookup", {"key": "a"}), "Sorry, try later."]),
        tools=[lookup],
        on_tool_error_callback=on_error,
    )
    mock = ToolMock.returning({}).with_faults(error_rate=1.0, error=TimeoutError("slow CRM"))
    result = await run_eval(
        EvalCase(name="cb", agent=agent, first_message="go", tool_mocks={"lookup": mock})
    )
    assert result.ok, result.explain()
    assert result.trace.select("tool_call")[0].response == {"handled": "TimeoutError: slow CRM"}


async def test_faults_compose_with_the_real_tool():
    ran: list[str] = []

    def counted(key: str) -> dict:
        """Looks a key up."""
        ran.append(key)
        return {"value": key.upper()}

    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([*(tool_call("counted", {"key": k}) for k in KEYS), "Done."]),
        tools=[counted],
    )
    mock = ToolMock.real(counted).with_faults(error_rate=0.5)
    result = await run_eval(
        EvalCase(name="real", agent=agent, first_message="go", tool_mocks={"counted": mock}),
        seed=5,
    )
    assert result.ok, result.explain()
    calls = result.trace.select("tool_call")
    sources = [result.trace.source_of(c) for c in calls]
    assert set(sources) == {"fault", "real"}
    assert ran == [c.args["key"] for c, s in zip(calls, sources, strict=True) if s == "real"]
    assert all(
        c.response == {"value": c.args["key"].upper()}
        for c, s in zip(calls, sources, strict=True)
        if s == "real"
    )


async def test_real_needs_the_agents_own_tool():
    def impostor(key: str) -> dict:
        """Looks a key up."""
        return {}

    impostor.__name__ = "lookup"
    case = lookups_case("impostor", ToolMock.real(impostor).with_faults(error_rate=0.1))
    with pytest.raises(EvalSetupError, match="not the agent's `lookup` tool"):
        await run_eval(case)


async def test_injected_latency_moves_the_case_clock_and_counts_against_max_duration():
    seen: list[datetime] = []

    def tell_time(args, ctx):
        seen.append(ctx.now())
        return {"now": ctx.now().isoformat()}

    start = datetime(2026, 1, 1, tzinfo=UTC)
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm(
            [
                tool_call("clock"),
                *(tool_call("lookup", {"key": k}) for k in KEYS[:3]),
                tool_call("clock"),
                "Done.",
            ]
        ),
        tools=[lookup, clock],
    )
    slow = ToolMock.returning({"value": "v"}).with_faults(latency=4.0)
    base = {"name": "slow", "agent": agent, "first_message": "go", "clock": start}
    mocks = {"lookup": slow, "clock": ToolMock(tell_time)}
    result = await run_eval(EvalCase(**base, tool_mocks=mocks))
    assert result.ok, result.explain()
    assert [(t - start).total_seconds() for t in seen] == [0.0, 12.0]  # 3 calls x 4 s
    assert result.duration_ms < 10_000  # nothing slept

    limited = await run_eval(
        EvalCase(
            **{**base, "name": "limited"},
            tool_mocks=mocks,
            terminate_when=TerminateWhen(max_duration=10),
        )
    )
    assert limited.status == "terminated"
    assert limited.termination.kind == "max_duration"
    assert limited.termination.value >= 12.0
    assert limited.duration_ms < 10_000


async def test_an_injected_timeout_takes_its_seconds_and_answers_504():
    seen: list[datetime] = []
    agent = LlmAgent(
        name="agent",
        model=ScriptedLlm([tool_call("lookup", {"key": "a"}), tool_call("clock"), "Done."]),
        tools=[lookup, clock],
    )
    start = datetime(2026, 1, 1, tzinfo=UTC)
    mocks = {
        "lookup": ToolMock.returning({"value": "v"}).with_faults(timeout_rate=1.0, timeout=30),
        "clock": ToolMock(lambda args, ctx: seen.append(ctx.now()) or {}),
    }
    result = await run_eval(
        EvalCase(name="timeout", agent=agent, first_message="go", tool_mocks=mocks, clock=start)
    )
    assert result.ok, result.explain()
    response = result.trace.select("tool_call")[0].response
    assert response["error_code"] == 504
    assert "timed out after 30 s" in response["error_message"]
    assert seen == [datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)]


async def test_a_mock_that_raises_cancelled_error_is_its_error_never_a_pass():
    def cancels(args, ctx):
        raise asyncio.CancelledError()

    result = await run_eval(lookups_case("cancels", ToolMock(cancels)))
    assert result.status == "error", result.explain()
    assert "The mock for tool `lookup` raised CancelledError" in result.error.message


async def test_a_cancelled_run_is_still_cancelled_not_an_error():
    async def slow(args, ctx):
        await asyncio.sleep(30)

    result = await run_eval(
        lookups_case("slow", ToolMock(slow), terminate_when=TerminateWhen(max_duration=0.2))
    )
    assert result.status == "terminated"
    assert result.termination_reason == "max_duration"
