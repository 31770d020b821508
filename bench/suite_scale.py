"""A suite's cost per case as it grows: CPU per case and memory kept per finished case.

Runs ``--cases`` N one-turn scripted conversations (a tool call answered by a
mock, a scripted user, two metrics) with `run_eval_suite` in this process, at
concurrency 8, for each N in its own fresh process, and reports the CPU time
per case and how much resident memory grew per finished case (the suite's
results are kept, as `run_eval_suite` returns them). Both figures should stay
flat as N grows: a suite of 100,000 cases must fit in memory.

    python bench/suite_scale.py                      # 100, 1,000 and 10,000 cases
    python bench/suite_scale.py --cases 100 1000

Writes ``bench/results/suite_scale.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
from typing import Any

from _common import machine, rss_mib, write_result
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents, run_eval_suite
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(key: str) -> dict:
    """Looks a key up (mocked)."""
    raise AssertionError("mocked")


def cases(count: int) -> list[EvalCase]:
    agent = LlmAgent(
        name="scale_agent",
        model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "Done."] * 2),
        tools=[lookup],
    )
    mock = ToolMock(lambda args, ctx: {"value": args["key"].upper()})
    metrics = [
        state_metric("n", "session", "n", lambda v: v == 0),
        event_count_metric("lookups", "tool_call", lambda c: c.name == "lookup", lambda n: n > 0),
    ]
    return [
        EvalCase(
            name=f"case-{index}",
            agent=agent,
            tool_mocks={"lookup": mock},
            user_agents=UserAgents(loop=ScriptedUserAgent(name="patient", script=[])),
            initial_state={"session": {"n": 0}},
            first_message="Start.",
            metrics=metrics,
        )
        for index in range(count)
    ]


async def one_size(count: int) -> dict[str, Any]:
    await run_eval_suite(cases(8), max_concurrency=8)  # warm-up: imports, first-call caches
    gc.collect()
    before = rss_mib()
    started = time.process_time()
    suite = await run_eval_suite(cases(count), max_concurrency=8)
    cpu = time.process_time() - started
    gc.collect()
    after = rss_mib()
    assert suite.summary["passed"] == count, suite.summary
    return {
        "cases": count,
        "cpu_ms_per_case": cpu / count * 1000,
        "rss_growth_mib": after - before,
        "kib_per_case": (after - before) * 1024 / count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[100, 1000, 10_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--json", default="bench/results/suite_scale.json")
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(asyncio.run(one_size(args.one))))
        return
    rows = []
    for count in args.cases:
        completed = subprocess.run(
            [sys.executable, __file__, "--one", str(count)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(completed.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"{count:>7} cases  {row['cpu_ms_per_case']:6.2f} ms CPU per case  "
            f"{row['kib_per_case']:7.2f} KiB kept per case ({row['rss_growth_mib']:.1f} MiB)",
            flush=True,
        )
    write_result(args.json, {"bench": "suite_scale", "machine": machine(), "rows": rows})


if __name__ == "__main__":
    main()
