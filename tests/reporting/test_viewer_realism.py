"""`adk-eval view --realism`: a realism report's pages in the viewer, every text escaped."""

from __future__ import annotations

import asyncio
import json
import random
import re
from concurrent.futures import ThreadPoolExecutor
from html import escape

import httpx
import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from adk_eval._cli import main
from adk_eval._errors import EvalSetupError
from adk_eval.realism._report import realism_report
from adk_eval.reporting._viewer import HEADER, create_viewer_app
from adk_eval.reporting._viewer_realism import load_realism_reports

from ..conftest import serving, shot
from ..realism.test_report import group
from .test_viewer import TOKEN, db  # noqa: F401

SCRIPT = "<script>window.__pwned = 1</script>"
IMAGE = "<img src=x onerror=window.__pwned=2>"


@pytest.fixture
def realism_json(tmp_path):
    """A realism report of 30 real and 30 simulated conversations, markup in a real one."""
    rng = random.Random(5)
    real = group(0.6, 30, rng)
    real[0].events[2].content.parts[0].text = f"{SCRIPT} 12 March {IMAGE}"
    simulated = [(s.events, True, f"mined clinic/u/{s.id}") for s in group(1.0, 30, rng)]
    outcomes = {s.id: i % 2 == 0 for i, s in enumerate(real)}
    built = realism_report(real, simulated, outcomes=outcomes, resamples=200)
    with ThreadPoolExecutor(1) as pool:  # Playwright's loop may be running in this thread
        report = pool.submit(asyncio.run, built).result()
    path = tmp_path / "realism.json"
    path.write_text(json.dumps(report.to_data(), default=str))
    return path


def _rows(page: str) -> dict[str, str]:
    """The feature table's rows by behaviour name, as text without tags."""
    rows = re.findall(r'<tr class="(?:un)?like">(.*?)</tr>', page.replace("alike", "like"))
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return {found[0]: " | ".join(found) for found in cells}


def test_the_report_page_lists_each_behaviour_with_the_numbers_of_the_report(db, realism_json):  # noqa: F811
    data = json.loads(realism_json.read_text())
    app = create_viewer_app(db, TOKEN, realism=load_realism_reports([realism_json]))
    with serving(app) as url:
        headers = {HEADER: TOKEN}
        index = httpx.get(f"{url}/", headers=headers).text
        assert 'href="realism">realism reports (1)</a>' in index
        listed = httpx.get(f"{url}/realism", headers=headers).text
        assert 'href="realism/0">realism.json</a>' in listed
        assert "30 real conversation(s) against 30 simulated" in listed
        page = httpx.get(f"{url}/realism/0", headers=headers)

    assert page.status_code == 200
    rows = _rows(page.text)
    assert set(rows) == {feature["name"] for feature in data["features"]}
    direct = next(f for f in data["features"] if f["name"] == "answered_directly_rate")
    real, gap = direct["real"]["estimate"], direct["difference"]
    assert (
        f"{round(100 * real['estimate'])} % [{round(100 * real['low'])}, " in rows[direct["name"]]
    )
    assert f"{round(100 * gap['estimate'])} points [" in rows[direct["name"]]
    assert f"{direct['p_adjusted']:.3g}" in rows[direct["name"]]
    assert "unlikely to be noise" in rows[direct["name"]]
    assert f"{data['distance']['distance']:.2f} standard deviations" in page.text
    assert escape(data["gap"]["sentence"]) in page.text
    assert page.text.count('href="0/scenarios/') == len(data["pairs"]) == 20


def test_the_scenario_page_escapes_the_conversations_side_by_side(db, realism_json):  # noqa: F811
    app = create_viewer_app(db, TOKEN, realism=load_realism_reports([realism_json]))
    with serving(app) as url:
        headers = {HEADER: TOKEN}
        page = httpx.get(f"{url}/realism/0/scenarios/0", headers=headers)
        missing = httpx.get(f"{url}/realism/0/scenarios/20", headers=headers)
        no_report = httpx.get(f"{url}/realism/1", headers=headers)
        no_token = httpx.get(f"{url}/realism/0")

    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.text.count('<div class="side">') == 2
    assert "Real conversation" in page.text
    assert "Simulated run (passed)" in page.text
    assert "<script" not in page.text
    assert "<img" not in page.text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt; 12 March &lt;img" in page.text
    assert missing.status_code == 404
    assert "no scenario 20 in realism report 0" in missing.text
    assert no_report.status_code == 404
    assert "no realism report 1" in no_report.text
    assert no_token.status_code == 401


def test_a_missing_or_foreign_report_file_is_one_clear_error(db, tmp_path):  # noqa: F811
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps({"results": []}))
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(EvalSetupError, match=r"cannot read realism report .*nowhere\.json"):
        load_realism_reports([tmp_path / "nowhere.json"])
    with pytest.raises(EvalSetupError, match=r"broken\.json is not JSON"):
        load_realism_reports([broken])
    with pytest.raises(EvalSetupError, match=r"runs\.json is not a realism report \(at the top"):
        load_realism_reports([runs])

    done = CliRunner().invoke(main, ["view", "--db", str(db), "--realism", str(runs)])

    assert done.exit_code != 0
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1, done.output
    assert "is not a realism report" in lines[0]
    assert "adk-eval realism SESSIONS RUNS --json PATH" in done.output


@pytest.mark.browser
def test_markup_in_a_conversation_never_runs_in_the_browser(db, realism_json, browser):  # noqa: F811
    app = create_viewer_app(db, TOKEN, realism=load_realism_reports([realism_json]))
    with serving(app) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems, dialogs = [], []
        page.on(
            "console",
            lambda m: problems.append(f"{m.text} {m.location}") if m.type == "error" else None,
        )
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{url}/?token={TOKEN}")
        page.click("#show-realism")
        page.locator("#reports a").first.click()
        expect(page.locator("tbody tr")).to_have_count(10)
        page.locator("#scenarios a").first.click()

        sides = page.locator(".pair .side")
        expect(sides).to_have_count(2)
        page.wait_for_load_state("load")  # its stylesheet applied: the click waits for less
        expect(sides.nth(0)).to_contain_text(f"{SCRIPT} 12 March {IMAGE}")
        left, right = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert left is not None
        assert right is not None
        assert left["y"] == right["y"]  # two columns: level, the simulated run on the right
        assert left["x"] + left["width"] <= right["x"]
        assert page.locator("img").count() == 0
        assert page.evaluate("window.__pwned") is None
        shot(page, "viewer-realism-scenario")
        page.close()
    assert dialogs == []
    assert [p for p in problems if "favicon" not in p] == [], problems
