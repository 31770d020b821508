"""Suite throughput against the latency limit: many cases through LiteLlm to a slow fake provider.

A `FakeProviderServer` runs in its own process on 127.0.0.1 and answers every
call after a fixed delay: two tool calls, then text, so each case makes 3 model
calls (ADK's real `LiteLlm`, i.e. litellm and the OpenAI SDK). The suite runs
at several concurrencies. For each, the wall time is compared with:

* the ideal: ``cases x calls x delay / concurrency`` (pure waiting);
* the CPU bound: ``cases x`` the client CPU time one case costs (measured with
  zero delay), since one Python process runs the harness on one core.

    python bench/throughput.py                         # 1000 cases, delay 0.2 s, c=1,16,64,256
    python bench/throughput.py --cases 100 --concurrency 1 16 --delay 0.05
    python bench/throughput.py --concurrency 16 --jitter 0.5   # latency spread 0.1-0.3 s

At concurrency c the run uses ``min(cases, 100 x c)`` cases (``--cases-per-slot``:
concurrency 1 would otherwise wait 10 minutes per repeat for pure latency).
Each level is run ``--repeats`` times (levels in alternating order; medians), and
the CPU bound is measured again in every repeat. Peak RSS growth per concurrent
case is reported too. Writes ``bench/results/throughput.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import time
from typing import Any

from _common import machine, rss_mib, start_provider, write_result
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm

from adk_eval import (
    EvalCase,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval_suite,
)

CALLS = 3


def lookup(key: str) -> dict:
    """Looks a key up."""
    return {"value": key}


def make_cases(url: str, count: int, turns: int = 1) -> list[EvalCase]:
    """`count` cases; with `turns` > 1 a scripted user says "Again." until that many turns."""
    model = LiteLlm(
        model="openai/fake", api_base=f"{url}/v1", api_key="bench", _skip_mcp_handler=True
    )
    agent = LlmAgent(name="worker", model=model, tools=[lookup], instruction="Use lookup.")
    mock = ToolMock(lambda args, ctx: {"value": args.get("key")})
    users = UserAgents()
    if turns > 1:
        users = UserAgents(loop=ScriptedUserAgent(name="customer", script=["Again."] * (turns - 1)))
    return [
        EvalCase(
            name=f"case-{i}",
            agent=agent,
            tool_mocks={"lookup": mock},
            user_agents=users,
            first_message="Go.",
            terminate_when=TerminateWhen(max_turns=turns),
        )
        for i in range(count)
    ]


def use_adks_sessions() -> None:
    """Runs the harness on ADK's InMemorySessionService, as before EvalSessionService."""
    from google.adk.sessions import InMemorySessionService

    import adk_eval._run.system
    import adk_eval._run.users

    adk_eval._run.system.EvalSessionService = InMemorySessionService  # type: ignore[misc]
    adk_eval._run.users.EvalSessionService = InMemorySessionService  # type: ignore[misc]


async def cpu_per_case(url: str, cases: int, turns: int, repeats: int) -> list[float]:
    """Client CPU seconds per case at concurrency 64 and zero delay, once per repeat."""
    await run_level(url, 16, 16)  # warm-up
    runs = []
    for _ in range(repeats):
        level = await run_level(url, cases, 64, turns)
        runs.append(level["cpu_s"] / cases)
    return runs


async def run_level(url: str, cases: int, concurrency: int, turns: int = 1) -> dict[str, float]:
    suite_cases = make_cases(url, cases, turns)
    cpu0, rss0 = time.process_time(), rss_mib()
    peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    suite = await run_eval_suite(suite_cases, max_concurrency=concurrency)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    bad = [r for r in suite.results if r.status != "passed"]
    assert not bad, bad[0].explain()
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "rss_growth_mib": max(peak - max(peak0, rss0), 0.0),
    }


def level_size(cases: int, concurrency: int, per_slot: int) -> int:
    """Cases run at `concurrency`: all of them, or `per_slot` per concurrent slot."""
    return min(cases, per_slot * concurrency)


async def measure(
    cases: int, levels: list[int], delay: float, repeats: int, per_slot: int, jitter: float = 0.0
) -> dict[str, Any]:
    fast, fast_url = start_provider(0.0)
    slow, slow_url = start_provider(delay, jitter=jitter)
    try:
        await run_level(fast_url, 16, 16)  # warm-up: imports, connection pools
        probe = min(cases, 200)
        cpu_per_case: list[float] = []
        runs: dict[int, list[dict[str, float]]] = {c: [] for c in levels}
        for index in range(repeats):
            zero = await run_level(fast_url, probe, 64)
            cpu_per_case.append(zero["cpu_s"] / probe)
            print(
                f"repeat {index + 1}/{repeats}: client CPU per case (3 LiteLlm calls + "
                f"harness, zero delay): {cpu_per_case[-1] * 1000:.1f} ms",
                flush=True,
            )
            # Alternate the order of the levels: neither always runs first.
            for concurrency in levels if index % 2 == 0 else list(reversed(levels)):
                count = level_size(cases, concurrency, per_slot)
                level = await run_level(slow_url, count, concurrency)
                runs[concurrency].append(level)
                print(
                    f"  c={concurrency:>4} cases={count:>5}  wall {level['wall_s']:7.2f}s  "
                    f"(ideal {count * CALLS * delay / concurrency:7.2f}s)  "
                    f"cpu {level['cpu_s']:6.2f}s  rss +{level['rss_growth_mib']:.0f} MiB",
                    flush=True,
                )
        cpu_case = statistics.median(cpu_per_case)
        print(f"client CPU per case, median of {repeats}: {cpu_case * 1000:.1f} ms")
        rows = []
        for concurrency in levels:
            count = level_size(cases, concurrency, per_slot)
            walls = [run["wall_s"] for run in runs[concurrency]]
            wall = statistics.median(walls)
            ideal = count * CALLS * delay / concurrency
            cpu_bound = count * cpu_case
            bound = max(ideal, cpu_bound)
            growth = max(run["rss_growth_mib"] for run in runs[concurrency])
            row = {
                "concurrency": concurrency,
                "cases": count,
                "wall_s": wall,
                "walls_s": walls,
                "cpu_s": statistics.median(run["cpu_s"] for run in runs[concurrency]),
                "ideal_s": ideal,
                "cpu_bound_s": cpu_bound,
                "vs_ideal": wall / ideal,
                "vs_bound": wall / bound,
                "rss_growth_mib": growth,
                "rss_mib_per_concurrent_case": growth / concurrency,
            }
            rows.append(row)
            print(
                f"c={concurrency:>4} cases={count:>5}  wall {wall:7.2f}s (median of {repeats})  "
                f"ideal {ideal:7.2f}s (x{row['vs_ideal']:.2f})  cpu bound {cpu_bound:7.2f}s  "
                f"vs max(ideal, cpu) x{row['vs_bound']:.2f}  rss +{growth:.0f} MiB",
                flush=True,
            )
        return {
            "delay_s": delay,
            "jitter": jitter,
            "calls_per_case": CALLS,
            "repeats": repeats,
            "cpu_per_case_ms": cpu_case * 1000,
            "cpu_per_case_ms_runs": [value * 1000 for value in cpu_per_case],
            "rows": rows,
            "target_vs_ideal": 1.3,
        }
    finally:
        for process in (fast, slow):
            process.terminate()
            process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="spread the delay: each answer waits delay x uniform(1 - jitter, 1 + jitter)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--cases-per-slot",
        type=int,
        default=100,
        help="at concurrency c, run min(cases, this x c) cases (c=1 waits 0.6 s per case)",
    )
    parser.add_argument("--json", default="bench/results/throughput.json")
    parser.add_argument(
        "--cpu-only",
        action="store_true",
        help="only the client CPU per case (concurrency 64, zero delay), --repeats times",
    )
    parser.add_argument("--turns", type=int, default=1, help="turns per case (--cpu-only)")
    parser.add_argument(
        "--sessions",
        choices=["eval", "adk"],
        default="eval",
        help="the harness's session service: EvalSessionService, or ADK's in-memory one",
    )
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.sessions == "adk":
        use_adks_sessions()
    if args.cpu_only:
        process, url = start_provider(0.0)
        try:
            runs = asyncio.run(cpu_per_case(url, args.cases, args.turns, args.repeats))
        finally:
            process.terminate()
            process.wait(10)
        median = statistics.median(runs) * 1000
        print(f"turns={args.turns} sessions={args.sessions}: client CPU {median:.1f} ms/case")
        write_result(
            args.json,
            {
                "bench": "throughput-cpu",
                "machine": machine(),
                "turns": args.turns,
                "sessions": args.sessions,
                "cases": args.cases,
                "cpu_per_case_ms": median,
                "cpu_per_case_ms_runs": [run * 1000 for run in runs],
            },
        )
        return
    result = asyncio.run(
        measure(
            args.cases,
            args.concurrency,
            args.delay,
            args.repeats,
            args.cases_per_slot,
            args.jitter,
        )
    )
    write_result(args.json, {"bench": "throughput", "machine": machine(), **result})


if __name__ == "__main__":
    main()
