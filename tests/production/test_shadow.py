"""Shadow replay: a candidate agent against a conversation a production store recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService

from adk_eval import STOP_SIGNAL
from adk_eval._cli._main import main
from adk_eval.metrics import event_count_metric
from adk_eval.production import SessionFilter, ShadowDivergenceError, open_sessions, shadow_session
from adk_eval.testing import ScriptedLlm, tool_call

from . import stores

RAN: list[str] = []


def lookup(order: str) -> dict:
    """Looks an order up (a real call to the order service)."""
    RAN.append(f"lookup {order}")
    return {"order": order, "status": "shipped"}


def refund(order: str) -> dict:
    """Refunds an order (moves money)."""
    RAN.append(f"refund {order}")
    return {"refunded": order}


def said(text: str):
    return event_count_metric(
        f"said_{text.split()[0].lower()}",
        "agent_message",
        lambda m: text in m.text,
        lambda n: n >= 1,
    )


METRICS = [
    event_count_metric("looked_up", "tool_call", lambda c: c.name == "lookup", lambda n: n >= 1),
    said("Shipped"),
]


def production_agent(model: ScriptedLlm) -> LlmAgent:
    return LlmAgent(name="support", model=model, tools=[lookup, refund])


def original() -> ScriptedLlm:
    """What ran in production: look the order up, say it shipped; then thank the user."""
    return ScriptedLlm(
        [
            tool_call("lookup", {"order": "A1"}),
            "Shipped: your order A1 is on its way.",
            "You're welcome!",
        ]
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """One production conversation of two user turns, stored by ADK's DatabaseSessionService."""
    path = tmp_path_factory.mktemp("prod") / "sessions.db"

    async def record():
        service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")
        runner = Runner(
            agent=production_agent(original()), app_name="support", session_service=service
        )
        session = await service.create_session(
            app_name="support", user_id="ann", state={"user:tier": "gold"}
        )
        for text in ("Where is my order A1?", "Thanks!"):
            async for _ in runner.run_async(
                user_id="ann", session_id=session.id, new_message=stores.message(text)
            ):
                pass
        await stores.close(service)

    asyncio.run(record())
    RAN.clear()
    return path


@pytest.fixture(scope="module")
def stored(store):
    """The stored conversation, as `open_sessions` reads it."""

    async def read():
        (found,) = [s async for s in open_sessions(f"sqlite:///{store}").sessions(SessionFilter())]
        return found

    return asyncio.run(read())


@pytest.fixture(autouse=True)
def _nothing_ran():
    RAN.clear()
    yield
    assert RAN == []  # no tool body of the candidate ever runs: recorded answers or refusals


async def test_the_same_agent_gets_the_same_verdicts(stored):
    result = await shadow_session(stored, production_agent(original()), metrics=METRICS)

    assert result.outcome == "same", result.explain()
    assert result.new_calls == result.recorded_calls == [['lookup{"order": "A1"}'], []]
    assert result.new_replies == result.recorded_replies
    assert result.state_changes == {}
    assert result.new.initial_state == {"user": {"tier": "gold"}}  # what the events did not set
    assert {n: m.passed for n, m in result.new.metrics.items()} == {
        "looked_up": True,
        "said_shipped": True,
    }


async def test_a_tool_the_recording_never_answered_stops_the_run_and_never_runs(stored):
    candidate = ScriptedLlm(
        [tool_call("lookup", {"order": "A1"}), tool_call("refund", {"order": "A1"}), "Refunded."]
    )
    result = await shadow_session(stored, production_agent(candidate), metrics=METRICS)

    assert result.outcome == "error", result.explain()
    assert result.new.error.type == "EvalToolError"
    assert "`refund` was called by agent `support` during eval but no mock was provided" in (
        result.new.error.message
    )
    assert "refund" in result.explain()


async def test_a_different_answer_is_shown_beside_the_recorded_one(stored):
    candidate = ScriptedLlm(
        [tool_call("lookup", {"order": "A1"}), "It left the warehouse.", "You're welcome!"]
    )
    result = await shadow_session(stored, production_agent(candidate), metrics=METRICS)

    assert result.outcome == "worse", result.explain()  # it no longer says "Shipped"
    explained = result.explain()
    assert "[pass -> FAIL] said_shipped" in explained
    assert "recorded reply: Shipped: your order A1 is on its way." in explained
    assert "new reply:      It left the warehouse." in explained


async def test_a_call_the_recording_never_answered_stops_there_by_default(stored):
    candidate = ScriptedLlm([tool_call("lookup", {"order": "B7"}), "Shipped: B7.", "Bye."])
    result = await shadow_session(stored, production_agent(candidate), metrics=METRICS)

    assert result.outcome == "diverged", result.explain()
    assert ShadowDivergenceError.__name__ in result.new.error.message, result.explain()
    assert "the conversation left the recording" in result.new.error.message
    assert 'called with {"order": "B7"}' in result.divergence
    assert 'only for {"order": "A1"}' in result.divergence


async def test_a_divergence_continues_with_a_model_playing_the_recorded_user(stored):
    candidate = ScriptedLlm(
        [tool_call("lookup", {"order": "B7"}), "Shipped: B7 is on its way.", "Glad to help."]
    )

    def user(request):  # the LLM user, offline: one question, then done
        last = request.contents[-1].parts[0].text
        return STOP_SIGNAL if "Glad" in last else "And when will it arrive?"

    stand_in = ScriptedLlm(responder=user)

    result = await shadow_session(
        stored, production_agent(candidate), metrics=METRICS, continue_with=stand_in
    )

    assert result.outcome != "diverged", result.explain()
    assert result.new.status != "error", result.explain()
    assert 'called with {"order": "B7"}' in result.divergence
    assert result.continued
    assert result.changed
    users = [e for e in result.new.events if e.author == "user" and e.content and e.content.parts]
    texts = [p.text for e in users for p in e.content.parts if p.text]
    assert "And when will it arrive?" in texts  # the model played the user after the split
    assert "Thanks!" not in texts  # the recorded turn no longer fit


CANDIDATES = """
from adk_eval.testing import ScriptedLlm, tool_call
from tests.production.test_shadow import STOP_SIGNAL, original, production_agent

root_agent = production_agent(original())
worse = production_agent(
    ScriptedLlm([tool_call("lookup", {"order": "A1"}), "It left the warehouse.", "Bye."])
)
elsewhere = production_agent(
    ScriptedLlm([tool_call("lookup", {"order": "B7"}), "Shipped: B7.", "Glad to help."])
)
stand_in = ScriptedLlm(
    responder=lambda r: STOP_SIGNAL if "Glad" in r.contents[-1].parts[0].text else "When?"
)
not_an_agent = 42
"""
METRICS_FILE = """
from tests.production.test_shadow import METRICS
"""


def shadow(tmp_path: Path, store: Path, *args: str) -> tuple[object, list]:
    (tmp_path / "candidates.py").write_text(CANDIDATES)
    (tmp_path / "shadow_metrics.py").write_text(METRICS_FILE)
    report = tmp_path / "shadow.json"
    before = stores.checksum(store)
    result = CliRunner().invoke(
        main,
        [
            "shadow",
            f"sqlite:///{store}",
            "--metrics",
            str(tmp_path / "shadow_metrics.py"),
            "--json",
            str(report),
            *args,
        ],
    )
    assert stores.checksum(store) == before  # the store is only read
    return result, json.loads(report.read_text()) if report.exists() else []


@pytest.fixture
def _own_modules(isolated_imports):
    """Each test's candidates file is a module of its own."""


@pytest.mark.usefixtures("_own_modules")
def test_the_command_reports_the_same_agent_as_same_and_exits_0(tmp_path, store):
    result, report = shadow(tmp_path, store, "--agent", str(tmp_path / "candidates.py"))

    assert result.exit_code == 0, result.output
    assert "SAME     support/ann/" in result.output
    assert "(no difference)" in result.output
    assert "1 session(s): 1 same, 0 better, 0 worse, 0 diverged, 0 error" in result.output
    (only,) = report
    assert only["outcome"] == "same"
    assert only["metrics"]["said_shipped"] == {"recorded": "pass", "new": "pass"}
    assert only["calls"]["new"] == only["calls"]["recorded"]


@pytest.mark.usefixtures("_own_modules")
def test_a_worse_candidate_is_explained_and_fails_the_command(tmp_path, store):
    agent = f"{tmp_path / 'candidates.py'}:worse"
    result, report = shadow(tmp_path, store, "--agent", agent)

    assert result.exit_code == 1, result.output
    assert "WORSE    support/ann/" in result.output
    assert "[pass -> FAIL] said_shipped" in result.output
    assert "new reply:      It left the warehouse." in result.output
    assert report[0]["replies"]["new"][0] == ["It left the warehouse."]
    only_divergence = shadow(tmp_path, store, "--agent", agent, "--fail-on", "diverged")[0]
    assert only_divergence.exit_code == 0, only_divergence.output


@pytest.mark.usefixtures("_own_modules")
def test_a_divergence_stops_or_continues_with_the_given_model(tmp_path, store):
    agent = f"{tmp_path / 'candidates.py'}:elsewhere"
    stopped, report = shadow(tmp_path, store, "--agent", agent)
    assert stopped.exit_code == 0, stopped.output  # diverging is reported, not a failure
    assert "DIVERGED support/ann/" in stopped.output
    assert 'called with {"order": "B7"}' in report[0]["divergence"]

    model = f"{tmp_path / 'candidates.py'}:stand_in"
    continued, report = shadow(tmp_path, store, "--agent", agent, "--continue-with", model)
    assert continued.exit_code in (0, 1), continued.output
    assert report[0]["outcome"] in ("same", "better", "worse"), continued.output
    assert report[0]["new_status"] != "error"
    assert report[0]["continued"]
    assert report[0]["changed"]
    assert "a model played the user from there" in continued.output  # explained, though same


@pytest.mark.usefixtures("_own_modules")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "{tmp}/candidates.py:nobody"], "has no `nobody`"),
        (["--agent", "{tmp}/candidates.py:not_an_agent"], "is a int, not an ADK agent"),
        (["--agent", "{tmp}/missing.py"], "no such file or module"),
        (["--agent", "{tmp}/candidates.py", "--continue-with", "no-such-model"], "model"),
    ],
)
def test_a_bad_agent_or_model_is_one_line(tmp_path, store, args, message):
    words = [a.format(tmp=tmp_path) for a in args]
    result, report = shadow(tmp_path, store, *words)

    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("adk-eval: error: "), line
    assert message in line, line
    assert report == []


@pytest.mark.usefixtures("_own_modules")
def test_the_filters_choose_the_sessions(tmp_path, store):
    agent = str(tmp_path / "candidates.py")
    result, report = shadow(tmp_path, store, "--agent", agent, "--user", "nobody")

    assert result.exit_code == 0, result.output
    assert "no stored session matched the filters" in result.output
    assert report == []


@pytest.mark.parametrize("raw", [False, True], ids=["redacted", "as stored"])
async def test_the_candidates_model_sees_markers_unless_told_otherwise(tmp_path, raw):
    from google.adk.sessions import Session

    from adk_eval.production import Redactor, shadow_sessions
    from adk_eval.testing import text_event, user_event

    stored = Session(
        id="s",
        app_name="shop",
        user_id="ann",
        events=[user_event("mail me at ann@example.com"), text_event("shop", "Will do.")],
    )
    path = tmp_path / "s.json"
    path.write_text(stored.model_dump_json())
    seen: list[str] = []

    def candidate(request):
        seen.extend(p.text for c in request.contents for p in c.parts or [] if p.text)
        return "Will do."

    agent = LlmAgent(name="shop", model=ScriptedLlm(responder=candidate))
    redactor = Redactor.none() if raw else None
    (result,) = await shadow_sessions(open_sessions(str(path)), agent, redactor=redactor)

    assert result.outcome == "same"
    assert any("ann@example.com" in text for text in seen) == raw
    assert any("<EMAIL_1>" in text for text in seen) != raw


# -- what a replay reads: closed conversations with their words -------------------------


def _answered(session_id: str, *later: str, updated: float = 0.0):
    """A stored conversation: the user asks, the agent answers; `later` user messages after."""
    from google.adk.sessions import Session

    from adk_eval.testing import text_event, user_event

    events = [user_event("Where is A1?"), text_event("shop", "Shipped."), *map(user_event, later)]
    return Session(
        id=session_id, app_name="shop", user_id="ann", events=events, last_update_time=updated
    )


async def test_an_open_conversation_is_left_out_of_a_replay_and_named_unless_included(tmp_path):
    import time

    from adk_eval.production import shadow_sessions

    waiting = _answered("s2", "And A2?", updated=time.time())  # unanswered a moment ago
    path = tmp_path / "sessions.json"
    path.write_text(f"[{_answered('s1').model_dump_json()}, {waiting.model_dump_json()}]")

    def candidate() -> LlmAgent:
        return LlmAgent(name="shop", model=ScriptedLlm(["Shipped."] * 3))

    results = await shadow_sessions(open_sessions(str(path)), candidate())

    assert [result.name for result in results] == ["shop/ann/s1"]
    assert results.counts.opened.count == 1
    assert results.counts.opened.first == [
        ("shop/ann/s2", "the agent has not answered the user's last message yet")
    ]
    included = await shadow_sessions(open_sessions(str(path)), candidate(), include_open=True)
    assert sorted(result.name for result in included) == ["shop/ann/s1", "shop/ann/s2"]


async def test_a_trace_replays_marked_with_what_it_lacks_and_one_without_words_is_left_out(
    tmp_path,
):
    from adk_eval.metrics import state_metric
    from adk_eval.production import shadow_sessions
    from tests.realism.traces import write_traces

    turns = [("Where is A1?", "Shipped.")]
    spec = write_traces(tmp_path / "t.jsonl", [("t1", turns, True), ("t2", turns, False)])
    candidate = LlmAgent(name="desk", model=ScriptedLlm(["Shipped."]), output_key="reply")
    replied = state_metric("replied", "session", "reply", lambda value: bool(value))

    results = await shadow_sessions(open_sessions(spec), candidate, metrics=[replied])

    (result,) = results
    assert result.name.endswith("/t1")
    assert result.recorded.metrics["replied"].verdict == "n/a"  # spans carry no state
    assert result.new.metrics["replied"].verdict == "pass"
    assert result.outcome == "same"  # a metric that cannot judge the recording tells nothing
    assert result.lacks == {"state", "usage"}  # nor token counts
    assert "the recording lacks the state and usage" in result.explain()
    assert result.to_dict()["lacks"] == ["state", "usage"]
    assert (results.counts.lacking.count, results.counts.lacking.first) == (1, ["t2"])


@pytest.mark.usefixtures("_own_modules")
def test_the_command_names_the_open_conversations_it_left_out(tmp_path):
    import time

    waiting = _answered("s2", "And A2?", updated=time.time())
    path = tmp_path / "sessions.json"
    path.write_text(f"[{_answered('s1').model_dump_json()}, {waiting.model_dump_json()}]")
    (tmp_path / "shop_agent.py").write_text(
        "from google.adk.agents import LlmAgent\n"
        "from adk_eval.testing import ScriptedLlm\n"
        "root_agent = LlmAgent(name='shop', model=ScriptedLlm(['Shipped.'] * 3))\n"
    )

    result = CliRunner().invoke(
        main, ["shadow", str(path), "--agent", str(tmp_path / "shop_agent.py")]
    )

    assert result.exit_code == 0, result.output
    assert "1 open conversation(s), still being written, left out (--include-open" in result.output
    assert "  shop/ann/s2: the agent has not answered the user's last message yet" in result.output
    assert "1 session(s): 1 same" in result.output
