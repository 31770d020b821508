"""The call log: never written into a file it did not make; closed when its connection ends."""

from __future__ import annotations

import sqlite3
import time

import pytest
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from mcp.client.client import Client
from mcp_types import Implementation

from adk_eval import EvalSetupError, ToolMock
from adk_eval._file_kinds import MOCK_MCP_LOG
from adk_eval._sources._open import still_open
from adk_eval.mock_mcp import MockMcpServer
from adk_eval.mock_mcp._log import CallLog
from adk_eval.production import open_sessions


def get_order(order_id: str) -> dict:
    """Looks an order up by its id."""
    raise NotImplementedError


def counting(args: dict, ctx) -> dict:
    return {"occurrence": ctx.occurrence}


async def test_an_agents_own_session_store_is_refused_and_left_as_it_was(tmp_path):
    store = tmp_path / "session.db"
    service = SqliteSessionService(str(store))
    await service.create_session(app_name="shop", user_id="alice")
    await service.close()
    before = store.read_bytes()
    with pytest.raises(EvalSetupError, match="exists and is not a mock MCP call log"):
        MockMcpServer([get_order], {"get_order": ToolMock.returning({})}, log=store)
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    with pytest.raises(EvalSetupError, match=r"notes\.txt exists and is not a mock MCP call log"):
        CallLog(notes)
    assert store.read_bytes() == before
    assert notes.read_text() == "mine"


async def test_a_new_log_is_marked_and_an_earlier_log_is_written_on(tmp_path):
    log = tmp_path / "calls.db"
    for _ in range(2):
        server = MockMcpServer([get_order], {"get_order": ToolMock(counting)}, log=log)
        async with Client(server.lowlevel()) as client:
            await client.call_tool("get_order", {"order_id": "A1"})
        await server.close()
    with sqlite3.connect(log) as connection:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == MOCK_MCP_LOG.mark
        assert connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_one_connection_keeps_its_counts_and_is_closed_in_the_log_when_it_ends(
    tmp_path, mode
):
    log = tmp_path / "calls.db"
    server = MockMcpServer([get_order], {"get_order": ToolMock(counting)}, log=log)
    info = Implementation(name="checkout-agent", version="1")
    async with Client(server.lowlevel(), mode=mode, client_info=info) as client:
        answers = [await client.call_tool("get_order", {"order_id": "A1"}) for _ in range(3)]
    assert [a.structured_content for a in answers] == [{"occurrence": n} for n in range(3)]
    (open_one,) = [s async for s in open_sessions(f"sqlite:///{log}").sessions()]
    assert still_open(open_one, time.time()) is not None  # its last event is a tool response
    await server.close()
    (session,) = [s async for s in open_sessions(f"sqlite:///{log}").sessions()]
    assert session.user_id == "checkout-agent"
    assert len(session.events) == 7  # three calls, two events each, and the end
    assert still_open(session, time.time()) is None


def test_a_log_path_that_is_a_dangling_symlink_is_refused_and_nothing_is_created(tmp_path):
    target = tmp_path / "elsewhere" / "calls.db"
    target.parent.mkdir()
    link = tmp_path / "calls.db"
    link.symlink_to(target)
    with pytest.raises(EvalSetupError, match=r"is a symbolic link to .*which does not exist"):
        MockMcpServer([get_order], {"get_order": ToolMock.returning({})}, log=link)
    with pytest.raises(EvalSetupError, match="symbolic link"):
        CallLog(link)
    assert not target.exists()
    assert link.is_symlink()
    assert list(target.parent.iterdir()) == []


async def test_a_log_through_a_symlink_to_a_log_is_written_on(tmp_path):
    log = tmp_path / "calls.db"
    server = MockMcpServer([get_order], {"get_order": ToolMock(counting)}, log=log)
    async with Client(server.lowlevel()) as client:
        await client.call_tool("get_order", {"order_id": "A1"})
    await server.close()
    link = tmp_path / "link.db"
    link.symlink_to(log)
    server = MockMcpServer([get_order], {"get_order": ToolMock(counting)}, log=link)
    async with Client(server.lowlevel()) as client:
        await client.call_tool("get_order", {"order_id": "A1"})
    await server.close()
    with sqlite3.connect(log) as connection:
        assert connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
