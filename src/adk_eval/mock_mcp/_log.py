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

The log holds calls only: no user message and no reply, so a session scored
within 10 minutes of its last call counts as open (``--include-open``).
"""

from __future__ import annotations

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

__all__ = ["APP_NAME", "CallLog", "LoggedCall"]

APP_NAME = "mock-mcp"
"""The app name of the sessions a mock MCP server logs (``adk-eval score --app mock-mcp``)."""


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
    """

    call_id: str
    tool: str
    args: dict[str, Any]
    response: dict[str, Any]
    error: str | None = None


@dataclass
class CallLog:
    """Where a server's calls go: an SQLite session store at `path` (see the module doc)."""

    path: Path
    _service: SqliteSessionService | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    def __post_init__(self) -> None:
        if self.path.exists() and not self.path.is_file():
            raise EvalSetupError(f"--log {self.path} is not a file; give an SQLite file path")

    def _store(self) -> SqliteSessionService:
        if self._service is None:
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
            author=session.user_id,
            invocation_id=invocation,
            content=types.Content(role="model", parts=[types.Part(function_call=function_call)]),
            timestamp=time.time(),
        )
        answered = Event(
            author=session.user_id,
            invocation_id=invocation,
            content=types.Content(role="user", parts=[types.Part(function_response=answer)]),
            timestamp=time.time(),
        )
        async with self._lock:
            store = self._store()
            await store.append_event(session, called)
            await store.append_event(session, answered)

    async def close(self) -> None:
        """Closes the store (nothing to do when nothing was logged)."""
        if self._service is not None:
            await self._service.close()
