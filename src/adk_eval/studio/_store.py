"""The studio's own tables, in SQLite (``--db``), next to ADK's session file.

ADK's `SqliteSessionService` keeps the sessions and events of agent sessions
(in ``<db>.adk.db``: one writer per file keeps SQLite from locking under load).
These tables keep what the studio adds: which target a session plays, its
phase, the model requests waiting for the person and the answers given, and
(for eval-case and remote sessions, whose ADK sessions live elsewhere) a copy
of the events. A page reload or a server restart therefore loses nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import aiosqlite

from .._errors import StudioNotFoundError
from ._kinds import Phase, RequestKind, RequestStatus, Role, SessionKind, SessionStatus

__all__ = ["RequestRow", "SessionRow", "StudioStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS studio_sessions (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    phase TEXT NOT NULL,
    invocation_id TEXT,
    detail TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS studio_requests (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES studio_sessions(id),
    kind TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    answer TEXT,
    created_at REAL NOT NULL,
    answered_at REAL
);
CREATE INDEX IF NOT EXISTS studio_requests_session ON studio_requests(session_id, created_at);
CREATE TABLE IF NOT EXISTS studio_events (
    session_id TEXT NOT NULL REFERENCES studio_sessions(id),
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""

_JSON_COLUMNS = frozenset({"detail", "payload", "answer"})
"""The columns that hold JSON (NULL stays NULL)."""


def _encoded(column: str, value: Any) -> Any:
    """`value` as `column` stores it."""
    return (
        json.dumps(value, default=repr) if column in _JSON_COLUMNS and value is not None else value
    )


def _decoded(row: aiosqlite.Row) -> dict[str, Any]:
    """A stored row's columns by name, JSON ones decoded."""
    data = dict(row)
    for column in _JSON_COLUMNS & data.keys():
        if data[column] is not None:
            data[column] = json.loads(data[column])
    return data


@dataclass
class SessionRow:
    """A studio session.

    Attributes:
        id: The session id (the ADK session id for agent sessions).
        target: The target's name.
        kind: ``agent``, ``case`` or ``remote``.
        role: What the person plays: ``model``, ``loop_user`` or ``tool_user:<tool>``.
        status: ``active``, ``completed`` or ``interrupted``.
        phase: ``awaiting_model``, ``running``, ``awaiting_tool_answer``,
            ``awaiting_user``, ``idle`` or ``finished``.
        invocation_id: The ADK invocation in flight (to resume it after a restart).
        detail: Anything else (exports, the case's result, errors).
    """

    id: str
    target: str
    kind: SessionKind
    role: Role
    status: SessionStatus = "active"
    phase: Phase = "running"
    invocation_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)


@dataclass
class RequestRow:
    """Something waiting for the person: a model call, a tool answer, a user's reply."""

    id: str
    session_id: str
    kind: RequestKind
    agent_name: str
    payload: dict[str, Any]
    status: RequestStatus = "pending"
    answer: Any = None
    created_at: float = field(default_factory=time.time)
    answered_at: float | None = None


class StudioStore:
    """Async access to the studio tables (one connection, serialised by aiosqlite)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> None:
        """Opens the file (creating it and the tables if needed)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path)
        self._db.row_factory = aiosqlite.Row
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.execute("PRAGMA busy_timeout=30000")
        await self._db.executescript(_SCHEMA)
        await self._db.commit()

    async def close(self) -> None:
        """Closes the connection."""
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def db(self) -> aiosqlite.Connection:
        """The open connection."""
        assert self._db is not None, "StudioStore.open() first"
        return self._db

    # -- sessions ----------

    async def _insert(self, table: str, row: SessionRow | RequestRow) -> None:
        """Stores `row` in `table`: a column for each of its fields, JSON ones encoded."""
        values = {item.name: _encoded(item.name, getattr(row, item.name)) for item in fields(row)}
        marks = ", ".join("?" * len(values))
        await self.db.execute(
            f"INSERT INTO {table} ({', '.join(values)}) VALUES ({marks})", tuple(values.values())
        )
        await self.db.commit()

    async def add_session(self, row: SessionRow) -> None:
        """Stores a new session."""
        await self._insert("studio_sessions", row)

    async def update_session(
        self,
        session_id: str,
        *,
        status: SessionStatus | None = None,
        phase: Phase | None = None,
        invocation_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Changes the fields given (None leaves a field as it is)."""
        fields: dict[str, Any] = {
            name: value
            for name, value in (
                ("status", status),
                ("phase", phase),
                ("invocation_id", invocation_id),
                ("detail", json.dumps(detail, default=repr) if detail is not None else None),
            )
            if value is not None
        }
        fields["updated_at"] = time.time()
        columns = ", ".join(f"{name} = ?" for name in fields)
        await self.db.execute(
            f"UPDATE studio_sessions SET {columns} WHERE id = ?", (*fields.values(), session_id)
        )
        await self.db.commit()

    async def _rows(self, query: str, *params: Any) -> list[dict[str, Any]]:
        """The rows `query` selects, by column, JSON columns decoded."""
        async with self.db.execute(query, params) as cursor:
            return [_decoded(row) for row in await cursor.fetchall()]

    async def get_session(self, session_id: str) -> SessionRow | None:
        """One session, or None."""
        found = await self._rows("SELECT * FROM studio_sessions WHERE id = ?", session_id)
        return SessionRow(**found[0]) if found else None

    async def require_session(self, session_id: str) -> SessionRow:
        """One session.

        Raises:
            StudioError: There is no such session (404).
        """
        row = await self.get_session(session_id)
        if row is None:
            raise StudioNotFoundError(f"no session {session_id}")
        return row

    async def sessions(self) -> list[SessionRow]:
        """Every session, newest first."""
        found = await self._rows("SELECT * FROM studio_sessions ORDER BY created_at DESC")
        return [SessionRow(**row) for row in found]

    # -- requests ----------

    async def add_request(self, row: RequestRow) -> None:
        """Stores a new pending request."""
        await self._insert("studio_requests", row)

    async def answer_request(self, request_id: str, answer: Any) -> None:
        """Records the person's answer."""
        await self.db.execute(
            "UPDATE studio_requests SET status = 'answered', answer = ?, answered_at = ? "
            "WHERE id = ?",
            (json.dumps(answer, default=repr), time.time(), request_id),
        )
        await self.db.commit()

    async def close_request(self, request_id: str, status: RequestStatus) -> bool:
        """Gives a pending request its final `status`; False if it was no longer pending."""
        cursor = await self.db.execute(
            "UPDATE studio_requests SET status = ? WHERE id = ? AND status = 'pending'",
            (status, request_id),
        )
        await self.db.commit()
        return cursor.rowcount > 0

    async def supersede_pending(self, session_id: str) -> None:
        """Marks a session's pending requests as superseded (their run was lost)."""
        await self.db.execute(
            "UPDATE studio_requests SET status = 'superseded' "
            "WHERE session_id = ? AND status = 'pending'",
            (session_id,),
        )
        await self.db.commit()

    async def get_request(self, request_id: str) -> RequestRow | None:
        """One request, or None."""
        found = await self._rows("SELECT * FROM studio_requests WHERE id = ?", request_id)
        return RequestRow(**found[0]) if found else None

    async def requests(
        self, session_id: str, *, status: RequestStatus | None = None
    ) -> list[RequestRow]:
        """A session's requests, oldest first."""
        query = "SELECT * FROM studio_requests WHERE session_id = ?"
        params: tuple[Any, ...] = (session_id,)
        if status is not None:
            query += " AND status = ?"
            params += (status,)
        return [
            RequestRow(**row) for row in await self._rows(query + " ORDER BY created_at", *params)
        ]

    # -- mirrored events ----------

    async def add_event(self, session_id: str, event_json: str) -> None:
        """Appends an event copy (eval-case and remote sessions)."""
        await self.db.execute(
            "INSERT INTO studio_events VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 "
            "FROM studio_events WHERE session_id = ?), ?)",
            (session_id, session_id, event_json),
        )
        await self.db.commit()

    async def replace_events(self, session_id: str, events_json: list[str]) -> None:
        """Replaces a session's event copies with `events_json`, in order."""
        await self.db.execute("DELETE FROM studio_events WHERE session_id = ?", (session_id,))
        await self.db.executemany(
            "INSERT INTO studio_events VALUES (?, ?, ?)",
            [(session_id, seq, event) for seq, event in enumerate(events_json, start=1)],
        )
        await self.db.commit()

    async def events(self, session_id: str) -> list[str]:
        """A session's event copies, in order."""
        async with self.db.execute(
            "SELECT event FROM studio_events WHERE session_id = ? ORDER BY seq", (session_id,)
        ) as cursor:
            return [row[0] for row in await cursor.fetchall()]
