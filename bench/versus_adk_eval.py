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
Both are timed as subprocesses, start-up included, `--repeats` times in alternating
order (medians): wall time, and CPU (user + system of the process and its children,
from `getrusage`), with the 1-minute load average before each run recorded (the
machine is shared: a figure taken under load says so). Before the timed runs, one
check run of ``adk-eval run`` writes its JSON report and the bench stops unless every
case's ROUGE response match (``golden_responses``) was computed: equal work.

    ADK_EVAL_ADK_CLI=.venv-adkeval/bin/adk python bench/versus_adk_eval.py --cases 36
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
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


def timed(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Wall and CPU seconds of `command` (start-up included), and the load it started under."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = completed.stdout + completed.stderr
    if completed.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed:\n{output[-3000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": elapsed, "cpu_s": cpu, "load": load}


def check_equal_work(command: list[str], env: dict[str, str], folder: Path) -> None:
    """Stops unless every case of `command`'s run computed ADK's ROUGE response match."""
    report = folder / "check.json"
    timed([*command, "--json", str(report)], env)
    results = json.loads(report.read_text())["results"]
    missing = [
        result["name"]
        for result in results
        if (result["metrics"].get("golden_responses") or {}).get("score") is None
    ]
    if missing or not results:
        raise SystemExit(
            f"adk-eval run did not compute ROUGE for {missing or 'any case'}: not equal work "
            "(run with the python that has google-adk[eval])"
        )


def summary(runs: list[dict[str, float]]) -> dict[str, Any]:
    """Medians of wall and CPU over the repeats, and every run."""
    return {
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "runs": runs,
    }


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
        check_equal_work(commands["adk_eval_cli"], env, folder)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        for index in range(args.repeats):
            order = list(commands) if index % 2 == 0 else list(reversed(commands))
            for name in order:
                runs[name].append(timed(commands[name], env))
        result: dict[str, Any] = {name: summary(values) for name, values in runs.items()}
        base = result["adk_eval"]
        for name, row in result.items():
            row["ratio_to_adk_eval"] = row["wall_s"] / base["wall_s"]
            row["cpu_ratio_to_adk_eval"] = row["cpu_s"] / base["cpu_s"]
            print(
                f"{name:<28} wall {row['wall_s']:6.2f}s x{row['ratio_to_adk_eval']:.2f}"
                f"   CPU {row['cpu_s']:6.2f}s x{row['cpu_ratio_to_adk_eval']:.2f} of adk eval"
            )
        matched = (
            result["adk_eval_cli_c32"]["wall_s"] / result["adk_local_eval_service_p32"]["wall_s"]
        )
        result["ratio_at_32"] = matched
        print(f"at 32 in parallel: adk-eval run takes x{matched:.2f} of LocalEvalService's time")
        loads = [r["load"] for values in runs.values() for r in values]
        result["load_1min"] = {"min": min(loads), "max": max(loads)}
        print(f"load average (1 min) before the runs: {min(loads):.2f}-{max(loads):.2f}")
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
