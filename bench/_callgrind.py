"""Counting instructions under valgrind's callgrind, for the benchmarks whose CPU time is noise.

A script reruns itself under callgrind (`rerun_under_callgrind`), with counting
off at start; in the rerun, `InstructionMeter` starts the count before each
measured run and dumps it after (bench/callgrind_marks.c), reading it back.
"""

from __future__ import annotations

import ctypes
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


class InstructionMeter:
    """Instructions executed by a run, counted by valgrind's callgrind.

    The process runs under ``valgrind --tool=callgrind --instr-atstart=no``
    (see `main`); `bench_begin` / `bench_end` (bench/callgrind_marks.c) start the
    count and dump it to a numbered file, read back here. Counts do not depend
    on the machine's load, so the ratio is stable where CPU time is not.
    """

    unit = "M instr"
    scale = 1e-6

    def __init__(self, library: str, out_file: str) -> None:
        self.lib = ctypes.CDLL(library)
        self.out_file = Path(out_file)
        self.dumps = 0

    async def measure(self, coro: Any, label: str) -> float:
        gc.collect()
        self.lib.bench_begin()
        await coro
        self.lib.bench_end(label.encode())
        return self.last_count()

    def last_count(self) -> float:
        """The instruction count in the newest dump (callgrind numbers them 1, 2, ...)."""
        self.dumps += 1
        dump = Path(f"{self.out_file}.{self.dumps}").read_text()
        found = re.search(r"^summary: (\d+)", dump, re.MULTILINE)
        if found is None:
            raise RuntimeError(f"no instruction count in {self.out_file}.{self.dumps}")
        return float(found.group(1))


def rerun_under_callgrind(script: str, script_args: list[str]) -> int:
    """Reruns `script` with `script_args` under callgrind; its exit code.

    The rerun gets ``--callgrind-child LIBRARY:OUT_FILE`` for its `InstructionMeter`.
    """
    for tool in ("valgrind", "gcc"):
        if shutil.which(tool) is None:
            sys.exit(f"--instructions needs `{tool}` (Debian: apt-get install valgrind gcc)")
    workdir = Path(tempfile.mkdtemp(prefix="adk_eval_callgrind_"))
    library = workdir / "callgrind_marks.so"
    source = Path(__file__).with_name("callgrind_marks.c")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", library, source], check=True)
    out_file = workdir / "callgrind.out"
    command = [
        "valgrind",
        "--quiet",  # valgrind's own banner and summary; the script's errors still show
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out_file}",
        sys.executable,
        script,
        *script_args,
        "--callgrind-child",
        f"{library}:{out_file}",
    ]
    # PYTHONHASHSEED fixed: set and dict iteration orders, so counts, repeat exactly.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    completed = subprocess.run(command, env=env, check=False)
    shutil.rmtree(workdir, ignore_errors=True)
    return completed.returncode
