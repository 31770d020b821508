"""Smoke runs of the benchmarks with tiny sizes, so the scripts do not rot.

They check that each script runs and writes its JSON result with the figures;
the figures themselves are measured by running the scripts (docs/benchmarks.md),
never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_bench(script: str, tmp_path: Path, *args: str) -> dict:
    out = tmp_path / f"{script}.json"
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{script}.py"), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(out.read_text())


def test_overhead_bench(tmp_path):
    result = run_bench("overhead", tmp_path, "--turns", "1", "2", "--repeats", "1")
    assert [row["turns"] for row in result["rows"]] == [1, 2]
    assert all(row["ratio"] > 0 for row in result["rows"])
    assert result["setup_ms"] > 0


def test_throughput_bench(tmp_path):
    result = run_bench(
        "throughput",
        tmp_path,
        "--cases",
        "4",
        "--concurrency",
        "1",
        "2",
        "--delay",
        "0.01",
        "--repeats",
        "1",
    )
    assert [row["concurrency"] for row in result["rows"]] == [1, 2]
    assert all(row["wall_s"] > 0 and row["ideal_s"] > 0 for row in result["rows"])


@pytest.mark.skipif(
    not os.environ.get("ADK_EVAL_ADK_CLI"), reason="needs `adk eval` (ADK_EVAL_ADK_CLI)"
)
def test_adk_eval_side_by_side_bench(tmp_path):
    result = run_bench(
        "versus_adk_eval", tmp_path, "--cases", "2", "--delay", "0.01", "--repeats", "1"
    )
    assert result["adk_eval"]["wall_s"] > 0
    assert result["adk_local_eval_service_p32"]["wall_s"] > 0
    assert result["adk_eval_cli"]["wall_s"] > 0
    assert result["ratio_at_32"] > 0
