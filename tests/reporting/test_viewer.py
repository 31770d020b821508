"""`adk-eval view`: the stored runs over the studio's server conventions, driven in Chromium."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import HEADER, create_viewer_app

from ..conftest import serving
from .test_html import HOSTILE

TOKEN = "viewer-token-0123456789"
SHOTS = os.environ.get("ADK_EVAL_SCREENSHOTS")


def shot(page, name: str) -> None:
    """With ADK_EVAL_SCREENSHOTS=docs/images, saves the screen there (for the docs)."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def report(outcomes: dict[str, str], created: str) -> dict:
    """A small stored report: one run per case with the given outcomes."""
    results = [
        {
            "name": name,
            "attempt": 0,
            "status": outcome,
            "outcome": outcome,
            "xfail": None,
            "turns": 1,
            "duration_ms": 10.0,
            "termination_reason": None,
            "termination": None,
            "error": None,
            "metrics": {
                "said_hello": {
                    "passed": outcome == "passed",
                    "score": 1.0 if outcome == "passed" else 0.0,
                    "value": None,
                    "evidence": [f"{name} said {HOSTILE}"],
                    "error": None,
                    "applicable": True,
                }
            },
            "token_usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
            "user_agent_token_usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            "final_state": {},
            "transcript": "",
            "conversation": [
                {"kind": "message", "role": "user", "text": "hi", "author": "user", "path": []},
                {
                    "kind": "message",
                    "role": "agent",
                    "text": HOSTILE,
                    "author": "greeter",
                    "path": [],
                },
            ],
        }
        for name, outcome in outcomes.items()
    ]
    passed = sum(o == "passed" for o in outcomes.values())
    return {
        "schema": "adk-eval.report",
        "version": 1,
        "created_at": created,
        "adk_eval_version": "0.1.0",
        "repeat": 1,
        "duration_ms": 20.0,
        "passed": passed == len(outcomes),
        "pass_rate": passed / len(outcomes),
        "stopped_early": False,
        "summary": {
            "total": len(outcomes),
            "passed": passed,
            "failed": len(outcomes) - passed,
            "errors": 0,
            "terminated": 0,
            "xfailed": 0,
            "xpassed": 0,
            "not_run": 0,
        },
        "not_run": [],
        "cases": [
            {
                "name": name,
                "description": None,
                "xfail": None,
                "repeat": 1,
                "runs": 1,
                "passes": int(outcome == "passed"),
                "pass_rate": float(outcome == "passed"),
                "pass_hat_k": outcome == "passed",
                "pass_at_k": outcome == "passed",
                "label": "stable-pass" if outcome == "passed" else "stable-fail",
            }
            for name, outcome in outcomes.items()
        ],
        "results": results,
    }


@pytest.fixture
def db(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    store.append(
        report({"greets": "passed", "waves": "passed"}, "2026-11-20T10:00:00"), command="run 1"
    )
    store.append(
        report({"greets": "failed", "waves": "passed"}, "2026-11-21T10:00:00"), command="run 2"
    )
    return tmp_path / "runs.db"


def test_every_request_needs_the_token_and_the_api_serves_runs(db):
    with serving(create_viewer_app(db, TOKEN)) as url:
        assert httpx.get(f"{url}/api/runs").status_code == 401
        assert httpx.get(f"{url}/", params={"token": "wrong"}).status_code == 403
        assert httpx.get(f"{url}/static/report.js").status_code == 401
        assert httpx.get(f"{url}/api/runs", headers={"Host": "evil.example"}).status_code == 421
        headers = {HEADER: TOKEN}
        runs = httpx.get(f"{url}/api/runs", headers=headers).json()
        assert [(r["id"], r["pass_rate"]) for r in runs] == [(2, 0.5), (1, 1.0)]
        compared = httpx.get(f"{url}/api/compare", headers=headers).json()
        assert compared["changes"][0] == {
            "name": "greets",
            "kind": "regression",
            "before": "passed",
            "after": "failed",
            "metric_deltas": {"said_hello": [1.0, 0.0]},
        }
        missing = httpx.get(f"{url}/api/runs/9", headers=headers)
        assert missing.status_code == 404
        assert "no run 9" in missing.json()["error"]


@pytest.mark.browser
def test_the_pages_show_runs_a_run_and_a_regression(db, browser):
    with serving(create_viewer_app(db, TOKEN)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems = []
        page.on(
            "console",
            lambda m: problems.append(f"{m.text} {m.location}") if m.type == "error" else None,
        )
        page.goto(f"{url}/?token={TOKEN}")
        expect(page.locator("#title")).to_have_text("2 stored runs")
        expect(page.locator("#run-rows tr")).to_have_count(2)
        expect(page.locator("#chart circle")).to_have_count(2)
        shot(page, "viewer-runs")

        page.locator("#run-rows a", has_text="run 2").click()
        expect(page.locator("#title")).to_have_text("2 runs: 1 passed, 1 failed (pass rate 50%)")
        detail = page.locator("#detail")
        expect(detail).to_contain_text("greets said")  # the failing case's evidence, open first
        expect(detail).to_contain_text(HOSTILE)
        assert page.evaluate("window.__pwned") is None
        shot(page, "viewer-case")

        page.click("#show-runs")
        expect(page.locator("#run-rows input")).to_have_count(2)
        page.locator("#run-rows input").nth(0).check()
        page.locator("#run-rows input").nth(1).check()
        page.click("#compare")
        expect(page.locator("#title")).to_have_text("run 1 → run 2")
        first = page.locator("#changes tr").nth(0)
        expect(first).to_contain_text("greets")
        expect(first).to_contain_text("regression", ignore_case=True)
        expect(first).to_contain_text("said_hello: 1 → 0")
        shot(page, "viewer-compare")
        assert [p for p in problems if "favicon" not in p] == [], problems
        page.close()
