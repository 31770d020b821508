"""Harness overhead: the same conversation through a hand-written ADK Runner loop and run_eval.

Each turn: user message -> `ask` (long-running tool, answered from outside) ->
`lookup` tool -> final text. (a) drives it with a bare ADK `Runner`, answering
the yield by hand; (b) runs it through `run_eval` with a `ToolMock` for
`lookup`, a `ScriptedUserAgent` for `ask` and for the next user message, the
default bridge, termination checks and two metrics. Both use `ScriptedLlm` with
zero latency, so the figures are the harness's own cost.

    python bench/overhead.py                 # turns 1,5,10,20; 7 repeats
    python bench/overhead.py --turns 1 5 --repeats 5 --json out.json

Prints per-turn CPU times and the ratio (b)/(a) per length (median of the
repeats, (a) and (b) interleaved in each repeat), the per-case set-up time, and writes
a JSON result (``bench/results/overhead.json`` by default).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from typing import Any

from _common import machine, write_result
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.tools import LongRunningFunctionTool
from google.genai import types

from adk_eval import (
    EvalCase,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call


def lookup(key: str) -> dict:
    """Looks a key up (a side effect in real life)."""
    return {"value": key.upper()}


def ask(question: str) -> None:
    """Asks the user (long-running: answered from outside)."""


def respond(request: Any) -> Any:
    step = model_turn_index(request) % 3
    if step == 0:
        return tool_call("ask", {"question": "Which key?"})
    if step == 1:
        return tool_call("lookup", {"key": "k"})
    return "Done."


def make_agent() -> LlmAgent:
    return LlmAgent(
        name="bench_agent",
        model=ScriptedLlm(responder=respond),
        instruction="Answer with the tools.",
        tools=[LongRunningFunctionTool(ask), lookup],
    )


def make_case(agent: LlmAgent, turns: int) -> EvalCase:
    return EvalCase(
        name="bench",
        agent=agent,
        tool_mocks={"lookup": ToolMock(lambda args, ctx: {"value": args["key"].upper()})},
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="next_user", script=["Again."] * turns),
            tools={"ask": ScriptedUserAgent(name="asker", step=lambda ctx: "the key")},
        ),
        initial_state={"session": {"n": 0}},
        first_message="Start.",
        terminate_when=TerminateWhen(max_turns=2 * turns),
        metrics=[
            state_metric("n", "session", "n", lambda v: v == 0),
            event_count_metric(
                "lookups", "tool_call", lambda c: c.name == "lookup", lambda n: n > 0
            ),
        ],
    )


async def bare_adk(agent: LlmAgent, turns: int) -> None:
    """(a) The same conversation with a hand-written Runner loop."""
    runner = InMemoryRunner(agent=agent, app_name="bench")
    session = await runner.session_service.create_session(
        app_name="bench", user_id="u", state={"n": 0}
    )
    message = types.Content(role="user", parts=[types.Part(text="Start.")])
    done = 0
    while done < turns:
        pending = []
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            if event.long_running_tool_ids:
                pending += [
                    c for c in event.get_function_calls() if c.id in event.long_running_tool_ids
                ]
        if pending:
            message = types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=c.id, name=c.name, response={"result": "the key"}
                        )
                    )
                    for c in pending
                ],
            )
        else:
            done += 1
            message = types.Content(role="user", parts=[types.Part(text="Again.")])
    await runner.close()


async def through_harness(agent: LlmAgent, turns: int) -> None:
    """(b) The same conversation through run_eval."""
    result = await run_eval(make_case(agent, turns))
    assert result.status in ("passed", "terminated"), result.explain()


async def timed(coro: Any) -> float:
    """CPU seconds of the run (both sides are single-threaded and never wait on I/O:
    CPU time is what the harness costs, without the VM's steal time and scheduling noise)."""
    gc.collect()
    started = time.process_time()
    await coro
    return time.process_time() - started


async def measure(turns_list: list[int], repeats: int) -> dict[str, Any]:
    agent = make_agent()
    await bare_adk(agent, 1)  # warm-up: imports, caches
    await through_harness(agent, 1)
    rows = []
    for turns in turns_list:
        bare, harness = [], []
        for index in range(repeats):
            pair = [("a", bare_adk), ("b", through_harness)]
            if index % 2:
                pair.reverse()  # alternate the order: neither side always runs warm
            for name, run in pair:
                elapsed = await timed(run(agent, turns))
                (bare if name == "a" else harness).append(elapsed)
        a, b = statistics.median(bare), statistics.median(harness)
        best_a, best_b = min(bare), min(harness)
        rows.append(
            {
                "turns": turns,
                "best_ratio": best_b / best_a,
                "best_bare_ms_per_turn": best_a / turns * 1000,
                "best_harness_ms_per_turn": best_b / turns * 1000,
                "bare_ms_per_turn": a / turns * 1000,
                "harness_ms_per_turn": b / turns * 1000,
                "ratio": b / a,
                "bare_s": bare,
                "harness_s": harness,
            }
        )
        print(
            f"turns={turns:>3}  bare {a / turns * 1000:7.2f} ms/turn   "
            f"run_eval {b / turns * 1000:7.2f} ms/turn   ratio {b / a:5.3f}   "
            f"(fastest runs: {best_a / turns * 1000:6.2f} vs {best_b / turns * 1000:6.2f} ms/turn, "
            f"ratio {best_b / best_a:5.3f})",
            flush=True,
        )
    setups = []
    for _ in range(max(repeats, 5) * 20):
        started = time.perf_counter()
        make_case(agent, 5)
        setups.append(time.perf_counter() - started)
    setup_ms = statistics.median(setups) * 1000
    print(f"per-case set-up (EvalCase with mocks, user agents, metrics): {setup_ms:.3f} ms")
    return {"rows": rows, "setup_ms": setup_ms, "target_ratio": 1.10, "target_setup_ms": 1.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1, 5, 10, 20])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default="bench/results/overhead.json")
    args = parser.parse_args()
    result = asyncio.run(measure(args.turns, args.repeats))
    write_result(args.json, {"bench": "overhead", "machine": machine(), **result})


if __name__ == "__main__":
    main()
