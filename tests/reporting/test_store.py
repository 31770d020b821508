"""RunStore: append-only SQLite; foreign or newer files are never touched."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from adk_eval.reporting import RunStore, RunStoreError


def report(passed: int = 1, total: int = 1) -> dict:
    return {
        "created_at": "2026-11-22T10:00:00+00:00",
        "repeat": 1,
        "summary": {
            "total": total,
            "passed": passed,
            "failed": total - passed,
            "errors": 0,
            "terminated": 0,
        },
        "pass_rate": passed / total,
        "duration_ms": 12.5,
        "results": [
            {
                "name": "c",
                "attempt": 0,
                "status": "passed",
                "outcome": "passed",
                "turns": 1,
                "duration_ms": 12.5,
                "metrics": {},
            }
        ],
        "cases": [],
    }


def test_append_load_and_list(tmp_path):
    store = RunStore(tmp_path / "deep" / "runs.db")
    first = store.append(report(), command="adk-eval run a")
    second = store.append(report(0), command="adk-eval run b")
    assert (first, second) == (1, 2)
    assert [r.command for r in store.runs()] == ["adk-eval run b", "adk-eval run a"]
    assert store.load(1)["pass_rate"] == 1.0
    assert store.last_two() == (1, 2)


def test_missing_runs_and_files(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    with pytest.raises(RunStoreError, match="no runs stored yet"):
        store.runs()
    store.append(report(), command="x")
    with pytest.raises(RunStoreError, match=r"no run 7 in .*\(latest runs: 1\)"):
        store.load(7)
    with pytest.raises(RunStoreError, match=r"needs two stored runs that finished; .* has 1"):
        store.last_two()


def test_a_foreign_sqlite_file_is_left_untouched(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (id INTEGER)")
    before = path.read_bytes()
    with pytest.raises(RunStoreError, match=r"not an adk-eval runs database \(tables: users\)"):
        RunStore(path).append(report(), command="x")
    assert path.read_bytes() == before


def test_a_database_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "runs.db"
    RunStore(path).append(report(), command="x")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(RunStoreError, match="written by a newer adk-eval"):
        RunStore(path).runs()


def test_a_run_stored_as_it_starts_is_running_then_replaced_whole_at_its_end(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    store.append(report(), command="adk-eval run earlier")
    started = {**report(0, 2), "results": []}
    run_id = store.begin(started, command="adk-eval run now")

    assert [(r.id, r.live) for r in store.runs()] == [(run_id, "running"), (1, None)]
    assert [point.run_id for point in store.history("c")] == [1]  # none of its cases yet
    assert store.load(run_id)["running"]["pid"] == os.getpid()

    store.append(report(1, 2), command="adk-eval run now", run_id=run_id)  # the end

    (latest, _) = store.runs()
    assert (latest.id, latest.live, latest.total, latest.passed) == (run_id, None, 2, 1)
    assert "running" not in store.load(run_id)
    assert [point.run_id for point in store.history("c")] == [1, run_id]  # its cases, once


def test_a_run_whose_process_died_is_abandoned_and_compare_skips_a_running_run(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    store.append(report(), command="a")
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = store.append({**report(), "running": {"pid": int(gone.stdout)}}, command="b")
    assert store.runs()[0].live == "abandoned"
    assert store.last_two() == (1, dead)  # it ended: compare may use what it stored

    store.begin(report(), command="c")  # this process: running
    assert store.last_two() == (1, dead)
