"""Start-up: the wall time a user waits for each command, against the floor of importing ADK.

Each figure is a fresh process, timed from its start to its exit, as a user
waits for it. The floor is ``python -c "import google.adk.agents,
google.adk.runners"``: what any tool that runs an ADK agent pays before it can
do anything. The commands are measured interleaved with the floor in every
repeat (so a busy machine slows both), and each row is the median of the
repeats and its ratio to the floor's median:

* ``adk-eval --help``, ``adk-eval run --help``, ``adk-eval runs`` (an empty
  runs database) and ``adk-eval compare --help``: commands that should not
  import ADK at all (target: at most 0.25x the floor);
* ``adk-eval run`` of one trivial scripted case (target: at most 1.4x the floor).

    python bench/startup.py                 # 9 repeats
    python bench/startup.py --repeats 3 --json out.json

Writes ``bench/results/startup.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, write_result

CASE = """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

hello = EvalCase(name="hello", agent=LlmAgent(name="a", model=ScriptedLlm(["Hi."])),
                 first_message="hi")
"""

FLOOR = [sys.executable, "-c", "import google.adk.agents, google.adk.runners"]


def commands(folder: Path) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "adk_eval"]
    db = str(folder / "none.db")
    return {
        "adk-eval --help": [*cli, "--help"],
        "adk-eval run --help": [*cli, "run", "--help"],
        "adk-eval runs": [*cli, "runs", "--db", db],
        "adk-eval compare --help": [*cli, "compare", "--help"],
        "adk-eval run (one trivial case)": [*cli, "run", "hello_eval.py", "--no-store"],
    }


def wall(command: list[str], folder: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=folder, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default="bench/results/startup.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "hello_eval.py").write_text(CASE)
        done = subprocess.run(
            [sys.executable, "-m", "adk_eval", "run", "hello_eval.py", "--no-store"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"the trivial case did not pass:\n{done.stdout}{done.stderr}")
        wall(FLOOR, folder)  # the first import fills the bytecode caches
        times: dict[str, list[float]] = {"floor": []}
        for _ in range(args.repeats):
            times["floor"].append(wall(FLOOR, folder))
            for name, command in commands(folder).items():
                times.setdefault(name, []).append(wall(command, folder))
    floor = statistics.median(times["floor"])
    rows = []
    print(f"ADK import floor: {floor:.3f} s (median of {args.repeats})")
    for name, samples in times.items():
        if name == "floor":
            continue
        median = statistics.median(samples)
        rows.append({"command": name, "wall_s": median, "ratio_to_floor": median / floor})
        print(f"{name:34} {median:6.3f} s  {median / floor:5.2f}x the floor")
    write_result(
        args.json,
        {"machine": machine(), "repeats": args.repeats, "floor_s": floor, "rows": rows},
    )


if __name__ == "__main__":
    main()
