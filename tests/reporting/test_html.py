"""The self-contained HTML report: its data, its safety, and the page in Chromium from file://."""

from __future__ import annotations

import asyncio
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import AgentTool, LongRunningFunctionTool

from adk_eval import (
    EvalCase,
    EvalResult,
    ScriptedUserAgent,
    ToolMock,
    UserAgents,
    run_eval_suite,
)
from adk_eval._suites._results import suite_from_results
from adk_eval.metrics import event_count_metric
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.reporting import suite_report
from adk_eval.reporting._html import render_html_report, write_html_report
from adk_eval.testing import ScriptedLlm, tool_call

from ..conftest import shot

HOSTILE = "</script><script>window.__pwned = 1</script><b>bold</b>"


def look_up(topic: str) -> dict:
    """Looks a topic up."""
    raise AssertionError("mocked")


def ask_manager(question: str) -> None:
    """Asks a manager (long-running)."""


def set_stage(stage: str) -> dict:
    """Moves the article to a stage."""
    raise AssertionError("mocked")


def staging(args, ctx):
    ctx.state.set("stage", args["stage"])
    return {"ok": True}


def count_turns(callback_context):
    """A callback of the user's: it runs for real, so the report names it."""
    return None


def said(text: str):
    return event_count_metric(
        "said_" + text.split()[0].lower(),
        "agent_message",
        lambda m: text in m.text,
        lambda n: n > 0,
    )


def cases() -> list[EvalCase]:
    inner = LlmAgent(
        name="researcher",
        model=ScriptedLlm([tool_call("look_up", {"topic": "owls"}), "Owls hunt at night."]),
        tools=[look_up],
    )
    boss = LlmAgent(
        name="boss",
        model=ScriptedLlm(
            [
                tool_call("researcher", {"request": "owls"}),
                tool_call("ask_manager", {"question": "publish?"}),
                tool_call("set_stage", {"stage": "published"}),
                "Published.",
            ]
        ),
        tools=[AgentTool(agent=inner), LongRunningFunctionTool(ask_manager), set_stage],
    )
    return [
        EvalCase(
            name="publishes",
            agent=boss,
            tool_mocks={
                "look_up": ToolMock.returning({"facts": HOSTILE}),
                "set_stage": ToolMock(staging),
            },
            initial_state={"session": {"stage": "draft"}},
            user_agents=UserAgents(
                tools={"ask_manager": ScriptedUserAgent(name="manager", script=[{"ok": True}])}
            ),
            first_message="Write about owls",
            metrics=[said("Published.")],
        ),
        EvalCase(
            name="forgets-to-greet",
            agent=LlmAgent(
                name="greeter", model=ScriptedLlm(["Bye."]), before_agent_callback=count_turns
            ),
            first_message="hi",
            metrics=[said("Hello")],
        ),
    ]


@pytest.fixture
def report() -> dict:
    # in a thread of its own: Playwright's sync API keeps an event loop in this one
    with ThreadPoolExecutor(1) as pool:
        return suite_report(pool.submit(asyncio.run, run_eval_suite(cases())).result())


def test_the_conversation_keeps_nesting_yields_and_responses(report):
    (publishes,) = [r for r in report["results"] if r["name"] == "publishes"]
    kinds = [(e["kind"], e.get("name"), tuple(e["path"])) for e in publishes["conversation"]]
    assert ("tool_call", "researcher", ()) in kinds
    assert ("tool_call", "look_up", ("researcher",)) in kinds  # under its AgentTool
    ask = next(e for e in publishes["conversation"] if e.get("name") == "ask_manager")
    assert ask["long_running"] is True
    answers = [e for e in publishes["conversation"] if e["kind"] == "tool_response"]
    assert [(a["author"], a["response"]) for a in answers] == [("user", {"ok": True})]


def test_no_value_can_close_the_script_element(report):
    html = render_html_report(report)
    assert html.count("</script>") == 2  # the data element and the page's script
    assert "window.__pwned" in html  # the value is there, escaped
    data = re.search(r'id="adk-eval-data">(.*?)</script>', html, re.S).group(1)
    assert json.loads(data) == json.loads(json.dumps(report))


@pytest.mark.browser
def test_the_page_opens_from_disk_with_no_network_and_shows_the_evidence(report, browser, tmp_path):
    path = tmp_path / "report.html"
    write_html_report(report, path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    requests, problems = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri())

    assert (
        page.locator("#title").inner_text()
        == "2 runs: 1 passed, 1 failed (pass rate 50% [9%, 91%]; 95% intervals)"
    )
    assert page.locator("#verdict").inner_text() == "FAILED: 1 of 2 run(s) did not pass"
    rows = page.locator("#cases tr")
    assert rows.count() == 2
    assert rows.nth(0).inner_text().startswith("forgets-to-greet")  # failing first
    detail = page.locator("#detail")  # the first failing case is open
    assert "FAILED said_hello" in detail.inner_text()
    assert "0 agent_message (filtered)" in detail.inner_text()  # the evidence
    assert "Bye." in detail.locator('[data-kind="model_text"]').inner_text()
    assert (
        detail.locator(".attribution")
        .inner_text()
        .startswith("attributed to: agent (confidence 0.90): the simulated user is scripted")
    )
    real = page.locator("#runs-for-real")
    assert real.locator("summary").inner_text() == (
        "runs for real: 1 item(s) besides the tools the cases provide"
    )
    real.locator("summary").click()
    assert real.locator("li").all_inner_texts() == [
        f"callbacks: {__name__}.count_turns (before_agent_callback of agent `greeter`)",
        *[f"sandbox: {line}" for line in report["runs_for_real"]["sandbox"]],
    ]

    page.select_option("#status", "passed")
    assert rows.count() == 1
    rows.nth(0).click()
    text = detail.inner_text()
    assert "calls researcher" in text.lower()  # labels are drawn in capitals
    calls = detail.locator('[data-kind="tool_call"]')
    look_up_call = calls.filter(has_text="calls look_up")
    assert look_up_call.locator(".mark.mock").inner_text() == "mock"  # mocked, inside its AgentTool
    assert look_up_call.locator(".mark.nested").inner_text() == "inside researcher"
    assert "answered by a user agent" in calls.filter(has_text="ask_manager").inner_text()
    answer = detail.locator('[data-kind="tool_result"]', has_text="answers ask_manager")
    assert '"ok": true' in answer.inner_text()
    asked = calls.filter(has_text="ask_manager").inner_text()  # the answer once, not here too
    assert '"ok"' not in asked
    assert "waits for the user's answer, below" in asked
    assert calls.filter(has_text="calls researcher").locator(".mark").inner_text() == "agent tool"
    # the state change as a diff against the state before it
    change = detail.locator('[data-kind="state_change"]')
    assert 'stage: "draft" → "published"' in change.inner_text()
    shot(page, "report-case")
    assert HOSTILE in text  # drawn as text
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#detail b").count() == 0

    page.select_option("#status", "all")
    page.fill("#search", "greet")
    assert rows.count() == 1
    assert [url for url in requests if not url.startswith("file://")] == []
    assert problems == []
    page.close()


@pytest.mark.browser
def test_a_thousand_cases_five_times_and_a_200_turn_conversation_stay_usable(browser, tmp_path):
    from .test_viewer import report as stored_report

    outcomes = ["passed", "passed", "failed", "passed", "passed"]
    big = stored_report(
        {f"case{i:04}": outcomes[i % 5 :] + outcomes[: i % 5] for i in range(1000)},
        "2026-11-22T10:00",
    )
    long_talk = []
    for turn in range(200):
        long_talk += [
            {
                "kind": "message",
                "role": "user",
                "text": f"question {turn}",
                "author": "user",
                "path": [],
            },
            {
                "kind": "tool_call",
                "name": "look_up",
                "args": {"turn": turn},
                "response": {"n": turn},
                "long_running": False,
                "answered_by": "mock",
                "author": "agent",
                "path": [],
            },
            {
                "kind": "message",
                "role": "agent",
                "text": f"answer {turn}",
                "author": "agent",
                "path": [],
            },
        ]
    (chatty,) = [r for r in big["results"] if r["name"] == "case0999" and r["attempt"] == 0]
    chatty.update(conversation=long_talk, turns=200, outcome="error", status="error")
    path = tmp_path / "big.html"
    write_html_report(big, path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    rows = page.locator("#cases tr")
    assert page.locator("#count").inner_text() == "5000 of 5000 runs"
    assert rows.count() == 100  # one page in the document, not 5,000 rows
    assert page.locator("#page").inner_text() == "page 1 of 50"
    # the 200-turn case errored, so it sorts first and opens: every entry is drawn
    assert rows.nth(0).inner_text().startswith("case0999")
    assert page.locator("#detail .entry").count() == 600
    assert "answer 199" in page.locator("#detail").inner_text()
    page.click("#next")
    assert page.locator("#page").inner_text() == "page 2 of 50"
    page.select_option("#status", "failed")
    assert page.locator("#count").inner_text() == "1000 of 5000 runs"
    page.fill("#search", "case0042")
    assert rows.count() == 1
    assert errors == []
    page.close()


@pytest.mark.browser
def test_repeats_are_grouped_by_case_and_side_by_side_keeps_every_column_in_view(browser, tmp_path):
    with ThreadPoolExecutor(1) as pool:
        suite = pool.submit(asyncio.run, run_eval_suite(cases(), repeat=3)).result()
    path = tmp_path / "repeats.html"
    write_html_report(suite_report(suite), path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.as_uri())

    names = page.locator("#cases tr td:first-child").all_inner_texts()
    assert names == ["forgets-to-greet"] * 3 + ["publishes"] * 3  # a case's runs together
    runs = page.locator("#cases tr td:nth-child(2)").all_inner_texts()
    assert runs == ["1", "2", "3"] * 2  # counted from 1, in order
    assert page.locator("#cases tr.again").count() == 4  # the repeats under their case's first
    page.click("#side-by-side")
    columns = page.locator("#detail .side-by-side .column")
    assert columns.count() == 3
    for index in range(3):
        box = columns.nth(index).bounding_box()
        assert box["x"] >= 0, (index, box)
        assert box["x"] + box["width"] <= 1280, (index, box)
    assert columns.nth(2).inner_text().startswith("run 3")
    page.close()


BUSY = ProviderStats(
    calls=3,
    retries=3,
    rate_limited=2,
    server_errors=1,
    waited_s=4.1,
    cache_hits=1,
    saved_usd=0.0012,
    recorded=2,
)
UNPRICED = ProviderStats(calls=1, cache_hits=2, cache_misses=1, saved_usd=None)


def provider_report() -> dict:
    """Runs that met retries, the cache and a cassette; one that met nothing, one hostile."""
    runs = [
        EvalResult(name="books", status="failed", provider=BUSY),
        EvalResult(name="asks", status="passed", provider=UNPRICED),
        EvalResult(name="greets", status="passed", provider=ProviderStats(calls=1)),
        EvalResult(name="tampered", status="passed"),
        EvalResult(name="old", status="passed"),
    ]
    names = [run.name for run in runs]
    report = suite_report(suite_from_results(runs, case_names=names, repeat=1, duration_ms=1.0))
    results = {run["name"]: run for run in report["results"]}
    results["tampered"]["provider"]["retries"] = HOSTILE  # a stored report someone edited
    del results["old"]["provider"]  # a report stored before provider stats were kept
    return report


@pytest.mark.browser
def test_the_page_shows_each_runs_provider_line_and_the_suites_as_text(browser, tmp_path):
    report = provider_report()
    path = tmp_path / "providers.html"
    write_html_report(report, path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())

    total = BUSY + UNPRICED + ProviderStats(calls=1)
    assert page.locator("#meta").inner_text().endswith(f"; providers: {total.line()}")
    detail = page.locator("#detail")  # the failing run opens first
    assert detail.locator(".provider").inner_text() == f"providers: {BUSY.line()}"
    assert BUSY.line() == (
        "3 retries (2 rate-limited, 1 server errors), waited 4.1 s; "
        "cache 1 hit / 0 misses, saved $0.0012; cassette 0 replayed / 2 recorded"
    )
    shown = {}
    for name in ("asks", "greets", "tampered", "old"):
        page.fill("#search", name)
        page.locator("#cases tr").nth(0).click()
        shown[name] = detail.locator(".provider").all_inner_texts()
    assert shown["asks"] == [f"providers: {UNPRICED.line()}"]
    assert UNPRICED.line() == (
        "cache 2 hits / 1 miss, saved an unknown amount (a model without a known price)"
    )
    assert shown["greets"] == []  # nothing worth a line
    assert shown["old"] == []
    assert shown["tampered"] == [f"providers: {HOSTILE} retries, waited 0.0 s"]  # as text
    assert page.evaluate("window.__pwned") is None
    assert detail.locator("b").count() == 0
    assert problems == []
    page.close()


@pytest.mark.browser
def test_a_suite_whose_calls_met_nothing_says_nothing_about_providers(browser, tmp_path):
    runs = [EvalResult(name="greets", status="passed", provider=ProviderStats(calls=1))]
    suite = suite_from_results(runs, case_names=["greets"], repeat=1, duration_ms=1.0)
    path = tmp_path / "quiet.html"
    write_html_report(suite_report(suite), path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(path.as_uri())
    assert "providers" not in page.locator("#meta").inner_text()
    assert page.locator("#detail .provider").count() == 0
    page.close()
