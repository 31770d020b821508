"""The test loop: how long `make test-fast` (or `make test`) takes, first run after a clone.

Clones this repository's committed HEAD into a temporary folder, points the
clone's ``.venv`` at an existing, installed venv (``--venv``, default this
checkout's: the install is left out, the clone's own sources are what the
tests import, through ``PYTHONPATH``), and runs ``make TARGET`` there
``--repeats`` times, each in a fresh clone, so no bytecode or pytest cache
helps. Records the wall time, the CPU time of every process the run waited
for (user + system), the load average before each repeat, and pytest's own
summary line.

    python bench/test_loop.py                        # make test-fast, 3 fresh clones
    python bench/test_loop.py --target test --repeats 1

`make test` runs lint and the `adk eval` venv's install too (both stamps are
honoured: an installed ``.venv-adkeval`` is linked like ``.venv``). Writes
``bench/results/test_loop.json``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, write_result

ROOT = Path(__file__).resolve().parents[1]


def fresh_clone(folder: Path, venvs: list[Path]) -> Path:
    """A clone of HEAD in `folder`, its venvs linked to the installed ones."""
    clone = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    for venv in venvs:
        if venv.exists():
            (clone / venv.name).symlink_to(venv)
    return clone


def timed(clone: Path, target: str) -> dict[str, Any]:
    """One ``make TARGET`` in `clone`: wall, CPU of the processes waited for, summary."""
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # The linked venvs count as installed: ``-o`` keeps make from reinstalling into them.
    keep = ["-o", ".venv/.installed-stamp", "-o", ".venv-adkeval/.installed-stamp"]
    completed = subprocess.run(
        ["make", *keep, target], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = [line for line in completed.stdout.splitlines() if re.search(r" in [\d.]+s", line)]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "load_1min": load,
        "exit": completed.returncode,
        "summary": summary[-1].strip("= ") if summary else completed.stderr[-500:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="test-fast", choices=["test-fast", "test"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv")
    parser.add_argument("--json", default="bench/results/test_loop.json")
    args = parser.parse_args()
    venvs = [args.venv.resolve(), args.venv.resolve().with_name(".venv-adkeval")]
    runs = []
    for index in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench-test-loop-") as folder:
            run = timed(fresh_clone(Path(folder), venvs), args.target)
        runs.append(run)
        print(
            f"{index + 1}: make {args.target}: {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} s CPU"
            f" (load {run['load_1min']:.2f} before; exit {run['exit']}): {run['summary']}"
        )
        if run["exit"] != 0:
            sys.exit(f"make {args.target} failed in a fresh clone: {run['summary']}")
    wall = statistics.median(r["wall_s"] for r in runs)
    cpu = statistics.median(r["cpu_s"] for r in runs)
    print(f"median: {wall:.1f} s wall, {cpu:.1f} s CPU ({os.cpu_count()} cores)")
    write_result(
        args.json,
        {
            "bench": "test_loop",
            "machine": machine(),
            "target": args.target,
            "runs": runs,
            "median_wall_s": wall,
            "median_cpu_s": cpu,
        },
    )


if __name__ == "__main__":
    main()
