"""The call log of a mock MCP server: an ADK session store that ``adk-eval score`` reads.

Each MCP connection (a stdio process, an HTTP session) is one ADK session of the
app ``mock-mcp``, written through ADK's own `SqliteSessionService` as the calls
come. The user is the client's name from its ``initialize`` (``mcp-client`` when
it gave none). A call is two events, as ADK writes a tool call: a function call
and its function response (authored by the client: the agent calling), so
``adk-eval score sqlite:///LOG --metrics ...`` scores them as any stored
session's (`never_called`, `tool_called`, `event_count_metric`). A refused call
(an unknown tool) and a mock that raised are logged too, their response being
``{"error": ...}``.

When its connection ends (stdin closes; over HTTP, when the server stops), a
session gets a last event: a thought of the client's saying so. It holds no
reply text and no tool call, so ``adk-eval score`` counts the session closed
(see `adk_eval._sources._open`); until then, within 10 minutes of its last call, it
counts as open (``--include-open``).

The log is the server's own file: a new one is marked as a mock MCP call log
(SQLite's ``application_id``: `adk_eval._file_kinds.MOCK_MCP_LOG`), and an
existing file without that mark (a session store of an agent's own, any other
file) is refused before anything is written to it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from google.adk.events import Event
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from .._errors import EvalSetupError
from .._file_kinds import MOCK_MCP_LOG

__all__ = ["APP_NAME", "CLOSED", "CallLog", "LoggedCall", "claim"]

APP_NAME = "mock-mcp"
"""The app name of the sessions a mock MCP server logs (``adk-eval score --app mock-mcp``)."""

CLOSED = "mock-mcp: the connection ended"
"""The thought a session's last event holds once its connection ended."""


def claim(path: Path, *, create: bool) -> None:
    """Checks `path` is a mock MCP call log, creating (and marking) it when missing and `create`.

    Raises:
        EvalSetupError: `path` exists and is not a mock MCP call log (nothing is
            written to it), is a symbolic link to nothing (nothing is created
            where it points), or cannot be created.
    """
    if path.is_symlink() and not path.exists():
        raise EvalSetupError(
            f"--log {path} is a symbolic link to {os.readlink(path)}, which does not exist; "
            "nothing was created. Give the log's own path, or a link to an existing log"
        )
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):  # nothing in it
        if create:
            try:
                with sqlite3.connect(path) as connection:
                    connection.execute(f"PRAGMA application_id = {MOCK_MCP_LOG.mark}")
                connection.close()
            except sqlite3.Error as error:
                raise EvalSetupError(f"--log {path} cannot be created: {error}") from None
        return
    if not path.is_file():
        raise EvalSetupError(f"--log {path} is not a file; give an SQLite file path")
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            mark = connection.execute("PRAGMA application_id").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error:
        mark = None
    if mark != MOCK_MCP_LOG.mark:
        raise EvalSetupError(
            f"--log {path} exists and is not a mock MCP call log (an agent's own session "
            "store?); nothing was written to it. Give a new file for the log"
        )


def _author(session: Session) -> str:
    """Who the session's events are by: the client (never ``user``, ADK's name for a person)."""
    return session.user_id if session.user_id != "user" else "mcp-client"


@dataclass(frozen=True)
class LoggedCall:
    """One tool call as the server answered it.

    Attributes:
        call_id: The call's id (its JSON-RPC request id, or a fresh one).
        tool: The tool called.
        args: Its arguments.
        response: What it answered (a FunctionResponse dict; ``{"error": ...}``
            for a refused or failed call).
        error: Why it failed (unknown tool, the mock raised), else None.
        answered_by: What answered it: ``mock``, ``fault`` (an injected fault),
            ``simulated`` (a model), or ``refused``.
    """

    call_id: str
    tool: str
    args: dict[str, Any]
    response: dict[str, Any]
    error: str | None = None
    answered_by: str = "mock"


@dataclass
class CallLog:
    """Where a server's calls go: an SQLite session store at `path` (see the module doc)."""

    path: Path
    _service: SqliteSessionService | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    def __post_init__(self) -> None:
        claim(self.path, create=False)

    def _store(self) -> SqliteSessionService:
        if self._service is None:
            claim(self.path, create=True)
            try:
                self._service = SqliteSessionService(str(self.path))
            except RuntimeError as error:  # an older ADK schema
                raise EvalSetupError(f"--log {self.path}: {error}") from None
        return self._service

    async def open(self, client: str) -> Session:
        """A new session for one MCP connection of `client`."""
        async with self._lock:
            return await self._store().create_session(app_name=APP_NAME, user_id=client)

    async def write(self, session: Session, call: LoggedCall) -> None:
        """Appends `call` to `session`: its function call, then its function response."""
        function_call = types.FunctionCall(id=call.call_id, name=call.tool, args=call.args)
        answer = types.FunctionResponse(id=call.call_id, name=call.tool, response=call.response)
        invocation = f"mcp-{call.call_id}"
        called = Event(
            author=_author(session),
            invocation_id=invocation,
            content=types.Content(role="model", parts=[types.Part(function_call=function_call)]),
            timestamp=time.time(),
        )
        answered = Event(
            author=_author(session),
            invocation_id=invocation,
            content=types.Content(role="user", parts=[types.Part(function_response=answer)]),
            timestamp=time.time(),
        )
        async with self._lock:
            store = self._store()
            await store.append_event(session, called)
            await store.append_event(session, answered)

    async def end(self, session: Session) -> None:
        """Marks `session` closed: its connection ended (see the module doc)."""
        ended = Event(
            author=_author(session),
            invocation_id="mcp-end",
            content=types.Content(role="model", parts=[types.Part(text=CLOSED, thought=True)]),
            timestamp=time.time(),
        )
        async with self._lock:
            await self._store().append_event(session, ended)

    async def close(self) -> None:
        """Closes the store (nothing to do when nothing was logged)."""
        if self._service is not None:
            service, self._service = self._service, None
            await service.close()
