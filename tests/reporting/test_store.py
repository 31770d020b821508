"""RunStore: append-only SQLite; foreign or newer files are never touched."""

from __future__ import annotations

import sqlite3

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
    with pytest.raises(RunStoreError, match=r"compare needs two stored runs; .* has 1"):
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
