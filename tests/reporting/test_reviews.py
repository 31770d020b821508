"""Human review in the viewer: labels stored in the runs database, judges calibrated by them."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from google.adk.agents import LlmAgent
from playwright.sync_api import expect

from adk_eval import EvalCase, run_eval_suite
from adk_eval.metrics import llm_judge
from adk_eval.reporting import suite_report
from adk_eval.reporting._reviews import add_review, judge_calibration, review_queue, reviews
from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import _kept_token, create_viewer_app
from adk_eval.testing import ScriptedLlm

from ..conftest import serving, shot
from .test_viewer import db  # noqa: F401 (the fixture)


def verdicts(*passed: bool) -> ScriptedLlm:
    replies = iter([json.dumps({"passed": p, "score": float(p), "reasoning": "r"}) for p in passed])
    return ScriptedLlm(responder=lambda request: next(replies), model="judge-1")


@pytest.fixture
def judged_db(tmp_path):
    """One stored run of four cases, each scored by one judge: pass, pass, fail, fail."""
    judge = llm_judge("polite", "Was the agent polite?", model=verdicts(True, True, False, False))
    cases = [
        EvalCase(
            name=f"case-{i}",
            agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
            first_message="hi",
            metrics=[judge],
        )
        for i in range(4)
    ]

    async def stored():
        suite = await run_eval_suite(cases, max_concurrency=1)
        RunStore(tmp_path / "runs.db").append(suite_report(suite), command="run")

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API owns this thread's loop
        thread.submit(asyncio.run, stored()).result()
    return tmp_path / "runs.db"


def test_labels_calibrate_the_judge_with_kappa(judged_db):
    store = RunStore(judged_db)
    assert reviews(store) == []  # nobody reviewed yet: no table, nothing made
    # people agree with the judge on case-0 (pass), case-2 (fail), disagree on case-1, case-3
    for case, verdict in [("case-0", "agree"), ("case-1", "disagree"), ("case-2", "agree")]:
        add_review(store, 1, case, 0, "polite", verdict)
    add_review(store, 1, "case-3", 0, "polite", "agree")
    add_review(store, 1, "case-3", 0, "polite", "disagree", note="it was rude")  # the latest counts

    (found,) = judge_calibration(reviews(store))

    # judge: P P F F; people: P F F P -> agreement 2/4; both pass half: chance 0.5; kappa 0
    assert (found.metric, found.model, found.labels) == ("polite", "judge-1", 4)
    assert found.raw == 0.5
    assert found.kappa == pytest.approx(0.0)
    assert found.base_rate == 0.5
    assert found.self_consistency == 1.0  # one sample each: always consistent
    assert len(found.prompt_hash) == 12
    assert reviews(store)[-1].note == "it was rude"


@pytest.mark.browser
def test_a_mark_made_in_the_page_is_stored_and_changes_the_calibration(judged_db, browser):
    token = _kept_token(judged_db)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(create_viewer_app(judged_db, token)) as url:
        page.goto(f"{url}/?token={token}")
        page.goto(f"{url}/#/run/1/case/case-0/0")
        metric = page.locator('#detail .review[data-metric="polite"]')
        metric.locator("input").fill("not polite at all")
        metric.locator(".disagree").click()
        expect(metric.locator(".reviewed")).to_have_text(" reviewed: disagree")
        page.keyboard.press("a")  # agrees with the run's own verdict
        expect(page.locator('#detail .review[data-metric=""] .reviewed')).to_have_text(
            " reviewed: agree"
        )

        page.click("#show-judges")
        row = page.locator("#judge-rows tr")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("polite")
        expect(row).to_contain_text("judge-1")
        expect(row.locator("td").nth(3)).to_have_text("1")  # one label
        expect(row.locator("td").nth(4)).to_have_text("0%")  # the person disagreed
    page.close()

    stored = reviews(RunStore(judged_db))
    assert [(r.case, r.metric, r.verdict, r.note) for r in stored] == [
        ("case-0", "polite", "disagree", "not polite at all"),
        ("case-0", None, "agree", ""),
    ]


def test_adk_eval_judges_prints_the_calibration_and_exports_the_labels(judged_db, tmp_path):
    from click.testing import CliRunner

    from adk_eval._cli._main import main

    store = RunStore(judged_db)
    add_review(store, 1, "case-0", 0, "polite", "agree")
    add_review(store, 1, "case-2", 0, "polite", "disagree", note="it was polite")
    labels = tmp_path / "labels.json"

    result = CliRunner().invoke(main, ["judges", "--db", str(judged_db), "--labels", str(labels)])

    assert result.exit_code == 0, result.output
    assert "polite" in result.output
    assert "judge-1" in result.output
    assert "2 label(s) on 1 judge(s)" in result.output
    exported = json.loads(labels.read_text())
    assert [(label["case"], label["verdict"]) for label in exported] == [
        ("case-0", "agree"),
        ("case-2", "disagree"),
    ]
    bad = CliRunner().invoke(main, ["judges", "--db", str(tmp_path / "none.db")])
    assert bad.exit_code == 2
    assert "no runs stored yet" in bad.output


@pytest.mark.browser
def test_the_review_queue_filters_by_party_metric_and_what_is_left_to_review(judged_db, browser):
    token = _kept_token(judged_db)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(create_viewer_app(judged_db, token)) as url:
        page.goto(f"{url}/?token={token}")
        page.goto(f"{url}/#/run/1")
        expect(page.locator("#count")).to_have_text("4 of 4 runs")
        page.select_option("#party", "agent")  # the two failures, a scripted user: the agent's
        expect(page.locator("#count")).to_have_text("2 of 4 runs")
        page.select_option("#party", "all")
        page.select_option("#metric", "polite")
        expect(page.locator("#count")).to_have_text("2 of 4 runs")

        page.check("#unreviewed")
        expect(page.locator("#detail h2").first).to_contain_text("case-2")  # failing first, open
        page.keyboard.press("a")
        expect(page.locator('#detail .review[data-metric=""] .reviewed')).to_have_text(
            " reviewed: agree"
        )
        page.keyboard.press("n")  # the next in the queue
        expect(page.locator("#detail h2").first).to_contain_text("case-3")
        page.goto(f"{url}/#/runs")
        page.goto(f"{url}/#/run/1")  # the queue is read back from the database
        page.locator("#unreviewed").set_checked(True)
        expect(page.locator("#count")).to_have_text("3 of 4 runs")
    page.close()


def test_the_queue_across_runs_puts_what_did_not_pass_first_and_knows_what_was_reviewed(db):  # noqa: F811
    store = RunStore(db)
    add_review(store, 2, "greets", 0, None, "agree", "")

    queue = review_queue(store)

    assert [(q["run_id"], q["case"], q["outcome"], q["reviewed"]) for q in queue] == [
        (2, "greets", "failed", True),
        (2, "waves", "passed", False),
        (1, "greets", "passed", False),
        (1, "waves", "passed", False),
    ]
    assert queue[0]["failing"] == ["said_hello"]
    assert [q["run_id"] for q in review_queue(store, runs=1)] == [2, 2]


@pytest.mark.browser
def test_the_review_queue_page_spans_the_stored_runs_and_opens_a_run(db, browser):  # noqa: F811
    token = _kept_token(db)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(create_viewer_app(db, token)) as url:
        page.goto(f"{url}/?token={token}")
        page.click("#show-queue")
        expect(page).to_have_url(f"{url}/#/queue")
        rows = page.locator("#queue-rows tr")
        expect(rows).to_have_count(4)  # "not reviewed yet" is ticked: nothing reviewed so far
        expect(rows.nth(0)).to_contain_text("greets (run 1)")
        expect(rows.nth(0)).to_contain_text("failed")
        page.select_option("#queue-status", "notok")
        expect(rows).to_have_count(1)
        shot(page, "viewer-queue")
        rows.nth(0).locator("a").click()
        expect(page).to_have_url(f"{url}/#/run/2/case/greets/0")
        expect(page.locator("#detail h2").first).to_contain_text("greets (run 1)")
        page.keyboard.press("d")
        expect(page.locator('#detail .review[data-metric=""] .reviewed')).to_have_text(
            " reviewed: disagree"
        )
        page.go_back()  # the queue, read again: the run just reviewed has left it
        expect(page.locator("#title")).to_have_text("review queue: 0 of 4 runs")
        page.select_option("#queue-status", "all")
        expect(page.locator("#title")).to_have_text("review queue: 3 of 4 runs")
    page.close()
