"""The watch's journal: verdicts over time, alerts and the newest conversations, redacted, kept
in its state file and read back read-only while the watch writes on."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from adk_eval._errors import EvalSetupError
from adk_eval._sources._stored import StoredConversation
from adk_eval.metrics import MetricResult
from adk_eval.production import open_sessions, watch_sessions
from adk_eval.production._score import score_stored
from adk_eval.production._watch._journal import WatchJournal
from adk_eval.production._watch._journal_view import JournalView
from adk_eval.production._watch._loop import _verdicts
from adk_eval.production._watch._verdict import Alert, WatchVerdict
from tests.production._watch.watching import CHEAP, write
from tests.production.stores import checksum


class OneTurn:
    """Fails a conversation that took more than one user turn, with evidence saying so."""

    name = "one_turn"

    def evaluate(self, trace) -> MetricResult:
        turns = [m for m in trace.messages if m.role == "user"]
        return MetricResult(passed=len(turns) == 1, evidence=[f"{len(turns)} user turn(s)"])


def first_failure(verdict: WatchVerdict) -> Alert | None:
    """Raises one alert, on the first failing verdict."""
    if verdict.passed is False and not getattr(first_failure, "said", False):
        first_failure.said = True  # type: ignore[attr-defined]
        return Alert(verdict.metric, 0.9, 0.5, (0.1, 0.6), (verdict.conversation,), at=verdict.at)
    return None


def test_a_watch_journals_verdicts_alerts_and_its_failing_conversations_redacted(
    tmp_path: Path,
) -> None:
    names = asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 6))
    two_turns = {names[i] for i in (0, 3)}  # every third conversation takes two turns
    state = tmp_path / "watch.db"
    summary = asyncio.run(
        watch_sessions(
            open_sessions(f"sqlite:///{tmp_path / 'store.db'}"), [*CHEAP, OneTurn()],
            idle=0.0, poll=0.01, until=6, state=state, on_verdict=first_failure,
        )
    )  # fmt: skip
    assert summary.scored == 6
    view = JournalView(state)
    assert view.metrics() == ["replied", "one_turn"]
    assert view.totals() == {"scored": 6, "verdicts": 12, "failed": 2, "alerts": 1}
    assert {row.name for row in view.failing()} == two_turns
    assert all(row.failed == ["one_turn"] for row in view.failing())
    assert len(view.passing()) == 4
    points = view.series("one_turn", buckets=4)
    assert sum(p.passed for p in points) == 4
    assert sum(p.failed for p in points) == 2
    assert all(p.rate is None or p.low <= p.rate <= p.high for p in points)
    (alert,) = view.alerts()
    assert alert.metric == "one_turn"
    assert alert.alert["conversations"][0] in two_turns
    record = view.conversation(sorted(two_turns)[0])
    assert record is not None
    verdict = next(v for v in record.verdicts if v["metric"] == "one_turn")
    assert (verdict["passed"], verdict["evidence"]) == (False, ["2 user turn(s)"])
    said = record.session.model_dump_json()
    assert "mail me at" in said
    assert "example.com" not in said
    assert view.conversation("shop/u9/none") is None
    view.close()


def test_the_live_view_reads_while_the_watch_writes_and_never_writes_itself(
    tmp_path: Path,
) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 4, two_turns_every=99))
    state = tmp_path / "watch.db"
    source = open_sessions(f"sqlite:///{tmp_path / 'store.db'}")
    asyncio.run(watch_sessions(source, CHEAP, idle=0.0, poll=0.01, until=2, state=state))
    before = checksum(state)
    view = JournalView(state)  # the watch has stopped; the view opens it read-only
    assert view.totals()["scored"] == 2
    assert checksum(state) == before

    async def again() -> None:
        await watch_sessions(source, CHEAP, idle=0.0, poll=0.01, until=2, state=state)

    asyncio.run(again())  # a watch writes on while the view is open
    assert view.totals()["scored"] == 4  # the same view sees it: no reopening
    view.close()


def test_only_the_newest_failing_and_passing_conversations_are_kept_whole() -> None:
    said = types.Content(role="model", parts=[types.Part(text="Done.")])
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE scored (name TEXT)")
    journal = WatchJournal(db, keep_failing=2, keep_passing=1)
    for index in range(6):
        events = [Event(author="desk", invocation_id="i", content=said, timestamp=float(index))]
        session = Session(id=f"s{index}", app_name="desk", user_id="u", events=events)
        stored = StoredConversation.build(session)
        metric = OneTurn() if index % 2 else CHEAP[0]  # OneTurn fails: no user turn at all
        result = asyncio.run(score_stored(stored, [metric]))
        journal.conversation(stored, result, _verdicts(result, stored, float(index), False))
        journal.write(everything=True)  # as each commit does
    view_rows = db.execute("SELECT name FROM kept ORDER BY at").fetchall()
    assert [row[0] for row in view_rows] == ["desk/u/s3", "desk/u/s4", "desk/u/s5"]
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 6  # the series keeps all


@pytest.mark.parametrize("kind", ["missing", "not sqlite", "another sqlite"])
def test_a_file_that_is_not_a_watchs_state_is_refused_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "state.db"
    if kind == "not sqlite":
        path.write_text("notes\n" * 100)
    elif kind == "another sqlite":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE runs (id INTEGER)")
    with pytest.raises(EvalSetupError, match="is not a watch's state file") as raised:
        JournalView(path)
    assert "\n" not in str(raised.value)
    assert kind == "missing" or path.stat().st_size > 0  # nothing made, nothing changed
    assert kind != "missing" or not path.exists()


def test_kept_conversations_are_written_at_most_every_second_verdicts_each_time() -> None:
    said = types.Content(role="model", parts=[types.Part(text="Done.")])
    db, now = sqlite3.connect(":memory:"), [0.0]
    journal = WatchJournal(db, clock=lambda: now[0])

    def scored(index: int, metric) -> None:
        events = [Event(author="desk", invocation_id="i", content=said, timestamp=float(index))]
        stored = StoredConversation.build(Session(id=f"s{index}", app_name="d", user_id="u",
                                                  events=events))  # fmt: skip
        result = asyncio.run(score_stored(stored, [metric]))
        journal.conversation(stored, result, _verdicts(result, stored, float(index), False))

    def kept() -> list[str]:
        return [row[0] for row in db.execute("SELECT name FROM kept ORDER BY at")]

    scored(0, CHEAP[0])
    journal.write()
    assert kept() == ["d/u/s0"]  # the first write writes them
    scored(1, CHEAP[0])
    scored(2, OneTurn())  # fails
    now[0] = 0.5
    journal.write()
    assert kept() == ["d/u/s0"]  # half a second later: they wait
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 3  # every verdict
    now[0] = 1.0
    journal.write()
    assert kept() == ["d/u/s0", "d/u/s1", "d/u/s2"]
