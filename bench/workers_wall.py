"""Workers in wall time, start-up included: ``adk-eval run`` with 1, 2 and auto workers.

What a user waits for: each figure is the wall time of a fresh ``adk-eval run``
process, from its start to its exit (imports, discovery, the suite, the report),
for the same eval file at ``--workers 1``, ``2`` and ``auto``. Two suites:

* ``scripted``: CPU-bound cases on `ScriptedLlm` (a 5-turn conversation with a
  mocked tool call per turn), the harness and ADK alone;
* ``litellm``: cases through ADK's real `LiteLlm` to a `FakeProviderServer` on
  127.0.0.1 answering at once (3 model calls each): litellm's own import (seconds)
  and client CPU included.

Each suite is sized by two calibration runs (from ``--probe-cases`` cases; ``--sizings``)
to take about each of ``--targets`` seconds (30 and 10) in one process. The worker
counts alternate their order in every repeat; figures are medians, with the
speed-up of each count over one process (the wall times of one repeat divided,
then the median of those ratios). The machine's ceiling is measured in every
repeat too: two one-process runs of half the suite each, at once.

    python bench/workers_wall.py                      # 30 s and 10 s, 5 repeats
    python bench/workers_wall.py --targets 6 3 --repeats 1 --suites scripted

Writes ``bench/results/workers_wall.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, start_provider, write_result

SCRIPTED = """
import os
from google.adk.agents import LlmAgent
from adk_eval import EvalCase, ScriptedUserAgent, TerminateWhen, ToolMock, UserAgents
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(key: str) -> dict:
    '''Looks a key up.'''
    raise RuntimeError("mocked")


agent = LlmAgent(name="worker", tools=[lookup],
                 model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "Done."] * 5))
CASES = [
    EvalCase(name=f"case-{i}", agent=agent, first_message="Go.",
             tool_mocks={"lookup": ToolMock(lambda args, ctx: {"value": args["key"]})},
             user_agents=UserAgents(loop=ScriptedUserAgent(name="u", script=["Again."] * 4)),
             terminate_when=TerminateWhen(max_turns=5))
    for i in range(int(os.environ["ADK_EVAL_BENCH_CASES"]))
]
"""

LITELLM = """
import os
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from adk_eval import EvalCase, ToolMock


def lookup(key: str) -> dict:
    '''Looks a key up.'''
    raise RuntimeError("mocked")


model = LiteLlm(model="openai/fake", api_base=os.environ["ADK_EVAL_BENCH_URL"] + "/v1",
                api_key="bench", _skip_mcp_handler=True)
agent = LlmAgent(name="worker", model=model, tools=[lookup], instruction="Use lookup.")
CASES = [
    EvalCase(name=f"case-{i}", agent=agent, first_message="Go.",
             tool_mocks={"lookup": ToolMock(lambda args, ctx: {"value": args.get("key")})})
    for i in range(int(os.environ["ADK_EVAL_BENCH_CASES"]))
]
"""

COUNTS = ("1", "2", "auto")


def run(folder: Path, suite: str, cases: int, workers: str, env: dict[str, str]) -> float:
    """Wall seconds of one ``adk-eval run`` of `cases` cases on `workers`."""
    command = [sys.executable, "-m", "adk_eval", "run", f"{suite}_eval.py", "--no-store"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--workers", workers],
        cwd=folder,
        env={**env, "ADK_EVAL_BENCH_CASES": str(cases)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0 or f"{cases} passed" not in done.stdout:
        raise SystemExit(f"{suite} on --workers {workers} did not pass:\n{done.stdout[-2000:]}")
    return wall


def ceiling(folder: Path, suite: str, cases: int, env: dict[str, str]) -> float:
    """Wall seconds of two one-process runs of half the suite each, at once: the machine's best.

    Both pay the whole start-up, and the fake provider shares the same cores, as with workers.
    """
    command = [sys.executable, "-m", "adk_eval", "run", f"{suite}_eval.py", "--no-store"]
    started = time.perf_counter()
    halves = [
        subprocess.Popen(
            command,
            cwd=folder,
            env={**env, "ADK_EVAL_BENCH_CASES": str(count)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for count in (cases // 2, cases - cases // 2)
    ]
    codes = [half.wait() for half in halves]
    if any(codes):
        raise SystemExit(f"{suite}: a half-suite run failed ({codes})")
    return time.perf_counter() - started


def measure(
    folder: Path, suite: str, target: float, args: argparse.Namespace, env: dict[str, str]
) -> dict[str, Any]:
    """One suite sized to about `target` seconds in one process, on every worker count."""
    # start-up and one case: what any size pays
    floor = run(folder, suite, 1, "1", env) if args.sizings else 0.0
    cases = args.probe_cases
    for _ in range(args.sizings):  # a case costs more in a longer suite: size it, then again
        wall = run(folder, suite, cases, "1", env)
        per_case = max(wall - floor, 0.01) / max(cases - 1, 1)
        cases = max(4, round((target - floor) / per_case))
    walls: dict[str, list[float]] = {count: [] for count in COUNTS}
    ceilings: list[float] = []
    for repeat in range(args.repeats):
        order = COUNTS if repeat % 2 == 0 else tuple(reversed(COUNTS))
        for count in order:
            walls[count].append(run(folder, suite, cases, count, env))
        ceilings.append(ceiling(folder, suite, cases, env))
    ratios = {
        count: statistics.median(
            one / other for one, other in zip(walls["1"], walls[count], strict=True)
        )
        for count in COUNTS
    }
    return {
        "suite": suite,
        "target_s": target,
        "cases": cases,
        "walls_s": walls,
        "median_s": {count: statistics.median(times) for count, times in walls.items()},
        "speedup": ratios,
        "two_halves_at_once_s": ceilings,
        "ceiling_speedup": statistics.median(
            one / other for one, other in zip(walls["1"], ceilings, strict=True)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=float, nargs="+", default=[30.0, 10.0])
    parser.add_argument("--probe-cases", type=int, default=120)
    parser.add_argument(
        "--sizings",
        type=int,
        default=2,
        help="calibration runs sizing the suite to each target (0: run --probe-cases as is)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--suites", nargs="+", default=["scripted", "litellm"])
    parser.add_argument("--json", default="bench/results/workers_wall.json")
    args = parser.parse_args()
    provider, url = start_provider(0.0)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ADK_EVAL_BENCH_URL": url}
    rows = []
    try:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            (folder / "scripted_eval.py").write_text(SCRIPTED)
            (folder / "litellm_eval.py").write_text(LITELLM)
            for suite in args.suites:
                for target in args.targets:
                    row = measure(folder, suite, target, args, env)
                    rows.append(row)
                    medians = "  ".join(
                        f"--workers {c}: {row['median_s'][c]:5.1f} s ({row['speedup'][c]:.2f}x)"
                        for c in COUNTS
                    )
                    print(
                        f"{suite:8} {row['cases']:5} cases  {medians}  two halves at once: "
                        f"{row['ceiling_speedup']:.2f}x",
                        flush=True,
                    )
    finally:
        provider.terminate()
        provider.wait()
    write_result(args.json, {"machine": machine(), "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
