"""The exchange log of a mock A2A server: an ADK session store that ``adk-eval score`` reads.

Each A2A context (one conversation of a calling agent with a mocked remote
agent) is one ADK session of the app ``mock-a2a``, its user the remote agent's
name, written through ADK's own `SqliteSessionService` as the exchanges come.
An exchange is two events, as the remote agent's own session would hold it:
the request (authored ``user``: the caller is the remote agent's user) and the
reply, authored by the remote agent, its task state and artifacts in its
``custom_metadata`` (``a2a:task_state``, ``a2a:artifacts``). So
``adk-eval score sqlite:///LOG --app mock-a2a --metrics ...`` scores them as
any stored session's.

When the server stops, every session gets a last event: a thought of the remote
agent's saying so, so ``adk-eval score`` counts it closed (as mock-mcp's log).
The log is the server's own file, marked as one (`adk_eval._file_kinds.MOCK_A2A_LOG`):
an existing file without that mark is refused before anything is written to it.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from google.adk.events import Event
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from .._errors import EvalSetupError
from .._file_kinds import MOCK_A2A_LOG
from .._tools._a2a._served import Exchange

__all__ = ["APP_NAME", "CLOSED", "ExchangeLog", "claim"]

APP_NAME = "mock-a2a"
"""The app name of the sessions a mock A2A server logs (``adk-eval score --app mock-a2a``)."""

CLOSED = "mock-a2a: the server stopped"
"""The thought a session's last event holds once the server stopped."""


def claim(path: Path, *, create: bool) -> None:
    """Checks `path` is a mock A2A exchange log, creating (and marking) it when missing.

    Raises:
        EvalSetupError: `path` exists and is not such a log (nothing is written
            to it), or cannot be created.
    """
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        if create:
            try:
                with sqlite3.connect(path) as connection:
                    connection.execute(f"PRAGMA application_id = {MOCK_A2A_LOG.mark}")
                connection.close()
            except sqlite3.Error as error:
                raise EvalSetupError(f"--log {path} cannot be created: {error}") from None
        return
    mark = None
    if path.is_file():
        try:
            connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                mark = connection.execute("PRAGMA application_id").fetchone()[0]
            finally:
                connection.close()
        except sqlite3.Error:
            mark = None
    if mark != MOCK_A2A_LOG.mark:
        raise EvalSetupError(
            f"--log {path} exists and is not a mock A2A exchange log; nothing was written "
            "to it. Give a new file for the log"
        )


@dataclass
class ExchangeLog:
    """Where a server's exchanges go: an SQLite session store at `path` (see the module doc)."""

    path: Path
    _service: SqliteSessionService | None = None
    _sessions: dict[tuple[str, str], Session] = field(default_factory=dict)
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    def __post_init__(self) -> None:
        claim(self.path, create=False)

    def _store(self) -> SqliteSessionService:
        if self._service is None:
            claim(self.path, create=True)
            self._service = SqliteSessionService(str(self.path))
        return self._service

    async def write(self, exchange: Exchange) -> None:
        """Appends `exchange` to its context's session: the request, then the reply."""
        reply = exchange.reply
        invocation = f"a2a-{exchange.task_id}"
        asked = Event(
            author="user",
            invocation_id=invocation,
            content=types.Content(role="user", parts=[types.Part(text=exchange.request)]),
            timestamp=time.time(),
        )
        answered = Event(
            author=exchange.agent,
            invocation_id=invocation,
            content=types.Content(role="model", parts=[types.Part(text=reply.text)]),
            custom_metadata={"a2a:task_state": reply.state, "a2a:artifacts": dict(reply.artifacts)},
            timestamp=time.time(),
        )
        async with self._lock:
            store = self._store()
            key = (exchange.agent, exchange.context_id)
            if key not in self._sessions:
                self._sessions[key] = await store.create_session(
                    app_name=APP_NAME, user_id=exchange.agent
                )
            session = self._sessions[key]
            await store.append_event(session, asked)
            await store.append_event(session, answered)

    async def close(self) -> None:
        """Ends every session (they count as closed), then closes the store."""
        async with self._lock:
            for (agent, _), session in self._sessions.items():
                ended = Event(
                    author=agent,
                    invocation_id="a2a-end",
                    content=types.Content(
                        role="model", parts=[types.Part(text=CLOSED, thought=True)]
                    ),
                    timestamp=time.time(),
                )
                await self._store().append_event(session, ended)
            self._sessions.clear()
            if self._service is not None:
                service, self._service = self._service, None
                await service.close()
