"""`adk-eval view --watch`: a real watch's journal as a live page, its conversations and goldens."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from html import escape
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner
from google.adk.evaluation.eval_set import EvalSet
from google.adk.sessions import DatabaseSessionService
from playwright.sync_api import expect

from adk_eval._cli import main
from adk_eval._errors import EvalSetupError
from adk_eval.metrics import MetricResult
from adk_eval.production import open_sessions, watch_sessions
from adk_eval.production._watch._drop import DropMonitor
from adk_eval.reporting._viewer import HEADER, create_viewer_app
from adk_eval.reporting._viewer_watch import NO_WATCH, load_watch
from adk_eval.testing import function_response_event, text_event, tool_call_event, user_event
from tests.production.stores import checksum, close

from ..conftest import serving, shot
from .test_accessibility import serious
from .test_viewer import TOKEN, db  # noqa: F401

SCRIPT = "<script>window.__pwned = 1</script>"
HEADERS = {HEADER: TOKEN}


class NoRefund:
    """A cheap metric: fails when the agent promises a refund, quoting what it said."""

    name = "no_refund"

    def evaluate(self, trace) -> MetricResult:
        said = [m.text for m in trace.messages if m.role != "user" and "refund" in m.text]
        return MetricResult(passed=not said, evidence=[f"promised: {t}" for t in said] or ["ok"])


async def _write(url: str, first: int, count: int) -> list[str]:
    """Sessions `first`.. of a desk agent (a lookup, then an answer); even ones promise a refund.

    Session 0's user writes markup and an e-mail address; session 3 has no user turn.
    """
    service = DatabaseSessionService(db_url=url)
    names = []
    try:
        for index in range(first, first + count):
            session = await service.create_session(
                app_name="desk", user_id=f"u{index}", session_id=f"s{index}"
            )
            answer = "A refund is on its way." if index % 2 == 0 else "It has shipped."
            asked = f"where is order A{index}? {SCRIPT} mail ann{index}@example.com"
            events = [
                user_event(asked),
                tool_call_event("desk", "lookup", {"key": f"A{index}"}),
                function_response_event("desk", "lookup", {"status": "shipped"}),
                text_event("desk", answer),
            ]
            for event in [events[-1]] if index == 3 else events:
                await service.append_event(session, event)
            names.append(f"desk/u{index}/s{index}")
    finally:
        await close(service)
    return names


async def _watched(folder: Path, first: int, count: int) -> list[str]:
    """`count` more sessions written, then a watch scores them into ``watch.db``."""
    names = await _write(f"sqlite+aiosqlite:///{folder / 'store.db'}", first, count)
    await watch_sessions(
        open_sessions(f"sqlite:///{folder / 'store.db'}"),
        [NoRefund()],
        idle=0.0,
        poll=0.05,
        max_concurrency=1,
        until=count,
        state=folder / "watch.db",
        on_verdict=DropMonitor(0.99, alpha=0.5, drop=0.5, horizon=10),  # alerts at once
    )
    return names


def watch_more(folder: Path, first: int, count: int) -> list[str]:
    with ThreadPoolExecutor(1) as pool:  # Playwright's loop may be running in this thread
        return pool.submit(asyncio.run, _watched(folder, first, count)).result()


@pytest.fixture(scope="module")
def watched(tmp_path_factory) -> Path:
    """A watch's state file after a real watch scored six conversations (three failing)."""
    folder = tmp_path_factory.mktemp("watched")
    watch_more(folder, 0, 6)
    return folder / "watch.db"


def _app(db: Path, state: Path):  # noqa: F811
    return create_viewer_app(db, TOKEN, watch=load_watch(state))


def test_the_live_json_has_each_metric_over_time_its_alert_and_the_newest_failing(db, watched):  # noqa: F811
    with serving(_app(db, watched)) as url:
        data = httpx.get(f"{url}/api/watch", headers=HEADERS).json()
        index = httpx.get(f"{url}/", headers=HEADERS).text

    assert 'id="show-watch" href="watch"' in index
    assert data["totals"] == {"scored": 6, "verdicts": 6, "failed": 3, "alerts": 1}
    [metric] = data["metrics"]
    assert metric["name"] == "no_refund"
    points = metric["points"]
    assert sum(p["passed"] for p in points) == 3
    assert sum(p["failed"] for p in points) == 3
    for p in points:
        assert p["low"] <= p["rate"] <= p["high"]
        assert p["start"] < p["end"]
    [alert] = data["alerts"]
    assert alert["metric"] == "no_refund"
    assert alert["line"].startswith("no_refund: pass rate 0% against 99%")
    assert metric["alerts"] == [{"at": alert["at"], "line": alert["line"]}]
    assert points[0]["start"] <= alert["at"] <= points[-1]["end"]
    failing = data["failing"]
    assert {row["name"] for row in failing} == {"desk/u0/s0", "desk/u2/s2", "desk/u4/s4"}
    assert [row["at"] for row in failing] == sorted((row["at"] for row in failing), reverse=True)
    assert failing[0]["href"] == f"watch/conversations/{quote(failing[0]['name'], safe='')}"
    assert "%2F" in failing[0]["href"]
    assert failing[0]["failed"] == ["no_refund"]


def test_a_conversation_shows_its_verdict_evidence_and_turns_as_escaped_text(db, watched):  # noqa: F811
    with serving(_app(db, watched)) as url:
        page = httpx.get(
            f"{url}/watch/conversations/{quote('desk/u0/s0', safe='')}", headers=HEADERS
        )
        missing = httpx.get(f"{url}/watch/conversations/desk%2Fu9%2Fs9", headers=HEADERS)
        no_token = httpx.get(f"{url}/watch/conversations/desk%2Fu0%2Fs0")

    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    text = page.text
    assert "<script>window" not in text
    assert "where is order A0? &lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    assert "ann0@example.com" not in text  # the session as the watch kept it: redacted
    verdict = re.search(r'<tr><th scope="row">no_refund</th>(.*?)</tr>', text)
    assert verdict is not None
    assert '<td class="outcome failed">failed</td>' in verdict.group(1)
    assert "<li>promised: A refund is on its way.</li>" in verdict.group(1)
    assert "lookup({&quot;key&quot;: &quot;A0&quot;})" in text
    assert "lookup → {&quot;status&quot;: &quot;shipped&quot;}" in text
    assert '<a id="keep-golden" href="../goldens/desk%2Fu0%2Fs0" download>' in text
    assert missing.status_code == 404
    assert escape("no conversation 'desk/u9/s9' in the watch's journal") in missing.text
    assert no_token.status_code == 401


def _contents(folder: Path) -> dict[str, str]:
    """Each file's checksum, but SQLite's own -wal and -shm beside a WAL database: any
    reader, read-only too, may make them (an empty log, a shared-memory index); the
    database files themselves must stay byte for byte."""
    return {
        path.name: checksum(path)
        for path in folder.iterdir()
        if not path.name.endswith(("-wal", "-shm"))
    }


def test_keep_as_golden_downloads_an_adk_eval_set_and_writes_nothing(db, watched):  # noqa: F811
    folder = watched.parent
    before = _contents(folder)
    with serving(_app(db, watched)) as url:
        golden = httpx.get(f"{url}/watch/goldens/desk%2Fu2%2Fs2", headers=HEADERS)

    assert golden.status_code == 200
    assert golden.headers["content-disposition"] == 'attachment; filename="desk_u2_s2.evalset.json"'
    eval_set = EvalSet.model_validate_json(golden.text)
    [case] = eval_set.eval_cases
    assert case.eval_id == "s2"
    assert case.session_input is not None
    assert (case.session_input.app_name, case.session_input.user_id) == ("desk", "u2")
    [turn] = case.conversation or []
    assert turn.user_content.parts[0].text.startswith("where is order A2? <script>")
    assert turn.final_response is not None
    assert turn.final_response.parts[0].text == "A refund is on its way."
    assert _contents(folder) == before


def test_a_conversation_with_no_user_turn_says_so_instead_of_a_golden(db, watched):  # noqa: F811
    with serving(_app(db, watched)) as url:
        page = httpx.get(f"{url}/watch/conversations/desk%2Fu3%2Fs3", headers=HEADERS)
        golden = httpx.get(f"{url}/watch/goldens/desk%2Fu3%2Fs3", headers=HEADERS)

    assert page.status_code == 200
    assert "No golden to keep: the conversation has no user turn." in page.text
    assert "keep-golden" not in page.text
    assert golden.status_code == 404
    assert "has no user turn" in golden.text


def test_without_watch_the_viewer_is_unchanged_and_watch_says_how_to_start_one(db):  # noqa: F811
    with serving(create_viewer_app(db, TOKEN)) as url:
        index = httpx.get(f"{url}/", headers=HEADERS).text
        page = httpx.get(f"{url}/watch", headers=HEADERS)
        data = httpx.get(f"{url}/api/watch", headers=HEADERS)

    assert "show-watch" not in index
    assert page.status_code == 200
    assert re.findall(r'<p id="no-watch">(.*?)</p>', page.text) == [f"{NO_WATCH}."]
    assert "adk-eval view --watch" in NO_WATCH
    assert data.status_code == 404
    assert data.json() == {"error": NO_WATCH}


def test_view_refuses_a_missing_or_foreign_state_file_in_one_line(db, tmp_path):  # noqa: F811
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    for given, said in [
        (tmp_path / "nowhere.db", "nowhere.db: no such file"),
        (text, "notes.txt is not a watch's state file"),
        (db, f"{db.name} is not a watch's state file"),  # the runs database: SQLite, not a watch's
        (tmp_path, "it is not a file"),
    ]:
        with pytest.raises(EvalSetupError, match=re.escape(said)):
            load_watch(given)
        with socket.socket() as taken:  # were the file let through, serving would fail, not hang
            taken.bind(("127.0.0.1", 0))
            port = str(taken.getsockname()[1])
            view = ["view", "--db", str(db), "--watch", str(given), "--port", port]
            done = CliRunner().invoke(main, view)
        assert done.exit_code == 2, done.output
        lines = [line for line in done.output.splitlines() if line.strip()]
        assert len(lines) == 1, done.output
        assert said in lines[0]


def test_the_page_json_follows_the_watch_without_a_restart(db, tmp_path):  # noqa: F811
    watch_more(tmp_path, 0, 2)
    with serving(_app(db, tmp_path / "watch.db")) as url:
        before = httpx.get(f"{url}/api/watch", headers=HEADERS).json()
        watch_more(tmp_path, 2, 3)  # the watch scores more while the viewer serves
        after = httpx.get(f"{url}/api/watch", headers=HEADERS).json()

    assert before["totals"]["scored"] == 2
    assert [row["name"] for row in before["failing"]] == ["desk/u0/s0"]
    assert after["totals"]["scored"] == 5
    assert {row["name"] for row in after["failing"]} == {"desk/u0/s0", "desk/u2/s2", "desk/u4/s4"}
    assert after["failing"][-1]["name"] == "desk/u0/s0"  # scored first, so listed last
    counted = sum(p["passed"] + p["failed"] for p in after["metrics"][0]["points"])
    assert counted == 5


@pytest.mark.slow
def test_adk_eval_view_serves_a_watch_with_no_runs_database_yet(watched, tmp_path):
    command = [sys.executable, "-m", "adk_eval", "view", "--db", str(tmp_path / "runs.db")]
    command += ["--watch", str(watched), "--port", "0"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            found = re.search(r"open (http://\S+)/\?token=(\S+)", process.stdout.readline())
            assert found is not None
            url, token = found.groups()
            data = httpx.get(f"{url}/api/watch", headers={HEADER: token}).json()
            runs = httpx.get(f"{url}/api/runs", headers={HEADER: token})
        finally:
            process.send_signal(signal.SIGINT)
            code = process.wait(30)
    assert data["totals"]["scored"] == 6
    assert runs.status_code == 404
    assert "no runs stored yet" in runs.json()["error"]
    assert code == 0


@pytest.mark.browser
def test_the_live_page_charts_alerts_and_keeps_a_golden_in_the_browser(db, watched, browser):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"{m.text} {m.location}") if m.type == "error" else None,
    )
    with serving(_app(db, watched)) as url:
        page.goto(f"{url}/?token={TOKEN}")
        page.click("#show-watch")
        chart = page.locator('figure.metric[data-metric="no_refund"] svg.chart')
        expect(chart).to_be_visible()
        expect(chart.locator("circle.point").first).to_be_visible()
        expect(chart.locator("polygon.band")).to_have_count(1)
        expect(chart.locator("g.alert-mark")).to_have_count(1)
        expect(page.locator("#alerts li")).to_contain_text("no_refund: pass rate 0% against 99%")
        expect(page.locator("#totals")).to_have_text(
            "6 conversation(s) scored, 6 verdict(s), 3 failed, 1 alert(s)"
        )
        shot(page, "viewer-watch")
        newest = page.locator("#failing tbody a").first
        name = newest.inner_text()
        newest.click()

        expect(page.locator("h1")).to_have_text(name)
        expect(page.locator("#verdicts")).to_contain_text("promised: A refund is on its way.")
        with page.expect_download() as download:
            page.click("#keep-golden")
        eval_set = EvalSet.model_validate_json(Path(download.value.path()).read_text())
        assert [case.eval_id for case in eval_set.eval_cases] == [name.split("/")[-1]]
        page.goto(f"{url}/watch/conversations/desk%2Fu0%2Fs0")
        expect(page.locator("#turns")).to_contain_text(SCRIPT)
        shot(page, "viewer-watch-conversation")
        assert page.evaluate("window.__pwned") is None
    context.close()
    assert [p for p in problems if "favicon" not in p] == [], problems


@pytest.mark.browser
def test_the_watch_pages_pass_axe_with_no_serious_violation(db, watched, browser):  # noqa: F811
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    found = {}
    with serving(_app(db, watched)) as url:
        page.goto(f"{url}/watch?token={TOKEN}")
        expect(page.locator("g.alert-mark")).to_have_count(1)
        found["live"] = serious(page)
        page.goto(f"{url}/watch/conversations/desk%2Fu0%2Fs0?token={TOKEN}")
        expect(page.locator("#verdicts")).to_be_visible()
        found["conversation"] = serious(page)
    context.close()
    assert found == {"live": [], "conversation": []}


@pytest.mark.browser
def test_the_open_page_redraws_as_the_watch_scores_more(db, tmp_path, browser):  # noqa: F811
    watch_more(tmp_path, 0, 2)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(_app(db, tmp_path / "watch.db")) as url:
        page.goto(f"{url}/?token={TOKEN}")
        page.goto(f"{url}/watch?every=1")
        expect(page.locator("#failing tbody a")).to_have_count(1)
        watch_more(tmp_path, 2, 3)

        expect(page.locator("#totals")).to_contain_text("5 conversation(s) scored")
        expect(page.locator("#failing tbody a")).to_have_count(3)
        expect(page.locator("circle.point title")).to_have_count(
            len(httpx.get(f"{url}/api/watch", headers=HEADERS).json()["metrics"][0]["points"])
        )
    page.close()
