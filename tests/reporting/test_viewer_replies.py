"""The viewer's JSON as its response models send it (absent keys stay absent), no API docs."""

from __future__ import annotations

import httpx

from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import HEADER, create_viewer_app

from ..conftest import serving
from .test_viewer import TOKEN, report

RUN_KEYS = [
    "id",
    "created_at",
    "command",
    "total",
    "passed",
    "failed",
    "errors",
    "terminated",
    "repeat",
    "duration_ms",
    "pass_rate",
    "pass_hat_k",
    "cost",
    "live",
]
INTERVAL_KEYS = ["pass_rate_interval", "pass_hat_k_interval"]


def test_a_run_without_case_results_is_listed_without_intervals(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    bare = report({"greets": "passed"}, "2026-11-23T10:00:00")
    bare["results"] = []
    bare["cost"] = {"total_usd": 0.5, "per_passing_run_usd": None}
    store.append(bare, command="bare")
    store.append(report({"greets": "failed"}, "2026-11-24T10:00:00"), command="full")
    with serving(create_viewer_app(tmp_path / "runs.db", TOKEN)) as url:
        full, without = httpx.get(f"{url}/api/runs", headers={HEADER: TOKEN}).json()
    assert list(without) == RUN_KEYS
    assert without["cost"] == {"total_usd": 0.5, "per_passing_run_usd": None}
    assert list(full) == RUN_KEYS + INTERVAL_KEYS
    assert full["cost"] is None
    assert full["live"] is None
    assert list(full["pass_hat_k_interval"]) == ["estimate", "low", "high", "confidence"]


def test_the_models_generate_no_api_docs_to_serve(tmp_path):
    RunStore(tmp_path / "runs.db").append(report({"greets": "passed"}, "2026-11-23"), command="r")
    with serving(create_viewer_app(tmp_path / "runs.db", TOKEN)) as url:
        for path in ["/openapi.json", "/docs", "/redoc"]:
            assert httpx.get(f"{url}{path}", headers={HEADER: TOKEN}).status_code == 404, path
