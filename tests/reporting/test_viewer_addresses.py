"""The viewer's addresses: deep links after a restart, Back/Forward, runs appearing live."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from adk_eval.reporting._store import RunStore
from adk_eval.reporting._viewer import _kept_token, create_viewer_app

from ..conftest import serving, shot
from .test_viewer import db, report  # noqa: F401 (the fixture)


def test_the_token_is_kept_beside_the_database_for_its_owner_only(tmp_path):
    db_path = tmp_path / "runs.db"

    first, again = _kept_token(db_path), _kept_token(db_path)

    assert first == again
    assert len(first) >= 24
    mode = stat.S_IMODE(os.stat(tmp_path / "viewer.token").st_mode)
    assert mode == 0o600


@pytest.mark.browser
def test_deep_links_survive_a_restart_and_back_forward_walk_the_views(db, browser):  # noqa: F811
    token = _kept_token(db)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    with serving(create_viewer_app(db, token)) as url:
        page.goto(f"{url}/?token={token}")  # the one URL that carries the token
        expect(page.locator("#title")).to_have_text("2 stored runs")
        page.locator("#run-rows a", has_text="run 2").click()
        expect(page).to_have_url(f"{url}/#/run/2")
        page.locator("#cases tr", has_text="waves").click()
        expect(page).to_have_url(f"{url}/#/run/2/case/waves/0")
        expect(page.locator("#detail h2").first).to_contain_text("waves")

        page.go_back()
        expect(page).to_have_url(f"{url}/#/run/2")
        page.go_back()
        expect(page.locator("#title")).to_have_text("2 stored runs")
        page.go_forward()
        page.go_forward()
        expect(page.locator("#detail h2").first).to_contain_text("waves")

    with serving(create_viewer_app(db, _kept_token(db))) as restarted:  # same database
        page.goto(f"{restarted}/#/run/2/case/waves/0")  # no token: the browser's cookie
        expect(page.locator("#detail h2").first).to_contain_text("waves")
        page.reload()
        expect(page.locator("#detail h2").first).to_contain_text("waves")
        page.goto(f"{restarted}/#/compare/1/2")
        expect(page.locator("#title")).to_have_text("run 1 → run 2")
    context.close()


@pytest.mark.browser
def test_a_run_stored_while_the_list_is_open_appears_without_a_reload(db, browser):  # noqa: F811
    token = _kept_token(db)
    page = browser.new_page()
    with serving(create_viewer_app(db, token)) as url:
        page.goto(f"{url}/?token={token}")
        expect(page.locator("#run-rows tr")).to_have_count(2)

        RunStore(db).append(report({"greets": "passed"}, "2026-11-22T10:00:00"), command="run 3")

        expect(page.locator("#run-rows tr")).to_have_count(3, timeout=10_000)
        expect(page.locator("#title")).to_have_text("3 stored runs")
    page.close()


GATED = """
import os
import anyio
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

async def at_the_gate(request):
    while not os.path.exists("gate"):  # the test opens it once it saw the run live
        await anyio.sleep(0.05)
    return "done"

def case(name, model):
    return EvalCase(name=name, agent=LlmAgent(name="a", model=model), first_message="hi")

quick = case("quick", ScriptedLlm(["ok"]))
gated = case("gated", ScriptedLlm(responder=at_the_gate))
"""


@pytest.mark.browser
def test_a_run_in_progress_appears_live_and_fills_in_without_a_reload(db, browser, tmp_path):  # noqa: F811
    (tmp_path / "gated_eval.py").write_text(GATED)
    token = _kept_token(db)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(create_viewer_app(db, token)) as url:
        page.goto(f"{url}/?token={token}")
        expect(page.locator("#run-rows tr")).to_have_count(2)
        process = subprocess.Popen(
            [sys.executable, "-m", "adk_eval", "run", "gated_eval.py", "--db", str(db)],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            newest = page.locator("#run-rows tr").nth(0)
            expect(newest).to_contain_text("run 3", timeout=60_000)  # stored as it started
            expect(newest).to_contain_text("running")
            expect(newest).to_contain_text("1 passed (2)", timeout=30_000)  # quick finished
            newest.locator("a").click()
            expect(page.locator("#verdict")).to_have_text("RUNNING: 1 of 2 runs finished so far")
            shot(page, "viewer-live")

            (tmp_path / "gate").write_text("")  # the gated case finishes, and the run
            output, _ = process.communicate(timeout=60)
        finally:
            process.kill()
        assert process.returncode == 0, output
        assert "stored as run 3" in output
        expect(page.locator("#verdict")).to_have_text("PASSED: every run passed", timeout=10_000)
        expect(page.locator("#cases tr")).to_have_count(2)
        page.goto(f"{url}/#/runs")
        expect(page.locator("#run-rows tr").nth(0)).not_to_contain_text("running")
    page.close()
    (stored,) = [run for run in RunStore(db).runs() if run.id == 3]
    assert (stored.total, stored.passed, stored.live) == (2, 2, None)
