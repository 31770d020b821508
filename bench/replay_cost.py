"""What a replayed model call costs against a scripted one, in CPU.

`--cases` conversations of `bench/adk_agent`'s agent (tool `lookup`, one turn, 3
model calls: 2 tool calls and a text) are recorded once with
``ModelCalls(record=DIR)`` against the fake provider (`_common.start_provider`);
then nothing answers at the address the agent names (in process the provider is
stopped; through the CLI the agent names a port where nothing listens). Two runs
of the same suite are compared:

* **replay**: the same agent, ``ModelCalls(replay=DIR)``: every call answered
  from the cassettes, none reaching the network;
* **scripted**: the same agent with its model swapped for a `ScriptedLlm` giving
  the same three answers (what a replay is meant to cost no more than).

Both wires: LiteLlm (``openai/fake``, `bench/adk_agent`) and ADK's `Gemini` class
(google.genai), each recorded against the same fake provider. Measured in this
process (`run_eval_suite`, CPU `process_time`, after a 5-case warm-up) and
through the CLI (``adk-eval run FILE --no-store [--replay-models DIR]``: CPU of
the child, `getrusage`, start-up included), `--repeats` times with the two
sides interleaved (the order alternates), medians; the 1-minute load average
before each measurement is recorded (the machine may be shared).

    .venv/bin/python bench/replay_cost.py --cases 200 --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import machine, start_provider, write_result

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CASES_FILE = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {bench!r})
    from replay_cost import cases
    CASES = cases(os.environ["BENCH_WIRE"], os.environ["BENCH_MODE"], int(os.environ["BENCH_N"]))
    """
)


def agent(wire: str, mode: str) -> Any:
    """The bench agent on `wire` (``litellm`` or ``gemini``), or on a `ScriptedLlm` (`mode`)."""
    from adk_agent.agent import root_agent
    from google.adk.models.google_llm import Gemini

    from adk_eval.testing import ScriptedLlm, tool_call

    if mode == "scripted":
        steps = [tool_call("lookup", {"key": f"k{i}"}) for i in range(2)]
        return root_agent.clone(update={"model": ScriptedLlm([*steps, "done"])})
    if wire == "litellm":
        return root_agent
    base = os.environ.get("BENCH_PROVIDER_URL", "http://127.0.0.1:9")
    model = Gemini(model="gemini-2.5-flash", base_url=base, client_kwargs={"api_key": "bench"})
    return root_agent.clone(update={"model": model})


def cases(wire: str, mode: str, count: int) -> list[Any]:
    """`count` one-turn cases of the bench agent (see `agent`)."""
    from adk_agent.agent import lookup

    from adk_eval import EvalCase, TerminateWhen

    system = agent(wire, mode)
    return [
        EvalCase(
            name=f"c{index}",
            agent=system,
            tool_mocks={"lookup": lookup},
            first_message=f"Look up item {index}.",
            terminate_when=TerminateWhen(max_turns=1),
        )
        for index in range(count)
    ]


async def suite_cpu(suite: list[Any], tapes: Path | None) -> float:
    """CPU seconds of one `run_eval_suite` of `suite` (replaying `tapes` when given)."""
    from adk_eval import run_eval_suite
    from adk_eval.models import ModelCalls

    calls = ModelCalls(replay=tapes) if tapes is not None else None
    started = time.process_time()
    result = await run_eval_suite(suite, model_calls=calls)
    spent = time.process_time() - started
    bad = [r for r in result.results if r.status != "passed"]
    if bad:
        raise SystemExit(bad[0].explain())
    return spent


async def record(wire: str, count: int, tapes: Path) -> None:
    from adk_eval import run_eval_suite
    from adk_eval.models import ModelCalls

    result = await run_eval_suite(cases(wire, "llm", count), model_calls=ModelCalls(record=tapes))
    bad = [r for r in result.results if r.status != "passed"]
    if bad:
        raise SystemExit(bad[0].explain())


def interleaved(
    sides: dict[str, Callable[[], float]], repeats: int
) -> tuple[dict[str, list[float]], list[float]]:
    """Each side's measurements, the order alternating per repeat; the loads before each."""
    runs: dict[str, list[float]] = {name: [] for name in sides}
    loads: list[float] = []
    for index in range(repeats):
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        for name in order:
            loads.append(os.getloadavg()[0])
            runs[name].append(sides[name]())
    return runs, loads


def row(runs: dict[str, list[float]], loads: list[float], calls: int) -> dict[str, Any]:
    scripted, replay = (statistics.median(runs[name]) for name in ("scripted", "replay"))
    return {
        "scripted_cpu_s": scripted,
        "replay_cpu_s": replay,
        "ratio": replay / scripted,
        "extra_ms_per_call": (replay - scripted) / calls * 1e3,
        "runs": runs,
        "load_1min": {"min": min(loads), "max": max(loads)},
    }


def in_process(wire: str, count: int, repeats: int, tapes: Path) -> dict[str, Any]:
    """Scripted against replay, `run_eval_suite` in this process."""
    scripted, replayed = cases(wire, "scripted", count), cases(wire, "llm", count)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(suite_cpu(scripted[:5], None))
        loop.run_until_complete(suite_cpu(replayed[:5], tapes))
        sides = {
            "scripted": lambda: loop.run_until_complete(suite_cpu(scripted, None)),
            "replay": lambda: loop.run_until_complete(suite_cpu(replayed, tapes)),
        }
        return row(*interleaved(sides, repeats), calls=3 * count)
    finally:
        loop.close()


def child_cpu(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds (user + system) of `command` run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def through_cli(wire: str, count: int, repeats: int, url: str, folder: Path) -> dict[str, Any]:
    """Scripted against replay, each ``adk-eval run`` a process of its own."""
    cases_file = folder / f"{wire}_cases.py"
    cases_file.write_text(CASES_FILE.format(bench=str(HERE)))
    tapes = folder / f"{wire}-cli-tapes"
    env = {**os.environ, "BENCH_WIRE": wire, "BENCH_N": str(count)}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", BENCH_PROVIDER_URL=url)
    run = [sys.executable, "-m", "adk_eval", "run", cases_file.name, "--no-store"]
    child_cpu([*run, "--record-models", str(tapes)], {**env, "BENCH_MODE": "llm"}, folder)
    dead = {**env, "BENCH_PROVIDER_URL": "http://127.0.0.1:9"}  # nothing answers there
    sides = {
        "scripted": lambda: child_cpu(run, {**dead, "BENCH_MODE": "scripted"}, folder),
        "replay": lambda: child_cpu(
            [*run, "--replay-models", str(tapes)], {**dead, "BENCH_MODE": "llm"}, folder
        ),
    }
    return row(*interleaved(sides, repeats), calls=3 * count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--cli-cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--wires", nargs="+", default=["litellm", "gemini"])
    parser.add_argument("--no-cli", action="store_true", help="in process only")
    parser.add_argument("--json", default="bench/results/replay_cost.json")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    folder = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    result: dict[str, Any] = {"bench": "replay_cost", "machine": machine(), "cases": args.cases}
    for wire in args.wires:
        provider, url = start_provider(0.0, calls=2)
        os.environ["BENCH_PROVIDER_URL"] = url
        tapes = folder / f"{wire}-tapes"
        try:
            asyncio.run(record(wire, args.cases, tapes))
            if not args.no_cli:
                cli = through_cli(wire, args.cli_cases, args.repeats, url, folder)
        finally:
            provider.terminate()
            provider.wait(10)
        os.environ["BENCH_PROVIDER_URL"] = "http://127.0.0.1:9"  # stopped: nothing answers
        result[f"{wire}_in_process"] = here = in_process(wire, args.cases, args.repeats, tapes)
        report(f"{wire}, in process, {args.cases} cases", here)
        if not args.no_cli:
            result[f"{wire}_cli"] = cli
            report(f"{wire}, adk-eval run, {args.cli_cases} cases", cli)
    write_result(args.json, result)


def report(label: str, figures: dict[str, Any]) -> None:
    load = figures["load_1min"]
    print(
        f"{label:<36} scripted {figures['scripted_cpu_s']:6.2f}s  replay "
        f"{figures['replay_cpu_s']:6.2f}s  x{figures['ratio']:.2f}  "
        f"{figures['extra_ms_per_call']:+.3f} ms/call  (load {load['min']:.1f}-{load['max']:.1f})"
    )


if __name__ == "__main__":
    main()
