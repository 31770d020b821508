"""One stored conversation built complete, and the one stream of them: what it hands on, counts."""

from __future__ import annotations

import time

import anyio
import pytest
from google.adk.sessions import Session

from adk_eval._errors import EvalSetupError
from adk_eval._sources._files import refuse
from adk_eval._sources._redact._redactor import Redactor
from adk_eval._sources._source import GivenSessions
from adk_eval._sources._specs import open_sessions
from adk_eval._sources._stored import KEEP_NAMES, StoredConversation, StoredConversations
from adk_eval.testing import text_event, user_event


def conversation(session_id: str, *later: str, updated: float = 0.0) -> Session:
    """The user asks, the agent answers; `later`: user messages the agent has not answered."""
    events = [
        user_event("mail ann@example.com"),
        text_event("desk", "Sent."),
        *map(user_event, later),
    ]
    return Session(
        id=session_id, app_name="app", user_id="u", events=events, last_update_time=updated
    )


def test_a_record_is_built_complete_redacted_and_says_what_it_lacks():
    session = conversation("s1")

    stored = StoredConversation.build(
        session, lacks=frozenset({"state"}), opened="why", redactor=Redactor()
    )
    as_stored = StoredConversation.build(session, redactor=Redactor.none())

    assert (stored.name, stored.lacks, stored.opened) == ("app/u/s1", {"state"}, "why")
    assert stored.session.events[0].content.parts[0].text == "mail <EMAIL_1>"
    assert stored.redacted is not None
    assert stored.redacted["email"] == 1
    assert session.events[0].content.parts[0].text == "mail ann@example.com"  # only read
    assert as_stored.session is session
    assert (as_stored.redacted, as_stored.lacks, as_stored.opened) == (None, frozenset(), None)


async def test_the_stream_leaves_out_open_conversations_and_counts_what_it_redacted():
    now = time.time()
    sessions = [conversation("s1"), conversation("s2", "hello?", updated=now), conversation("s3")]

    stream = StoredConversations(GivenSessions(sessions))
    names = [stored.name async for stored in stream]
    included = StoredConversations(GivenSessions(sessions), include_open=True)
    opened = [stored.opened async for stored in included]

    assert names == ["app/u/s1", "app/u/s3"]
    assert stream.counts.read == 2
    assert stream.counts.opened.count == 1
    assert stream.counts.opened.first == [
        ("app/u/s2", "the agent has not answered the user's last message yet")
    ]
    assert stream.counts.redacted is not None
    assert (stream.counts.redacted.sessions, stream.counts.redacted["email"]) == (2, 2)
    assert opened == [None, "the agent has not answered the user's last message yet", None]
    assert included.counts.opened.count == 1


async def test_a_conversation_lacking_what_the_reader_needs_is_left_out_and_the_notes_come_last(
    tmp_path,
):
    from tests.realism.traces import write_traces

    turns = [("Where is A1?", "Shipped.")]
    spec = write_traces(tmp_path / "t.jsonl", [("t1", turns, True), ("t2", turns, False)])
    stream = StoredConversations(open_sessions(spec), needs=frozenset({"content"}))

    kept = [stored async for stored in stream]

    assert [stored.session.id for stored in kept] == ["t1"]
    assert kept[0].lacks == {"state", "usage"}
    assert (stream.counts.lacking.count, stream.counts.lacking.first) == (1, ["t2"])
    assert any("content capture was off" in note for note in stream.counts.notes)
    assert any("(2 session(s))" in note and "no state" in note for note in stream.counts.notes)


async def test_an_unreadable_session_is_skipped_and_counted_or_stops_the_read(tmp_path):
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "a.json").write_text(conversation("s1").model_dump_json())
    (folder / "b.json").write_text("{not json")
    source = open_sessions(str(folder))

    skipping = StoredConversations(source)
    read = [stored.name async for stored in skipping]

    assert read == ["app/u/s1"]
    assert skipping.counts.unreadable.count == 1
    assert skipping.counts.unreadable.first[0].name.endswith("b.json")
    with pytest.raises(EvalSetupError, match="cannot read stored session"):
        async for _ in StoredConversations(source, unreadable=refuse(source.description)):
            pass


async def test_each_hands_records_on_a_bounded_number_at_a_time_in_read_order():
    sessions = [conversation(f"s{i}") for i in range(9)]
    running, most, seen = 0, 0, []

    async def work(index: int, stored: StoredConversation) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await anyio.sleep(0.01)
        seen.append((index, stored.session.id))
        running -= 1

    await StoredConversations(GivenSessions(sessions)).each(work, at_once=3)

    assert most == 3
    assert sorted(seen) == [(i, f"s{i}") for i in range(9)]


async def test_each_raises_the_first_adk_eval_error_as_it_is_and_stops_reading():
    sessions = [conversation(f"s{i}") for i in range(50)]
    handed: list[int] = []

    async def work(index: int, stored: StoredConversation) -> None:
        handed.append(index)
        if index == 2:
            raise EvalSetupError("stop here")
        await anyio.sleep(0.01)

    with pytest.raises(EvalSetupError, match="stop here"):
        await StoredConversations(GivenSessions(sessions)).each(work, at_once=2)
    assert len(handed) < 10


async def test_a_stream_counts_every_conversation_it_leaves_out_and_names_the_first_few():
    now = time.time()
    sessions = [conversation(f"s{i}", "hello?", updated=now) for i in range(KEEP_NAMES + 10)]

    stream = StoredConversations(GivenSessions(sessions))
    assert [stored async for stored in stream] == []

    assert stream.counts.opened.count == KEEP_NAMES + 10
    assert [name for name, _ in stream.counts.opened.first] == [
        f"app/u/s{i}" for i in range(KEEP_NAMES)
    ]
