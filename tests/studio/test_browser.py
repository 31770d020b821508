"""The studio page in Debian's Chromium, driven by Playwright: the studio's acceptance scenarios.

Needs ``/usr/bin/chromium`` (``apt-get install chromium``; Playwright's own browser
download is not used). Without it the tests are skipped locally; CI sets
``ADK_EVAL_REQUIRE_BROWSER=1`` and installs it, so there they always run. With
``ADK_EVAL_SCREENSHOTS=docs/images`` the main screens are saved there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

from adk_eval.goldens import load_eval_set

from ..goldens.test_adk_eval_cli import adk_cli
from .conftest import TOKEN, agent_targets, clinic_case, running_server

ROOT = Path(__file__).resolve().parents[2]
SHOTS = os.environ.get("ADK_EVAL_SCREENSHOTS")

pytestmark = pytest.mark.browser

# The first ADK run in a fresh server does its lazy imports (seconds on a busy CI machine).
expect.set_options(timeout=20_000)


@contextmanager
def opened(browser: Browser, url: str) -> Iterator[Page]:
    """The studio page at `url` (with the token); no Content-Security-Policy violation after."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    refused: list[str] = []

    def note(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    page.on("console", note)
    page.goto(f"{url}/?token={TOKEN}")
    try:
        yield page
    finally:
        page.close()
    assert refused == [], "the page broke its Content-Security-Policy"


@pytest.fixture
def studio(tmp_path, browser):
    with (
        running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url,
        opened(browser, url) as page,
    ):
        yield page, tmp_path


def shot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def start(page: Page, target: str, message: str) -> None:
    card = page.locator(f'.target[data-target="{target}"]')
    card.locator('[data-field="first-message"]').fill(message)
    card.get_by_role("button", name="Start session").click()
    expect(page.locator('.action[data-kind="model"]')).to_be_visible()


def call_tool(page: Page, tool: str) -> None:
    page.locator('.action select[data-field="tool"]').last.select_option(tool)


def send_calls(page: Page) -> None:
    before = page.locator('.action[data-kind="model"]').get_attribute("data-request")
    page.get_by_role("button", name="Send tool calls").click()
    expect(
        page.locator(f'.action[data-kind="model"]:not([data-request="{before}"])')
    ).to_be_visible()


def final(page: Page, text: str) -> None:
    page.get_by_role("button", name="Final response").click()
    page.locator('[data-field="final-response"]').fill(text)
    page.locator(".pane-final").get_by_role("button", name="Send final response").click()
    expect(page.locator('[data-action="export"]')).to_be_visible()


def test_add_five_and_three_shows_eight_in_the_history(studio):
    page, _ = studio
    shot(page, "studio-start")
    start(page, "Toolbox", "What is 5+3?")
    expect(page.locator("details.instruction")).to_have_attribute("open", "")
    expect(page.locator("details.instruction pre")).to_contain_text(
        "You help the user with calculations"
    )
    call_tool(page, "add")
    page.locator('[data-field="add.a"]').fill("5")
    page.locator('[data-field="add.b"]').fill("3")
    send_calls(page)
    expect(page.locator(".entry-tool_call")).to_contain_text('add({"a":5,"b":3})')
    expect(page.locator(".entry-tool_result")).to_contain_text('"result": 8')
    shot(page, "studio-tool-result")


def test_a_bookmarked_url_without_the_token_still_works(studio):
    page, _ = studio  # opened once with ?token=, which set the cookie
    page.goto(page.url.split("?")[0])  # the bookmark: no token in the URL
    start(page, "Toolbox", "What is 2+2?")  # creating a session needs the token header
    call_tool(page, "add")
    page.locator('[data-field="add.a"]').fill("2")
    page.locator('[data-field="add.b"]').fill("2")
    send_calls(page)
    expect(page.locator(".entry-tool_result")).to_contain_text('"result": 4')


def test_forms_follow_the_tool_schemas(studio):
    page, _ = studio
    start(page, "Toolbox", "Find reports")
    call_tool(page, "search")
    query, limit = (
        page.locator('[data-field="search.query"]'),
        page.locator('[data-field="search.limit"]'),
    )
    expect(query).to_have_attribute("type", "text")
    expect(page.locator('label[for="search.query"] .required')).to_have_count(1)
    expect(limit).to_have_attribute("type", "number")
    expect(limit).to_have_value("10")
    expect(page.locator('label[for="search.limit"] .required')).to_have_count(0)

    page.get_by_role("button", name="Add another tool call").click()
    call_tool(page, "export_report")
    options = page.locator('select[data-field="export_report.format"] option').all_text_contents()
    assert options == ["— choose —", "json", "xml"]

    page.get_by_role("button", name="Add another tool call").click()
    call_tool(page, "create_order")
    expect(page.locator('fieldset[data-field="create_order.order"]')).to_be_visible()
    page.locator('[data-field="create_order.order.customer"]').fill("Ann")
    add_item = page.locator('[data-add="create_order.order.items"]')
    add_item.click()
    add_item.click()
    page.locator('[data-field="create_order.order.items.0.sku"]').fill("A-1")
    expect(page.locator('[data-field="create_order.order.items.0.quantity"]')).to_have_value("1")
    page.locator('[data-field="create_order.order.items.1.sku"]').fill("B-2")
    page.locator(".array-item").nth(1).get_by_role("button", name="Remove").click()
    expect(page.locator(".array-item")).to_have_count(1)
    page.locator('[data-field="create_order.order.ship_to.street"]').fill("1 High St")
    page.locator('[data-field="create_order.order.ship_to.city"]').fill("Leeds")
    page.locator('[data-field="create_order.order.express"]').check()
    shot(page, "studio-forms")

    page.locator('[data-field="search.query"]').fill("flu")
    page.locator('select[data-field="export_report.format"]').select_option("xml")
    send_calls(page)
    results = page.locator(".entry-tool_result")
    expect(results).to_have_count(3)
    expect(results.nth(1)).to_contain_text("report.xml")
    expect(results.nth(2)).to_contain_text('"order_id": "o-1001"')
    expect(results.nth(2)).to_contain_text('"lines": 1')
    expect(results.nth(2)).to_contain_text('"express": true')


def test_a_required_field_is_enforced_before_sending(studio):
    page, _ = studio
    start(page, "Toolbox", "search")
    call_tool(page, "search")
    page.get_by_role("button", name="Send tool calls").click()
    expect(page.locator(".problems")).to_contain_text("search.query: required")


def test_a_tool_that_raises_shows_its_error_and_the_session_goes_on(studio):
    page, _ = studio
    start(page, "Toolbox", "Get the data")
    call_tool(page, "fetch_data")
    page.locator('[data-field="fetch_data.url"]').fill("http://example.invalid")
    send_calls(page)
    expect(page.locator(".entry-tool_error")).to_contain_text(
        "fetch_data raised ConnectionError: cannot reach http://example.invalid"
    )
    shot(page, "studio-tool-error")
    call_tool(page, "add")  # a multi-step session: carry on after the error
    page.locator('[data-field="add.a"]').fill("1")
    page.locator('[data-field="add.b"]').fill("2")
    send_calls(page)
    expect(page.locator(".entry-tool_result")).to_contain_text('"result": 3')
    final(page, "The site is down, but 1+2 is 3.")
    kinds = page.locator(".history .entry").evaluate_all("nodes => nodes.map(n => n.dataset.kind)")
    assert kinds == ["user", "tool_call", "tool_error", "tool_call", "tool_result", "final"]


def test_a_running_tool_shows_its_time_and_can_be_cancelled(studio):
    page, _ = studio
    start(page, "Toolbox", "Slow one")
    call_tool(page, "slow_lookup")
    page.locator('[data-field="slow_lookup.seconds"]').fill("600")
    page.get_by_role("button", name="Send tool calls").click()
    running = page.locator('.entry[data-kind="running"]')
    expect(running).to_be_visible()
    first = float(running.locator(".elapsed").text_content().rstrip("s"))
    page.wait_for_timeout(400)
    assert float(running.locator(".elapsed").text_content().rstrip("s")) > first
    running.get_by_role("button", name="Cancel").click()
    expect(page.locator(".entry-tool_error")).to_contain_text("slow_lookup raised ToolCancelled")


def test_live_updates_keep_what_the_person_is_typing(studio):
    page, _ = studio
    start(page, "Toolbox", "Hello")
    page.get_by_role("button", name="Final response").click()
    area = page.locator('[data-field="final-response"]')
    area.click()
    page.keyboard.type("Hello ")
    page.evaluate("renderSession()")  # what every change notification does
    page.keyboard.type("there")
    expect(area).to_have_value("Hello there")
    expect(area).to_be_focused()


def test_output_schema_validation_refuses_a_missing_field(studio):
    page, _ = studio
    card = page.locator('.target[data-target="Structured"]')
    card.locator('[data-field="input.query"]').fill("capital of France")
    card.locator('[data-field="input.max_results"]').fill("3")
    card.get_by_role("button", name="Start session").click()
    expect(page.locator('.action[data-kind="model"]')).to_be_visible()
    expect(page.get_by_role("button", name="Call a tool (0)")).to_be_disabled()
    page.locator('[data-field="output.answer"]').fill("Paris")
    page.locator(".pane-final").get_by_role("button", name="Send final response").click()
    expect(page.locator(".problems")).to_contain_text("output.confidence: required")
    expect(page.locator('.action[data-kind="model"]')).to_be_visible()  # still waiting
    shot(page, "studio-output-schema")
    page.locator('[data-field="output.confidence"]').fill("0.9")
    page.locator(".pane-final").get_by_role("button", name="Send final response").click()
    expect(page.locator(".entry-final")).to_contain_text('"confidence": 0.9')


def test_outputs_are_text_never_html(studio):
    page, _ = studio
    start(page, "Toolbox", '<img src=x onerror="window.__pwned = 1">')
    call_tool(page, "search")
    page.locator('[data-field="search.query"]').fill("<script>window.__pwned = 2</script>")
    send_calls(page)
    expect(page.locator(".entry-tool_result")).to_contain_text(
        "<script>window.__pwned = 2</script> result 1"
    )
    expect(page.locator(".entry-user")).to_contain_text('<img src=x onerror="window.__pwned = 1">')
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".history img, .history script").count() == 0


@pytest.fixture
def case_studio(tmp_path, browser):
    with (
        running_server([clinic_case(tmp_path)], tmp_path / "studio.db") as url,
        opened(browser, url) as page,
    ):
        yield page, tmp_path


def test_an_eval_case_the_person_plays_the_model_and_a_scripted_patient_answers(case_studio):
    page, folder = case_studio
    card = page.locator('.target[data-target="clinic-case"]')
    expect(card).to_contain_text("First message: I feel unwell")
    card.get_by_role("button", name="Start session").click()
    expect(page.locator('.action[data-kind="model"]')).to_be_visible()
    expect(page.locator(".tools")).to_contain_text("mocked in this case")
    expect(page.locator('option[value="delete_record"]')).to_be_disabled()
    call_tool(page, "ask")
    page.locator('[data-field="ask.question"]').fill("Where does it hurt?")
    send_calls(page)
    expect(page.locator(".entry-tool_result")).to_contain_text("My head")  # the scripted patient
    call_tool(page, "note")
    page.locator('[data-field="note.text"]').fill("head")
    send_calls(page)
    page.get_by_role("button", name="Final response").click()
    page.locator('[data-field="final-response"]').fill("Rest and drink water.")
    before = page.locator('.action[data-kind="model"]').get_attribute("data-request")
    page.locator(".pane-final").get_by_role("button", name="Send final response").click()
    expect(
        page.locator(f'.action[data-kind="model"]:not([data-request="{before}"])')
    ).to_be_visible()
    expect(page.locator(".entry-user").nth(1)).to_contain_text("Thanks")  # the loop patient
    final(page, "Take care.")
    expect(page.locator(".result")).to_contain_text("Eval result: passed")
    shot(page, "studio-eval-case")
    page.locator('[data-action="export"]').click()
    expect(page.locator(".exported")).to_contain_text(str(folder / "clinic.evalset.json"))
    golden = load_eval_set(folder / "clinic.evalset.json").eval_cases[0]
    assert [i.user_content.parts[0].text for i in golden.conversation] == [
        "I feel unwell",
        "Thanks",
    ]


def test_an_eval_case_the_person_plays_the_patient(case_studio):
    page, _ = case_studio
    card = page.locator('.target[data-target="clinic-case"]')
    card.locator('select[data-field="role"]').select_option("tool_user:ask")
    card.get_by_role("button", name="Start session").click()
    action = page.locator('.action[data-kind="user"]')
    expect(action).to_contain_text('Tool: ask\nArgs: {"question": "Where does it hurt?"}')
    page.locator('[data-field="user-answer"]').fill("My knee")
    action.get_by_role("button", name="Send").click()
    expect(page.locator(".entry-tool_result")).to_contain_text("My knee")
    expect(page.locator(".result")).to_contain_text("Eval result: failed")  # no note was taken


@pytest.mark.adk_cli
def test_export_creates_then_appends_and_the_file_passes_adk_eval(studio):
    page, folder = studio
    for index, (question, a, b, answer) in enumerate(
        [("What is 5+3?", "5", "3", "8"), ("What is 2+2?", "2", "2", "4")]
    ):
        if index:  # the page opens on the start page: a click there re-renders it as we type
            page.get_by_role("button", name="New session").click()
            expect(page.get_by_role("heading", name="Choose what to play")).to_be_visible()
        start(page, "Toolbox", question)
        call_tool(page, "add")
        page.locator('[data-field="add.a"]').fill(a)
        page.locator('[data-field="add.b"]').fill(b)
        send_calls(page)
        final(page, f"The answer is {answer}.")
        page.locator('[data-action="export"]').click()
        expect(page.locator(".exported")).to_contain_text(str(folder / "toolbox.evalset.json"))
    expect(page.locator(".exported")).to_contain_text("2 cases in the file")
    shot(page, "studio-exported")

    eval_set = folder / "toolbox.evalset.json"
    cases = load_eval_set(eval_set).eval_cases
    assert [c.conversation[0].final_response.parts[0].text for c in cases] == [
        "The answer is 8.",
        "The answer is 4.",
    ]
    agent_dir = folder / "toolbox"
    shutil.copytree(ROOT / "examples" / "toolbox", agent_dir)
    completed = subprocess.run(
        [str(adk_cli()), "eval", str(agent_dir), str(eval_set)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)},
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "Tests passed: 2" in output
    assert json.loads(eval_set.read_text())["eval_set_id"] == "toolbox_evals"


def test_an_open_page_survives_a_studio_restart_without_reloading_in_a_loop(browser, tmp_path):
    import socket
    import time

    from .test_cli import start_studio

    with socket.socket() as probe:  # a port for both lives of the studio
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "restart-token-0123456789abcdef"
    first, base, _ = start_studio(tmp_path, port, token)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    views: list[str] = []
    page.on(
        "request",
        lambda r: views.append(r.url) if "/api/sessions/" in r.url and r.method == "GET" else None,
    )
    second = None
    try:
        page.goto(f"{base}/?token={token}")
        start(page, "Toolbox", "What is 5+3?")
        for a in ("5", "6", "7"):  # changes: the page has seen a high change version
            call_tool(page, "add")
            page.locator('[data-field="add.a"]').fill(a)
            page.locator('[data-field="add.b"]').fill("3")
            send_calls(page)
        expect(page.locator(".entry-tool_result")).to_have_count(3)
        final(page, "5+3 is 8.")  # done: the restarted studio has no change of it to report
        first.send_signal(signal.SIGINT)
        assert first.wait(20) == 0
        second, _, _ = start_studio(tmp_path, port, token)
        time.sleep(3)  # the page's event stream reconnects (it retries every second)
        page.locator("#session-list a").first.click()  # reopen the watched session
        views.clear()
        time.sleep(5)
        assert len(views) <= 3, f"{len(views)} view requests in 5 s: the page reloads in a loop"
        expect(page.locator(".entry-tool_result")).to_have_count(3)  # the session is still shown
    finally:
        page.close()
        for process in (first, second):
            if process is not None:
                if process.poll() is None:
                    process.kill()
                process.wait(30)
                process.stdout.close()
