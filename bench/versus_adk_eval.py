"""The same EvalSet scored by ADK's `adk eval` and by `adk-eval run` (trajectory metric).

A golden is exported by this project (`to_golden` + `append_golden`) for
`--cases` conversations of `bench/adk_agent` (LiteLlm; 3 model calls each)
against a fake provider on 127.0.0.1 with no delay. Then both tools score the
whole EvalSet against a fake provider answering after `--delay` seconds:

* ``adk eval bench/adk_agent SET`` (needs `google-adk[eval]`: ``ADK_EVAL_ADK_CLI``
  names its ``adk``; `make test` builds it in ``.venv-adkeval``), with ADK's
  default parallelism (LocalEvalService: 4);
* ADK's `LocalEvalService` with its parallelism raised to 32 (``adk eval`` has no
  option for it: ``bench/adk_local_eval.py``, run by the python next to that ``adk``);
* ``adk-eval run bench/golden_cases.py`` at concurrency 4 and 32 (matching each).

Both do the same work: ADK's tool-trajectory score and its ROUGE-1 response
match per case. So ``adk-eval run`` runs in the same environment as ``adk eval``
(the python next to that ``adk``, where `google-adk[eval]` gives ROUGE), not in
this one, where the response match would be "not applicable" and cost nothing.
Both are timed as subprocesses, start-up included, `--repeats` times (median).

    ADK_EVAL_ADK_CLI=.venv-adkeval/bin/adk python bench/versus_adk_eval.py --cases 36
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, start_provider, write_result

from adk_eval import EvalCase, TerminateWhen, run_eval
from adk_eval.goldens import append_golden, to_golden

HERE = Path(__file__).resolve().parent


async def export_goldens(url: str, count: int, path: Path) -> None:
    os.environ["BENCH_PROVIDER_URL"] = url
    sys.path.insert(0, str(HERE))
    from adk_agent.agent import lookup, root_agent

    for index in range(count):
        result = await run_eval(
            EvalCase(
                name=f"golden-{index}",
                agent=root_agent,
                tool_mocks={"lookup": lookup},
                first_message=f"Look up item {index}.",
                terminate_when=TerminateWhen(max_turns=1),
            )
        )
        assert result.status == "passed", result.explain()
        golden = to_golden(result, app_name="adk_agent")
        append_golden(path, golden, "adk_agent")


def our_cli(concurrency: int, python: str) -> list[str]:
    """``adk-eval run`` on the goldens at `concurrency`, by `python`."""
    return [
        python,
        "-m",
        "adk_eval",
        "run",
        str(HERE / "golden_cases.py"),
        "--concurrency",
        str(concurrency),
        "--no-store",
    ]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    output = completed.stdout + completed.stderr
    if completed.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed:\n{output[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=36)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default="bench/results/versus_adk_eval.json")
    args = parser.parse_args()
    adk = os.environ.get("ADK_EVAL_ADK_CLI") or "adk"
    folder = Path(tempfile.mkdtemp(prefix="bench-evalset-"))
    eval_set = folder / "adk_agent.evalset.json"
    fast, fast_url = start_provider(0.0)
    slow, slow_url = start_provider(args.delay)
    try:
        asyncio.run(export_goldens(fast_url, args.cases, eval_set))
        env = {
            **os.environ,
            "BENCH_PROVIDER_URL": slow_url,
            "BENCH_EVALSET": str(eval_set),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PYTHONPATH": str(HERE.parent),
        }
        adk_python = str(Path(shutil.which(adk) or adk).with_name("python"))
        commands = {
            "adk_eval": [adk, "eval", str(HERE / "adk_agent"), str(eval_set)],
            "adk_local_eval_service_p32": [
                adk_python,
                str(HERE / "adk_local_eval.py"),
                str(HERE / "adk_agent"),
                str(eval_set),
                "--parallelism",
                "32",
            ],
            "adk_eval_cli": our_cli(4, adk_python),
            "adk_eval_cli_c32": our_cli(32, adk_python),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for index in range(args.repeats):
            order = list(commands) if index % 2 == 0 else list(reversed(commands))
            for name in order:
                times[name].append(timed(commands[name], env))
        result: dict[str, Any] = {
            name: {"wall_s": statistics.median(values), "runs_s": values}
            for name, values in times.items()
        }
        base = result["adk_eval"]["wall_s"]
        for name, row in result.items():
            row["ratio_to_adk_eval"] = row["wall_s"] / base
            print(f"{name:<28} {row['wall_s']:7.2f}s   x{row['ratio_to_adk_eval']:.2f} of adk eval")
        matched = (
            result["adk_eval_cli_c32"]["wall_s"] / result["adk_local_eval_service_p32"]["wall_s"]
        )
        result["ratio_at_32"] = matched
        print(f"at 32 in parallel: adk-eval run takes x{matched:.2f} of LocalEvalService's time")
        ideal4 = args.cases * 3 * args.delay / 4
        print(f"ideal at parallelism 4: {ideal4:.2f}s ({args.cases} x 3 x {args.delay}s / 4)")
    finally:
        for process in (fast, slow):
            process.terminate()
            process.wait(10)
    write_result(
        args.json,
        {
            "bench": "versus_adk_eval",
            "machine": machine(),
            "cases": args.cases,
            "delay_s": args.delay,
            "ideal_at_4_s": ideal4,
            **result,
        },
    )


if __name__ == "__main__":
    main()
