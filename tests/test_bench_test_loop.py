"""The test-loop bench runs `make test-fast` in a fresh clone and reads pytest's summary."""

from __future__ import annotations

import re

import pytest

from .test_bench import run_bench


@pytest.mark.slow
def test_test_loop_bench_times_make_in_a_fresh_clone(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_ADDOPTS", "tests/test_seeds.py -p no:randomly")
    result = run_bench("test_loop", tmp_path, "--repeats", "1")
    (run,) = result["runs"]
    assert run["exit"] == 0
    assert re.search(r"\d+ passed", run["summary"]), run["summary"]
    assert run["cpu_s"] > 0
    assert run["wall_s"] > 0
