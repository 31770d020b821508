"""Shared by the benchmarks: the machine description and the JSON result file."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": sys.version.split()[0], "cpus": os.cpu_count(), "cpu": cpu}


def rss_mib() -> float:
    """This process's resident memory, in MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def write_result(path: str, result: dict[str, Any]) -> None:
    """Writes the JSON result (and says where)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {target}")


def start_provider(
    delay: float, calls: int = 2, jitter: float = 0.0
) -> tuple[subprocess.Popen[str], str]:
    """A `FakeProviderServer` in its own process: `calls` tool calls, then text; its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adk_eval.fake_provider",
            "--delay",
            str(delay),
            "--calls",
            str(calls),
            "--jitter",
            str(jitter),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()
