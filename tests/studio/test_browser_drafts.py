"""The studio page in Chromium: nothing typed is lost, and what happened to an answer is said.

A typed answer survives a reload, a studio restart and shows up in a second tab;
a stopped studio is named as such (not "Failed to fetch"); an answer a remote
app no longer waits for is refused on the page with the reason.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

from adk_eval.studio import StudioUnavailableError

from .conftest import TOKEN, agent_targets, running_server
from .test_browser import call_tool, start
from .test_remote_sessions import run_app

pytestmark = pytest.mark.browser

expect.set_options(timeout=20_000)

UNREACHABLE = "The studio server is not reachable; is `adk-eval studio` still running?"


@contextmanager
def tabs(browser: Browser) -> Iterator[BrowserContext]:
    """One browser profile (its tabs share localStorage); no Content-Security-Policy violation."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    refused: list[str] = []

    def note(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    context.on("console", note)
    try:
        yield context
    finally:
        context.close()
    assert refused == [], "the page broke its Content-Security-Policy"


def tab(context: BrowserContext, url: str, session: str = "", token: str = TOKEN) -> Page:
    page = context.new_page()
    page.goto(f"{url}/?token={token}{'#' + session if session else ''}")
    return page


def final_response(page: Page):
    return page.locator('[data-field="final-response"]')


def test_a_typed_answer_survives_a_reload_and_shows_up_in_a_second_tab(browser, tmp_path):
    with (
        running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url,
        tabs(browser) as context,
    ):
        first = tab(context, url)
        start(first, "Toolbox", "What is 5+3?")
        session = first.evaluate("location.hash.slice(1)")
        call_tool(first, "add")
        first.locator('[data-field="add.a"]').fill("5")
        first.locator('[data-field="add.b"]').fill("3")
        first.get_by_role("button", name="Final response", exact=True).click()
        final_response(first).fill("The answer is 8.")

        first.reload()
        expect(final_response(first)).to_have_value("The answer is 8.")

        second = tab(context, url, session)
        expect(final_response(second)).to_have_value("The answer is 8.")
        second.get_by_role("button", name="Call a tool (").click()  # the calls are kept too
        expect(second.locator('select[data-field="tool"]')).to_have_value("add")
        expect(second.locator('[data-field="add.a"]')).to_have_value("5")
        expect(second.locator('[data-field="add.b"]')).to_have_value("3")
        second.get_by_role("button", name="Final response", exact=True).click()
        final_response(first).fill("The answer is 8!")  # typed on, in the first tab
        expect(final_response(second)).to_have_value("The answer is 8!")

        second.locator(".pane-final").get_by_role("button", name="Send final response").click()
        expect(second.locator(".entry-final")).to_contain_text("The answer is 8!")
        first.reload()  # sent: the draft is gone with its request
        expect(first.locator(".entry-final")).to_contain_text("The answer is 8!")
        expect(first.locator('[data-field="next-message"]')).to_have_value("")
        assert first.evaluate("Object.keys(localStorage)") == []
        first.locator('[data-field="next-message"]').fill("And 2+2?")  # the next message too
        first.reload()
        expect(first.locator('[data-field="next-message"]')).to_have_value("And 2+2?")


def test_a_stopped_studio_is_named_and_the_typed_answer_outlives_its_restart(browser, tmp_path):
    from .test_cli import start_studio

    with socket.socket() as probe:  # a port for both lives of the studio
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "drafts-token-0123456789abcdef"
    first, url, _ = start_studio(tmp_path, port, token)
    second = None
    try:
        with tabs(browser) as context:
            page = tab(context, url, token=token)
            start(page, "Toolbox", "What is 5+3?")
            page.get_by_role("button", name="Final response", exact=True).click()
            final_response(page).fill("It is 8.")
            before = page.locator('.action[data-kind="model"]').get_attribute("data-request")

            first.send_signal(signal.SIGINT)
            assert first.wait(20) == 0
            banner = page.locator("#connection")
            expect(banner).to_be_visible()
            expect(banner).to_contain_text(UNREACHABLE)
            page.locator(".pane-final").get_by_role("button", name="Send final response").click()
            expect(page.locator(".action .problems")).to_contain_text(UNREACHABLE)
            expect(page.locator(".action .problems")).not_to_contain_text("Failed to fetch")

            second, _, _ = start_studio(tmp_path, port, token)
            expect(banner).to_be_hidden()
            # the restarted studio asks the model call again, under a new request id
            asked_again = page.locator(f'.action[data-kind="model"]:not([data-request="{before}"])')
            expect(asked_again).to_be_visible()
            expect(final_response(page)).to_have_value("It is 8.")
            page.locator(".pane-final").get_by_role("button", name="Send final response").click()
            expect(page.locator(".entry-final")).to_contain_text("It is 8.")
    finally:
        for process in (first, second):
            if process is not None:
                if process.poll() is None:
                    process.kill()
                process.wait(30)
                process.stdout.close()


def remote_session(url: str) -> str:
    """The id of the studio's one remote session, once it has a pending model call."""
    with httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}) as http:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for summary in http.get("/api/sessions").json():
                if summary["kind"] == "remote" and summary["phase"] == "awaiting_model":
                    return str(summary["id"])
            time.sleep(0.05)
    raise AssertionError("no remote model call arrived")


def test_when_the_remote_app_stops_waiting_the_page_says_so(browser, tmp_path):
    failed: list[BaseException] = []

    def app() -> None:
        try:
            asyncio.run(run_app(url, "Anyone there?", timeout=3))
        except StudioUnavailableError as error:
            failed.append(error)

    with (
        running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url,
        tabs(browser) as context,
    ):
        running = threading.Thread(target=app)
        running.start()
        page = tab(context, url, remote_session(url))
        expect(page.locator('[data-answer-by=""]')).to_contain_text("The app waits for your answer")
        page.get_by_role("button", name="Final response", exact=True).click()
        final_response(page).fill("Too late")
        running.join(20)
        assert failed, "the app's run should have given up"
        expect(page.locator(".entry-error")).to_contain_text(
            "The app stopped waiting for the answer to this model call of `triage`: "
            "its timeout (3 s) passed"
        )
        expect(page.locator('.action[data-kind="model"]')).to_have_count(0)


def test_an_answer_past_the_apps_deadline_is_refused_on_the_page(browser, tmp_path):
    request = {"contents": [{"role": "user", "parts": [{"text": "Anyone there?"}]}], "tools": []}
    with (
        running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url,
        tabs(browser) as context,
        httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}) as http,
    ):
        http.post(  # an app that then dies: it never says it stopped waiting
            "/api/remote/model-requests",
            json={
                "client_session": "app/u/s",
                "agent_name": "triage",
                "request": request,
                "timeout": 3,
            },
        ).raise_for_status()
        page = tab(context, url, remote_session(url))
        final_response(page).fill("Too late")
        time.sleep(3.5)
        page.locator(".pane-final").get_by_role("button", name="Send final response").click()
        notice = page.locator("[data-notice]")
        expect(notice).to_contain_text("Your answer was not sent")
        expect(notice).to_contain_text("no longer awaited: the app that asked stopped waiting")
        expect(page.locator('.action[data-kind="model"]')).to_have_count(0)
