"""The loop's stops: `TerminateWhen`'s state match, turn limit and wall-time limit.

A run stopped by a limit is still scored; a wall-time limit cancels a hung model call or
tool and leaves no task running, and no cycle through the run once it is over.
"""

from __future__ import annotations

import asyncio
import gc
import time

import anyio
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools import ToolContext

from adk_eval import EvalCase, ScriptedUserAgent, TerminateWhen, ToolMock, UserAgents, run_eval
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call


def escalate(level: str, tool_context: ToolContext) -> dict:
    """Records an escalation in state (safe: state only)."""
    tool_context.state["escalation"] = {"level": level}
    return {"escalated": level}


async def test_state_matches_stops_the_run_normally():
    system = LlmAgent(
        name="clinician",
        model=ScriptedLlm([tool_call("escalate", {"level": "999"}), "Call 999 now."]),
        tools=[escalate],
    )
    patient = ScriptedUserAgent(name="patient", script=[], when_exhausted="error")
    result = await run_eval(
        EvalCase(
            name="stop-on-state",
            agent=system,
            first_message="chest pain",
            tool_mocks={"escalate": escalate},
            user_agents=UserAgents(loop=patient),
            terminate_when=TerminateWhen(
                state_matches={"session": {"escalation": {"$exists": True}}}
            ),
            metrics=[
                state_metric("escalated", "session", "escalation", lambda v: v["level"] == "999")
            ],
        )
    )

    assert result.status == "passed", result.explain()
    assert result.termination_reason == "state_matches"
    assert result.termination.value["session"]["escalation"] == {"level": "999"}
    assert result.turns == 0
    assert result.user_agent_events == ()


async def test_max_turns_terminates_and_metrics_still_run():
    system = LlmAgent(name="chatty", model=ScriptedLlm(responder=lambda r: "Tell me more."))
    patient = ScriptedUserAgent(name="patient", step=lambda ctx: f"message {ctx.turn}")
    result = await run_eval(
        EvalCase(
            name="endless",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=patient),
            terminate_when=TerminateWhen(max_turns=3),
            metrics=[event_count_metric("replies", "agent_message", assertion=lambda n: n == 4)],
        )
    )

    assert result.status == "terminated"
    assert result.termination_reason == "max_turns"
    assert (result.termination.limit, result.termination.value) == (3, 3)
    assert result.turns == 3
    assert result.metrics["replies"].passed, result.explain()
    assert [m.text for m in result.trace.select("user_message")] == [
        "hi",
        "message 0",
        "message 1",
        "message 2",
    ]


async def test_max_duration_cuts_a_model_that_never_returns():
    cancelled = anyio.Event()

    async def hang(request: LlmRequest):
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    agent = LlmAgent(name="stuck", model=ScriptedLlm(responder=hang))
    before = set(asyncio.all_tasks())
    limit = 0.5
    started = time.perf_counter()

    result = await run_eval(
        EvalCase(
            name="hung",
            agent=agent,
            first_message="hi",
            terminate_when=TerminateWhen(max_duration=limit),
            metrics=[
                event_count_metric("user_messages", "user_message", assertion=lambda n: n == 1)
            ],
        )
    )
    elapsed = time.perf_counter() - started

    assert result.status == "terminated"
    assert result.termination_reason == "max_duration"
    assert result.termination.value >= limit
    assert cancelled.is_set()  # the hung call itself was cancelled, not abandoned
    # a generous margin: timers on shared CI machines overshoot by up to ~1.5s
    assert elapsed < limit + 3.0
    assert result.metrics["user_messages"].passed
    await asyncio.sleep(0)
    leftover = {
        t for t in asyncio.all_tasks() if t not in before and t is not asyncio.current_task()
    }
    assert leftover == set()


async def test_max_duration_cuts_a_hung_tool():
    async def hang_forever(args, ctx):
        await anyio.sleep_forever()

    def slow_lookup(q: str) -> dict:
        """Looks something up."""
        return {}

    agent = LlmAgent(
        name="a",
        model=ScriptedLlm([tool_call("slow_lookup", {"q": "x"}), "done"]),
        tools=[slow_lookup],
    )
    result = await run_eval(
        EvalCase(
            name="hung-tool",
            agent=agent,
            first_message="hi",
            tool_mocks={"slow_lookup": ToolMock(hang_forever)},
            terminate_when=TerminateWhen(max_duration=0.3),
        )
    )

    assert result.status == "terminated"
    assert result.termination_reason == "max_duration"


async def test_a_finished_run_leaves_nothing_of_itself_alive():
    # the wall-time limit's listeners on the case clock and the gate closed over the run:
    # kept after its end, the run lived on through its cancelled timer's context, then in a
    # cycle until a full collection (a suite's memory kept per case x4)
    agent = LlmAgent(
        name="a",
        model=ScriptedLlm([tool_call("escalate", {"level": "1"}), "done"]),
        tools=[escalate],
    )
    case = EvalCase(
        name="freed",
        agent=agent,
        first_message="hi",
        tool_mocks={"escalate": ToolMock(lambda args, ctx: {"escalated": "1"})},
        terminate_when=TerminateWhen(max_duration=60),
    )

    def runs_alive() -> dict[int, str]:  # a run's two objects, by id (other tests' runs too)
        return {
            id(o): type(o).__name__
            for o in gc.get_objects()
            if type(o).__name__ in ("_Simulation", "RunParts")
        }

    gc.collect()
    before = runs_alive()
    was_enabled = gc.isenabled()
    gc.disable()  # what a run leaves must go by reference counting alone
    try:
        result = await run_eval(case)
        alive = {name for key, name in runs_alive().items() if key not in before}
    finally:
        if was_enabled:
            gc.enable()

    assert result.status == "passed", result.explain()
    assert alive == set()
