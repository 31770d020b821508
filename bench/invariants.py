"""What live invariants cost a run: CPU time of one run with and without them.

One case makes ``--calls`` tool calls (a mock answers each) and then answers.
It runs without invariants and with seven (one of each built-in rule: calls,
order, counts, errors, state, arguments, what the agent says), alternately,
``--repeats`` times; the figures are the median CPU time of each and their
ratio. The rules never break, so both runs do the same work besides checking.
CPU time on a shared 2-core VM is noisy at this size: ``--instructions`` counts
instructions under valgrind's callgrind instead (as `overhead.py` does).

    python bench/invariants.py                    # 50 calls, 15 repeats, CPU time
    python bench/invariants.py --instructions --repeats 3

Writes ``bench/results/invariants.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from typing import Any

from _callgrind import InstructionMeter, rerun_under_callgrind
from _common import machine, write_result
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, TerminateWhen, ToolMock, run_eval
from adk_eval.metrics import (
    at_most,
    never,
    never_called,
    never_in_arguments,
    never_said,
    no_tool_error_twice,
    state_matches,
)
from adk_eval.testing import ScriptedLlm, tool_call

RULES = [
    never_called("delete_account"),
    never("pay", before="verify_identity"),
    at_most("search", 10_000),
    no_tool_error_twice(),
    never(state_matches({"session.refunded": True})),
    never_in_arguments("4111-1111-1111-1111"),
    never_said("ADK-EVAL-CANARY"),
]


def search(query: str) -> dict:
    """Searches."""
    raise AssertionError("mocked")


def case(calls: int, invariants: list) -> EvalCase:
    steps = [tool_call("search", {"query": f"q{i}"}) for i in range(calls)] + ["done"]
    return EvalCase(
        name="bench",
        agent=LlmAgent(name="a", model=ScriptedLlm(steps), tools=[search]),
        first_message="go",
        tool_mocks={"search": ToolMock.returning({"hits": 3, "text": "x" * 200})},
        invariants=invariants,
        terminate_when=TerminateWhen(max_model_calls=calls + 10),
    )


async def run_once(calls: int, invariants: list) -> None:
    result = await run_eval(case(calls, invariants))
    assert result.status == "passed", result.explain()


async def cost(meter: Any, calls: int, invariants: list, label: str) -> float:
    """CPU seconds (no meter) or instructions (callgrind's meter) of one run."""
    gc.collect()
    if meter is not None:
        return float(await meter.measure(run_once(calls, invariants), label))
    started = time.process_time()
    await run_once(calls, invariants)
    return time.process_time() - started


async def measure(calls: int, repeats: int, meter: Any = None) -> dict:
    import statistics

    await run_once(calls, RULES)  # warm-up: imports, first-call caches
    without, with_rules = [], []
    for index in range(repeats):
        without.append(await cost(meter, calls, [], f"without-{index}"))
        with_rules.append(await cost(meter, calls, RULES, f"with-{index}"))
    a, b = statistics.median(without), statistics.median(with_rules)
    unit = "instructions" if meter is not None else "cpu_s"
    return {
        "calls": calls,
        "repeats": repeats,
        "invariants": len(RULES),
        "unit": unit,
        "without": a,
        "with": b,
        "ratio": b / a,
        "per_call": (b - a) / calls,
    }


def under_callgrind(args: argparse.Namespace) -> int:
    """Reruns this script under callgrind, with the library that marks each run."""
    script_args = ["--calls", str(args.calls), "--repeats", str(args.repeats)]
    return rerun_under_callgrind(__file__, [*script_args, "--json", args.json])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", default="bench/results/invariants.json")
    parser.add_argument("--instructions", action="store_true", help="count instructions")
    parser.add_argument("--callgrind-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.instructions:
        sys.exit(under_callgrind(args))
    meter = None
    if args.callgrind_child:
        meter = InstructionMeter(*args.callgrind_child.split(":", 1))
    figures = asyncio.run(measure(args.calls, args.repeats, meter))
    print(
        f"{figures['calls']} calls, {figures['unit']}: {figures['without']:.4g} without "
        f"invariants, {figures['with']:.4g} with {figures['invariants']} "
        f"(x{figures['ratio']:.3f}; {figures['per_call']:.4g} per call)"
    )
    write_result(args.json, {"machine": machine(), **figures})


if __name__ == "__main__":
    main()
