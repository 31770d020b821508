"""The robustness section (``run --faults``) on the HTML report and the viewer's run page."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from adk_eval._suites._robustness import robustness
from adk_eval.reporting import suite_report
from adk_eval.reporting._html import write_html_report
from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import create_viewer_app

from .._suites.test_robustness import booking_case, greeting_case
from ..conftest import serving
from .test_html import HOSTILE

TOKEN = "viewer-token-0123456789"


@pytest.fixture(scope="module")
def reports() -> tuple[dict, dict]:
    """A report with a robustness object (one case renamed to hostile markup), and its pass."""
    cases = [booking_case(), greeting_case()]
    # in a thread of its own: Playwright's sync API keeps an event loop in this one
    with ThreadPoolExecutor(1) as pool:
        found = pool.submit(asyncio.run, robustness(cases, rate=0.5, repeat=6, seed=7)).result()
    plain = suite_report(found.clean)
    measured = found.to_dict()
    measured["cases"][1]["name"] = HOSTILE  # `greets`: a name is drawn as text, never as HTML
    measured["summary"] = f"{measured['summary']} {HOSTILE}"
    return {**plain, "robustness": measured}, plain


def rows_of(page) -> list[list[str]]:
    rows = page.locator("#robustness tbody tr")
    return [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())]


@pytest.mark.browser
def test_the_html_report_draws_the_robustness_table_and_sentence_as_text(
    reports, browser, tmp_path
):
    report, plain = reports
    measured = report["robustness"]
    books = measured["cases"][0]
    path = tmp_path / "report.html"
    write_html_report(report, path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri())
    box = page.locator("#robustness")
    expect(box).to_be_visible()
    expect(box.locator("h2")).to_have_text(
        "Robustness under 50% tool faults (6 run(s) a case each way, seed 7; "
        "pass rates and drops with their 95% intervals)"
    )
    drop = books["drop"]
    points = [round(drop[k] * 100) for k in ("estimate", "low", "high")]
    rows = rows_of(page)
    assert rows[0] == [
        "books",
        "6/6 61%-100%",  # as the terminal shows it: Wilson's interval of 6 of 6
        f"{books['faulted_passes']}/6 "
        f"{round(books['faulted_pass_rate']['low'] * 100)}%-"
        f"{round(books['faulted_pass_rate']['high'] * 100)}%",
        f"{points[0]} [{points[1]}, {points[2]}]",
        "yes" if books["beyond_noise"] else "no",
    ]
    assert books["faulted_passes"] < 6  # the faults did bite
    assert rows[1] == [HOSTILE, "6/6 61%-100%", "6/6 61%-100%", "0 [-39, 39]", "no"]
    assert rows[2][0] == "suite"
    assert rows[2][1] == "12/12 76%-100%"
    expect(box.locator("p")).to_have_text(measured["summary"])
    assert page.evaluate("window.__pwned") is None
    assert box.locator("script").count() == 0
    assert box.locator("b").count() == 1  # the suite row's own, none from the values
    assert problems == []

    write_html_report(plain, path)  # a run without --faults: no section
    page.goto(path.as_uri())
    expect(page.locator("#title")).to_contain_text("12 runs")
    expect(box).to_be_hidden()
    page.close()


@pytest.mark.browser
def test_a_stored_run_with_faults_shows_its_robustness_in_the_viewer(reports, browser, tmp_path):
    report, plain = reports
    db = tmp_path / "runs.db"
    store = RunStore(db)
    older = store.append(plain, command="adk-eval run evals")
    run_id = store.append(report, command="adk-eval run evals --faults 0.5")
    with serving(create_viewer_app(db, TOKEN)) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(f"{url}/?token={TOKEN}#/run/{run_id}")
        box = page.locator("#robustness")
        expect(box.locator("p")).to_have_text(report["robustness"]["summary"])
        assert [row[0] for row in rows_of(page)] == ["books", HOSTILE, "suite"]
        assert page.evaluate("window.__pwned") is None

        page.click("#show-runs")  # the list of runs is no run: no section
        expect(page.locator("#run-rows tr")).to_have_count(2)
        expect(box).to_be_hidden()
        page.goto(f"{url}/?token={TOKEN}#/run/{older}")
        expect(page.locator("#title")).to_contain_text("12 runs")
        expect(box).to_be_hidden()
        assert problems == []
        page.close()
