"""The viewer's pages against axe-core (vendored from npm, no CDN): no serious violations.

Each view is opened by its address, checked, and photographed for docs/ (with
ADK_EVAL_SCREENSHOTS=docs/images).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from adk_eval.reporting._reviews import add_review
from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import _kept_token, create_viewer_app

from ..conftest import serving, shot
from .test_reviews import judged_db  # noqa: F401 (the fixture)

AXE = Path(__file__).parents[1] / "vendor" / "axe-core" / "axe.min.js"
VIEWS = {
    "runs": ("#/runs", "#run-rows tr"),
    "viewer-review": ("#/run/1/case/case-2/0", "#detail .review"),
    "compare": ("#/compare/1/2", "#changes tr"),
    "viewer-judges": ("#/judges", "#judge-rows tr"),
    "queue": ("#/queue", "#queue-rows tr"),
}
"""Each view: its address, what shows it is drawn; the `viewer-` ones are docs' screenshots."""


def serious(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.browser
def test_every_view_passes_axe_with_no_serious_violation(judged_db, browser):  # noqa: F811
    store = RunStore(judged_db)
    store.append(store.load(1), command="run again")  # a second run, to compare
    add_review(store, 1, "case-2", 0, "polite", "disagree", note="it was polite")
    token = _kept_token(judged_db)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    problems = {}
    with serving(create_viewer_app(judged_db, token)) as url:
        page.goto(f"{url}/?token={token}")
        for name, (address, ready) in VIEWS.items():
            page.goto(f"{url}/{address}")
            expect(page.locator(ready).first).to_be_visible()
            if name.startswith("viewer-"):
                shot(page, name)
            problems[name] = serious(page)
    context.close()
    assert problems == {name: [] for name in VIEWS}, problems


@pytest.mark.browser
def test_the_html_report_passes_axe_with_no_serious_violation(judged_db, browser, tmp_path):  # noqa: F811
    from adk_eval.reporting._html import write_html_report

    path = tmp_path / "report.html"
    write_html_report(RunStore(judged_db).load(1), path)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.goto(path.as_uri())
    expect(page.locator("#cases tr").first).to_be_visible()

    assert serious(page) == []
    context.close()
