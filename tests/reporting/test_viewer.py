"""`adk-eval view`: the stored runs over the studio's server conventions, driven in Chromium."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from google.adk.agents import LlmAgent
from playwright.sync_api import expect

from adk_eval import EvalCase, run_eval_suite
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.reporting import suite_report
from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import HEADER, create_viewer_app
from adk_eval.testing import ScriptedLlm

from ..conftest import serving, shot
from .test_html import HOSTILE

TOKEN = "viewer-token-0123456789"


def report(outcomes: dict[str, str | list[str]], created: str) -> dict:
    """A small stored report: per case, one outcome or the outcomes of its repeats."""
    runs = {name: [o] if isinstance(o, str) else o for name, o in outcomes.items()}
    repeat = max(len(o) for o in runs.values())
    results = [
        {
            "name": name,
            "attempt": attempt,
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
                {  # no initial_state in the record, as in reports stored before it was kept
                    "kind": "state_change",
                    "delta": {"greeted": True},
                    "source": None,
                    "author": "greeter",
                    "path": [],
                },
            ],
        }
        for name, attempts in runs.items()
        for attempt, outcome in enumerate(attempts)
    ]
    flat = [o for attempts in runs.values() for o in attempts]
    passed = flat.count("passed")
    return {
        "schema": "adk-eval.report",
        "version": 1,
        "created_at": created,
        "adk_eval_version": "0.1.0",
        "repeat": repeat,
        "duration_ms": 20.0,
        "passed": passed == len(flat),
        "pass_rate": passed / len(flat),
        "stopped_early": False,
        "summary": {
            "total": len(flat),
            "passed": passed,
            "failed": len(flat) - passed,
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
                "repeat": repeat,
                "runs": len(attempts),
                "passes": attempts.count("passed"),
                "pass_rate": attempts.count("passed") / len(attempts),
                "pass_hat_k": attempts.count("passed") == repeat,
                "pass_at_k": "passed" in attempts,
                "label": {repeat: "stable-pass", 0: "stable-fail"}.get(
                    attempts.count("passed"), "flaky"
                ),
            }
            for name, attempts in runs.items()
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
            "decision": "no evidence",  # one run a side: Fisher's test cannot decide
            "p_value": 0.5,
            "passes": [1, 1, 0, 1],
        }
        assert compared["suite"]["decision"] == "no evidence"
        missing = httpx.get(f"{url}/api/runs/9", headers=headers)
        assert missing.status_code == 404
        assert "no run 9" in missing.json()["error"]


def test_a_huge_run_id_is_no_run_and_a_huge_host_is_not_echoed(db):
    headers = {HEADER: TOKEN}
    with serving(create_viewer_app(db, TOKEN)) as url:
        huge = httpx.get(f"{url}/api/runs/{10**30}", headers=headers)
        assert huge.status_code == 404, huge.text
        assert "no run" in huge.json()["error"]
        assert httpx.get(f"{url}/api/compare?a=1&b={-(10**40)}", headers=headers).status_code == 404
        forged = httpx.get(f"{url}/api/runs", headers={**headers, "Host": "h" * 60_000})
        assert forged.status_code == 421
        assert len(forged.text) < 600
        assert "more characters" in forged.json()["error"]


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

        page.locator("#run-rows a", has_text="run 2").click()
        expect(page.locator("#title")).to_have_text(
            "2 runs: 1 passed, 1 failed (pass rate 50% [9%, 91%]; 95% intervals)"
        )
        detail = page.locator("#detail")
        expect(detail).to_contain_text("greets said")  # the failing case's evidence, open first
        expect(detail).to_contain_text(HOSTILE)
        expect(detail.locator('[data-kind="state_change"]')).to_contain_text("greeted = true")
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
        expect(first).to_contain_text("no evidence (p=0.500)")
        expect(first).to_contain_text("said_hello: 1 → 0")
        shot(page, "viewer-compare")
        assert [p for p in problems if "favicon" not in p] == [], problems
        page.close()


@pytest.fixture
def repeated_db(tmp_path):
    """Three runs of two cases, the last two with repeats: `greets` becomes flaky."""
    store = RunStore(tmp_path / "runs.db")
    store.append(report({"greets": "passed", "waves": "passed"}, "2026-11-19T10:00"), command="a")
    store.append(
        report({"greets": ["passed", "passed"], "waves": ["passed", "failed"]}, "2026-11-20T10:00"),
        command="b",
    )
    store.append(
        report({"greets": ["failed", "passed"], "waves": ["passed", "passed"]}, "2026-11-21T10:00"),
        command="c",
    )
    return tmp_path / "runs.db"


def test_history_gives_pass_rate_and_pass_hat_k_per_run_and_per_case(repeated_db):
    with serving(create_viewer_app(repeated_db, TOKEN)) as url:
        headers = {HEADER: TOKEN}
        runs = httpx.get(f"{url}/api/runs", headers=headers).json()
        assert [(r["id"], r["repeat"], r["pass_rate"], r["pass_hat_k"]) for r in runs] == [
            (3, 2, 0.75, 0.5),
            (2, 2, 0.75, 0.5),
            (1, 1, 1.0, 1.0),
        ]
        assert [(r["passed"], r["failed"]) for r in runs] == [(3, 1), (3, 1), (2, 0)]
        interval = runs[0]["pass_rate_interval"]  # 3 of 4 runs, Wilson at 95 %
        assert (round(interval["low"], 4), round(interval["high"], 4), interval["confidence"]) == (
            0.3006,
            0.9544,
            0.95,
        )
        assert runs[0]["pass_hat_k_interval"]["estimate"] == 0.5  # 1 of 2 cases passed every run
        greets = httpx.get(f"{url}/api/history", params={"case": "greets"}, headers=headers)
        assert [(p["id"], p["passes"], p["runs"], p["pass_hat_k"]) for p in greets.json()] == [
            (1, 1, 1, 1.0),
            (2, 2, 2, 1.0),
            (3, 1, 2, 0.0),
        ]
        none = httpx.get(f"{url}/api/history", params={"case": "nobody"}, headers=headers)
        assert none.json() == []


@pytest.mark.browser
def test_charts_repeats_side_by_side_and_a_compared_case_side_by_side(repeated_db, browser):
    with serving(create_viewer_app(repeated_db, TOKEN)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/?token={TOKEN}")
        expect(page.locator("#run-rows tr")).to_have_count(3)
        expect(page.locator("#chart polyline.pass_hat_k")).to_have_count(1)  # repeats: pass^k too
        expect(page.locator("#run-rows tr").nth(0)).to_contain_text("50%")  # its pass^k
        cells = page.locator("#run-rows tr").nth(0).locator("td")
        expect(cells).to_have_count(page.locator("#runs thead th").count())  # one per column
        expect(cells.nth(2)).to_contain_text("2026-")  # When
        expect(cells.nth(4)).to_have_text("50% [9%, 91%]")  # pass^k, under its heading
        shot(page, "viewer-runs")

        page.locator("#run-rows a", has_text="run 3").click()
        first = page.locator("#cases tr").nth(0)
        expect(first).to_contain_text("greets")
        expect(first).to_contain_text("1/2 [9%, 91%] · pass^k no · flaky")
        expect(page.locator("#case-chart circle")).to_have_count(3)  # greets in all three runs
        page.click("#side-by-side")
        columns = page.locator("#detail .side-by-side .column")
        expect(columns).to_have_count(2)
        expect(columns.nth(0)).to_contain_text("run 1")  # one-based, as people count
        expect(columns.nth(1)).to_contain_text("run 2")
        expect(columns.nth(0).locator('[data-kind="model_text"]')).to_contain_text(HOSTILE)

        page.click("#show-runs")
        page.locator("#run-rows input").nth(0).check()  # run 3
        page.locator("#run-rows input").nth(2).check()  # run 1
        page.click("#compare")
        expect(page.locator("#title")).to_have_text("run 1 → run 3")
        expect(page.locator("#run")).to_be_hidden()  # one view at a time
        page.locator("#changes tr", has_text="greets").click()
        sides = page.locator("#compare-detail .column")
        expect(sides).to_have_count(2)
        expect(sides.nth(0)).to_contain_text("run 1")
        expect(sides.nth(1)).to_contain_text("run 3")
        expect(sides.nth(1)).to_contain_text("failed said_hello")
        shot(page, "viewer-compare-case")
        assert page.evaluate("window.__pwned") is None
        assert errors == []
        page.close()


def guard(callback_context, llm_request):
    return None


def test_a_runs_payload_carries_what_ran_for_real(tmp_path):
    agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]), before_model_callback=guard)
    cases = [EvalCase(name="greets", agent=agent, first_message="hi")]
    # Its own thread and event loop: the browser tests of this module keep Playwright's loop
    # running in this thread while their browser lives.
    with ThreadPoolExecutor(1) as thread:
        suite = thread.submit(asyncio.run, run_eval_suite(cases)).result()
    db = tmp_path / "runs.db"
    run_id = RunStore(db).append(suite_report(suite), command="run")

    with serving(create_viewer_app(db, TOKEN)) as url:
        payload = httpx.get(f"{url}/api/runs/{run_id}", headers={HEADER: TOKEN}).json()

    assert payload["runs_for_real"] == suite.runs_for_real.to_data()
    assert payload["runs_for_real"]["callbacks"] == [
        f"{__name__}.guard (before_model_callback of agent `a`)"
    ]
    assert payload["runs_for_real"]["sandbox"][0].startswith("warn (every case)")


@pytest.mark.browser
def test_a_stored_run_shows_what_its_model_calls_met_at_their_providers(browser, tmp_path):
    from .test_html import BUSY, UNPRICED, provider_report

    db = tmp_path / "runs.db"
    store = RunStore(db)
    store.append(report({"greets": "passed"}, "2026-11-20T10:00:00"), command="run 1")  # older
    run_id = store.append(provider_report(), command="run 2")
    with serving(create_viewer_app(db, TOKEN)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(f"{url}/?token={TOKEN}#/run/{run_id}/case/books/0")
        detail = page.locator("#detail")
        expect(detail.locator(".provider")).to_have_text(f"providers: {BUSY.line()}")
        total = BUSY + UNPRICED + ProviderStats(calls=1)
        expect(page.locator("#meta")).to_contain_text(f"; providers: {total.line()}")

        page.goto(f"{url}/?token={TOKEN}#/run/{run_id}/case/tampered/0")
        expect(detail.locator("h2").first).to_contain_text("tampered")
        expect(detail.locator(".provider")).to_have_text(
            f"providers: {HOSTILE} retries, waited 0.0 s"
        )
        assert page.evaluate("window.__pwned") is None
        assert detail.locator("b").count() == 0

        page.goto(f"{url}/?token={TOKEN}#/run/1/case/greets/0")  # stored before: no line
        expect(detail.locator("h2").first).to_contain_text("greets")
        expect(page.locator("#title")).to_contain_text("1 runs")
        expect(detail.locator(".provider")).to_have_count(0)
        assert "providers" not in page.locator("#meta").inner_text()
        assert problems == []
        page.close()
