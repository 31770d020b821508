"""Harness overhead: the same conversation through a hand-written ADK Runner loop and run_eval.

Each turn: user message -> `ask` (long-running tool, answered from outside) ->
`lookup` tool -> final text. (a) drives it with a bare ADK `Runner`, answering
the yield by hand, on ADK's `InMemorySessionService` (what a hand-written loop
uses); (b) runs it through `run_eval` with a `ToolMock` for `lookup`, a
`ScriptedUserAgent` for `ask` and for the next user message, the default bridge,
termination checks and two metrics; (c) is (a) on `EvalSessionService`, so
(a) - (c) is what ADK's session copies cost and the growth left in (c) is ADK's
own per-call work (building each model request from the whole history). All use
`ScriptedLlm` with zero latency, so the figures are the frameworks' own cost.
(a) is the loop as a person writes it, with ADK's default `RunConfig`; (q) is (a)
with the `RunConfig` run_eval gives ADK when nobody listens to telemetry (no
message content is serialized for spans), so (b)/(q) compares the same ADK work.

    python bench/overhead.py                 # turns 1,5,10,20; 7 repeats
    python bench/overhead.py --turns 1 5 --repeats 5 --json out.json
    python bench/overhead.py --instructions  # instruction counts under valgrind

Prints per-turn CPU times (or, with ``--instructions``, instructions counted by
valgrind's callgrind: slow, but independent of the machine's load) and the ratio
(b)/(a) per length (median of the repeats, (a) and (b) interleaved in each
repeat), the per-case set-up time, and writes a JSON result
(``bench/results/overhead.json``, or ``overhead_instructions.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from typing import Any

from _callgrind import InstructionMeter, rerun_under_callgrind
from _common import machine, write_result
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner, Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools import LongRunningFunctionTool
from google.genai import types

from adk_eval import (
    EvalCase,
    EvalSessionService,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval._sandbox._telemetry import run_config
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
            # "Again." after each of the first turns - 1 turns, then STOP (the script
            # is exhausted): the agent runs exactly as often as in the bare loop.
            loop=ScriptedUserAgent(name="next_user", script=["Again."] * (turns - 1)),
            tools={"ask": ScriptedUserAgent(name="asker", step=lambda ctx: "the key")},
        ),
        initial_state={"session": {"n": 0}},
        first_message="Start.",
        terminate_when=TerminateWhen(max_turns=2 * turns),  # checked, never reached
        metrics=[
            state_metric("n", "session", "n", lambda v: v == 0),
            event_count_metric(
                "lookups", "tool_call", lambda c: c.name == "lookup", lambda n: n > 0
            ),
        ],
    )


async def bare_adk(
    agent: LlmAgent,
    turns: int,
    keep: list[Any] | None = None,
    sessions: BaseSessionService | None = None,
    quiet: bool = False,
) -> None:
    """(a) The same conversation with a hand-written Runner loop (`keep` gets its events).

    With `sessions`, the loop runs on that session service: (c). With `quiet`, ADK
    gets the `RunConfig` run_eval gives it: (q).
    """
    runner = InMemoryRunner(agent=agent, app_name="bench")
    if sessions is not None:
        runner = Runner(agent=agent, app_name="bench", session_service=sessions)
    session = await runner.session_service.create_session(
        app_name="bench", user_id="u", state={"n": 0}
    )
    message = types.Content(role="user", parts=[types.Part(text="Start.")])
    done = 0
    config = run_config() if quiet else None  # (q): the telemetry work run_eval asks for
    while done < turns:
        pending = []
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message, run_config=config
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
    if keep is not None:
        final = await runner.session_service.get_session(
            app_name="bench", user_id="u", session_id=session.id
        )
        assert final is not None
        keep.extend(final.events)
    await runner.close()


async def bare_on_eval_sessions(agent: LlmAgent, turns: int) -> None:
    """(c) The bare loop of (a) on `EvalSessionService`."""
    await bare_adk(agent, turns, sessions=EvalSessionService())


async def bare_quiet(agent: LlmAgent, turns: int) -> None:
    """(q) The bare loop of (a) with the quiet `RunConfig` run_eval gives ADK."""
    await bare_adk(agent, turns, quiet=True)


async def through_harness(agent: LlmAgent, turns: int) -> None:
    """(b) The same conversation through run_eval."""
    result = await run_eval(make_case(agent, turns))
    assert result.status == "passed", result.explain()
    # Per turn the yield's answer and the next message; the last turn's STOP is not a turn.
    assert result.turns == 2 * turns - 1, result.turns


def _kind(part: Any) -> str:
    if part is None:
        return "none"
    if part.text:
        return "text"
    return "call" if part.function_call else "response"


def shape(events: Any) -> list[tuple[str, str]]:
    """Each event's author and what it holds (text, call or response), for comparing runs."""
    return [
        (
            event.author,
            _kind(event.content.parts[0] if event.content and event.content.parts else None),
        )
        for event in events
    ]


async def check_same_runs(agent: LlmAgent, turns: int = 3) -> None:
    """Both sides must run the agent alike: their main sessions hold the same events."""
    bare: list[Any] = []
    await bare_adk(agent, turns, keep=bare)
    result = await run_eval(make_case(agent, turns))
    if shape(bare) != shape(result.events):
        raise AssertionError(f"the two sides differ:\n{shape(bare)}\n{shape(result.events)}")


class CpuMeter:
    """CPU seconds of a run. Both sides are single-threaded and never wait on I/O,
    so CPU time is what they cost, without the VM's steal time and scheduling."""

    unit = "ms"
    scale = 1000.0

    async def measure(self, coro: Any, label: str) -> float:
        gc.collect()
        started = time.process_time()
        await coro
        return time.process_time() - started


async def measure(
    turns_list: list[int], repeats: int, meter: CpuMeter | InstructionMeter
) -> dict[str, Any]:
    agent = make_agent()
    await check_same_runs(agent)  # also the warm-up of both sides: imports, caches
    rows = []
    for turns in turns_list:
        bare, harness, light, quiet = [], [], [], []
        for index in range(repeats):
            sides = [("a", bare_adk, bare), ("b", through_harness, harness)]
            sides += [("c", bare_on_eval_sessions, light), ("q", bare_quiet, quiet)]
            if index % 2:
                sides.reverse()  # alternate the order: no side always runs warm
            for name, run, into in sides:
                into.append(await meter.measure(run(agent, turns), f"{name}-{turns}-{index}"))
        a, b, c = statistics.median(bare), statistics.median(harness), statistics.median(light)
        q = statistics.median(quiet)
        best_a, best_b = min(bare), min(harness)
        unit, scale = meter.unit, meter.scale
        rows.append(
            {
                "turns": turns,
                "unit": f"{unit} per turn",
                "best_ratio": best_b / best_a,
                "best_bare_per_turn": best_a / turns * scale,
                "best_harness_per_turn": best_b / turns * scale,
                "bare_per_turn": a / turns * scale,
                "harness_per_turn": b / turns * scale,
                "ratio": b / a,
                "bare_on_eval_sessions_per_turn": c / turns * scale,
                "bare_quiet_per_turn": q / turns * scale,
                "ratio_to_quiet": b / q,
                "bare": bare,
                "harness": harness,
                "bare_on_eval_sessions": light,
                "bare_quiet": quiet,
            }
        )
        print(
            f"turns={turns:>3}  bare {a / turns * scale:7.2f} {unit}/turn   "
            f"run_eval {b / turns * scale:7.2f} {unit}/turn   ratio {b / a:5.3f}   "
            f"(fastest runs: {best_a / turns * scale:6.2f} vs {best_b / turns * scale:6.2f}, "
            f"ratio {best_b / best_a:5.3f})   bare on EvalSessionService "
            f"{c / turns * scale:7.2f} {unit}/turn   bare, quiet RunConfig "
            f"{q / turns * scale:7.2f} {unit}/turn (run_eval / it {b / q:5.3f})",
            flush=True,
        )
    if isinstance(meter, InstructionMeter):  # wall-clock set-up under valgrind means nothing
        return {"rows": rows, "setup_ms": None, "target_ratio": 1.10}
    setups = []
    for _ in range(max(repeats, 5) * 20):
        started = time.perf_counter()
        make_case(agent, 5)
        setups.append(time.perf_counter() - started)
    setup_ms = statistics.median(setups) * 1000
    print(f"per-case set-up (EvalCase with mocks, user agents, metrics): {setup_ms:.3f} ms")
    return {"rows": rows, "setup_ms": setup_ms, "target_ratio": 1.10, "target_setup_ms": 1.0}


def under_callgrind(args: argparse.Namespace) -> int:
    """Reruns this script under callgrind with the client-request library built."""
    script_args = ["--turns", *map(str, args.turns), "--repeats", str(args.repeats)]
    return rerun_under_callgrind(__file__, [*script_args, "--json", args.json])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1, 5, 10, 20])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions with valgrind's callgrind instead of CPU time (slow, stable)",
    )
    parser.add_argument("--callgrind-child", help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.json is None:
        name = "overhead_instructions" if args.instructions else "overhead"
        args.json = f"bench/results/{name}.json"
    if args.instructions:
        sys.exit(under_callgrind(args))
    meter: CpuMeter | InstructionMeter = CpuMeter()
    if args.callgrind_child:
        library, out_file = args.callgrind_child.split(":", 1)
        meter = InstructionMeter(library, out_file)
    result = asyncio.run(measure(args.turns, args.repeats, meter))
    result["meter"] = "instructions" if args.callgrind_child else "cpu_time"
    write_result(args.json, {"bench": "overhead", "machine": machine(), **result})


if __name__ == "__main__":
    main()
