"""The studio's tables: typed rows stored as plain strings, event copies, missing sessions."""

from __future__ import annotations

import sqlite3

import pytest

from adk_eval._errors import StudioError
from adk_eval.studio._kinds import played_tool
from adk_eval.studio._server import status_of
from adk_eval.studio._store import SessionRow, StudioStore


@pytest.fixture
async def store(tmp_path):
    studio_store = StudioStore(tmp_path / "studio.db")
    await studio_store.open()
    yield studio_store
    await studio_store.close()


async def test_rows_an_earlier_studio_wrote_read_the_same(store):
    with sqlite3.connect(store.path) as db:
        db.execute(
            "INSERT INTO studio_sessions VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                "case-1",
                "clinic",
                "case",
                "tool_user:ask",
                "active",
                "awaiting_user",
                None,
                "{}",
                1,
                1,
            ),
        )
    row = await store.require_session("case-1")
    assert (row.kind, row.role, row.phase, played_tool(row.role)) == (
        "case",
        "tool_user:ask",
        "awaiting_user",
        "ask",
    )


async def test_update_session_changes_only_what_it_is_given(store):
    await store.add_session(SessionRow(id="s", target="t", kind="agent", role="model"))
    await store.update_session("s", phase="idle", invocation_id="i1")
    await store.update_session("s", detail={"error": "boom"})
    row = await store.require_session("s")
    assert (row.phase, row.invocation_id, row.status, row.detail) == (
        "idle",
        "i1",
        "active",
        {"error": "boom"},
    )
    with pytest.raises(StudioError) as missing:
        await store.require_session("nope")
    assert status_of(missing.value) == 404


async def test_replace_events_keeps_only_the_new_copies_in_order(store):
    await store.add_session(SessionRow(id="s", target="t", kind="case", role="model"))
    for event in ('{"n": 1}', '{"n": 2}', '{"n": 3}'):
        await store.add_event("s", event)
    await store.replace_events("s", ['{"n": "a"}', '{"n": "b"}'])
    assert await store.events("s") == ['{"n": "a"}', '{"n": "b"}']
    await store.add_event("s", '{"n": "c"}')
    assert (await store.events("s"))[-1] == '{"n": "c"}'
