"""The queries of ADK's two database layouts, turned into sessions (used by `_database`).

* ``database``: `DatabaseSessionService`'s schema v1, read with ADK's own schema
  classes (``schemas.v1``: `StorageSession`, `StorageEvent`, the app and user
  state tables) and turned into sessions by their `to_session` and `to_event`;
* ``sqlite``: `SqliteSessionService`'s tables (epoch times, JSON text), read as
  that service reads them (`Event.model_validate_json`).

Rows are rebuilt into ADK's storage objects without an ORM session: nothing is
tracked, nothing can be flushed. Values are fetched raw and decoded by their
column's own type here, row by row (decoded by SQLAlchemy as it fetches, one bad
value would end the whole read, naming no row), so a malformed row (JSON that
does not parse, an event ADK's model refuses, a state that is not an object)
makes its session `Unreadable`: the reader hands it to its ``unreadable``
callback and goes on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from google.adk.events import Event
from google.adk.sessions import Session

from ._files import OnUnreadable, Unreadable, first_line
from ._filter import SessionFilter

__all__ = ["BATCH", "Head", "Layout", "Reader"]

BATCH = 200
"""Sessions read at once: their events come in one query."""

Layout = Literal["database", "sqlite"]
"""Which ADK service wrote the store."""

Key = tuple[str, str, str]


@dataclass(frozen=True)
class Head:
    """A session's own row: its key, state and last update (and ADK's storage object)."""

    key: Key
    state: dict[str, Any]
    updated: float
    storage: Any = None

    @property
    def name(self) -> str:
        return "/".join(self.key)


class Reader:
    """The queries of one store's layout.

    Args:
        layout: Which ADK service wrote the store.
        connection: The connection events and states are read on.
        unreadable: Called with each session whose rows cannot be read (it is left out).
    """

    def __init__(self, layout: Layout, connection: Any, unreadable: OnUnreadable) -> None:
        self.layout = layout
        self.connection = connection
        self.unreadable = unreadable
        self.app_states: dict[str, dict[str, Any] | str] = {}
        """Each app's state, or why it cannot be read."""

    async def session_rows(self, connection: Any, filters: SessionFilter) -> AsyncIterator[Head]:
        """The session rows that pass `filters` (but `limit`), most recently updated first."""
        from sqlalchemy import text

        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageSession as S

            table = _Table(S, connection.dialect)
            query = table.select().order_by(S.update_time.desc(), S.app_name, S.user_id, S.id)
            if filters.app is not None:
                query = query.where(S.app_name == filters.app)
            if filters.user is not None:
                query = query.where(S.user_id == filters.user)
            if filters.sessions:
                query = query.where(S.id.in_(list(filters.sessions)))
            rows = await connection.stream(query.execution_options(yield_per=BATCH))

            def build(row: Any) -> Head:
                return _storage_head(table.build(row))

        else:
            where, params = _where(filters)
            rows = await connection.stream(
                text(
                    "SELECT app_name, user_id, id, state, update_time FROM sessions"
                    f"{where} ORDER BY update_time DESC, app_name, user_id, id"
                ),
                params,
            )
            build = _sqlite_head
        async for row in rows:
            try:
                head = build(row)
            except Exception as error:  # a malformed row: its session, named, and on
                name = "/".join(str(part) for part in row[:3])
                self.unreadable(Unreadable(name, f"its session row: {first_line(error)}"))
                continue
            if _in_window(head.updated, filters):
                yield head

    async def sessions(self, heads: Sequence[Head]) -> list[Session]:
        """The sessions of `heads`, with events and merged state; the unreadable left out."""
        if not heads:
            return []
        keys = [head.key for head in heads]
        events, broken = await self._events(keys)
        users, broken_users = await self._user_states({key[:2] for key in keys})
        for app in {key[0] for key in keys} - set(self.app_states):
            self.app_states[app] = await self._app_state(app)
        found = []
        for head in heads:
            app_state = self.app_states[head.key[0]]
            why = broken.get(head.key) or broken_users.get(head.key[:2])
            if why is None and isinstance(app_state, str):
                why = app_state
            if why is None and isinstance(app_state, dict):
                try:
                    user_state = users.get(head.key[:2], {})
                    found.append(_session(head, events.get(head.key, []), app_state, user_state))
                    continue
                except Exception as error:
                    why = first_line(error)
            self.unreadable(Unreadable(head.name, why or "unreadable"))
        return found

    async def _keyed(self, query: str, keys: Sequence[tuple[str, ...]], names: str) -> Any:
        """`query` run with its ``VALUES {}`` the bound tuples of `keys` (see `_values`)."""
        from sqlalchemy import text

        marks, params = _values(keys, names)
        return await self.connection.execute(text(query.format(marks)), params)

    async def _events(self, keys: Sequence[Key]) -> tuple[dict[Key, list[Event]], dict[Key, str]]:
        """The events of each session, in order; and why a session's events cannot be read."""
        from sqlalchemy import tuple_

        found: dict[Key, list[Event]] = {}
        broken: dict[Key, str] = {}
        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageEvent as E

            table = _Table(E, self.connection.dialect)
            query = (
                table.select()
                .where(tuple_(E.app_name, E.user_id, E.session_id).in_(keys))
                .order_by(E.app_name, E.user_id, E.session_id, E.timestamp, E.id)
            )
            result = await self.connection.execute(query)

            def parse(row: Any) -> Event:
                event: Event = table.build(row).to_event()
                return event

        else:
            result = await self._keyed(
                "SELECT app_name, user_id, session_id, id, event_data FROM events "
                "WHERE (app_name, user_id, session_id) IN (VALUES {}) "
                "ORDER BY app_name, user_id, session_id, timestamp, id",
                keys,
                "aus",
            )

            def parse(row: Any) -> Event:
                return Event.model_validate_json(row.event_data)

        for row in result:
            key = (row.app_name, row.user_id, row.session_id)
            if key in broken:
                continue
            try:
                found.setdefault(key, []).append(parse(row))
            except Exception as error:
                broken[key] = f"its event {row.id}: {first_line(error)}"
        return found, broken

    async def _user_states(
        self, pairs: Iterable[tuple[str, str]]
    ) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[tuple[str, str], str]]:
        """Each user's state; and why a user's state cannot be read."""
        from sqlalchemy import tuple_

        pairs = list(pairs)
        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageUserState as U

            table = _Table(U, self.connection.dialect)
            result = await self.connection.execute(
                table.select().where(tuple_(U.app_name, U.user_id).in_(pairs))
            )
            decode: Callable[[Any], Any] = _state_of(table)
        else:
            result = await self._keyed(
                "SELECT app_name, user_id, state FROM user_states "
                "WHERE (app_name, user_id) IN (VALUES {})",
                pairs,
                "au",
            )
            decode = _json_state
        found: dict[tuple[str, str], dict[str, Any]] = {}
        broken: dict[tuple[str, str], str] = {}
        for row in result:
            try:
                found[(row.app_name, row.user_id)] = _object(decode(row))
            except Exception as error:
                broken[(row.app_name, row.user_id)] = f"its user's state: {first_line(error)}"
        return found, broken

    async def _app_state(self, app: str) -> dict[str, Any] | str:
        """The app's state, or why it cannot be read."""
        from sqlalchemy import text

        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageAppState as A

            table = _Table(A, self.connection.dialect)
            result = await self.connection.execute(table.select().where(A.app_name == app))
            decode: Callable[[Any], Any] = _state_of(table)
        else:
            result = await self.connection.execute(
                text("SELECT state FROM app_states WHERE app_name = :app"), {"app": app}
            )
            decode = _json_state
        row = result.first()
        try:
            return _object(decode(row)) if row is not None else {}
        except Exception as error:
            return f"its app's state: {first_line(error)}"


class _Table:
    """One of ADK's tables: its columns fetched raw, each decoded by its own type per row."""

    def __init__(self, entity: Any, dialect: Any) -> None:
        self.entity = entity
        self.columns = list(entity.__table__.columns)
        self.decoders = [
            column.type.dialect_impl(dialect).result_processor(dialect, None)
            for column in self.columns
        ]

    def select(self) -> Any:
        """The table's columns, with no decoding on fetch (`build` decodes)."""
        from sqlalchemy import select, type_coerce
        from sqlalchemy.types import NullType

        return select(*[type_coerce(c, NullType()).label(c.key) for c in self.columns])

    def build(self, row: Any) -> Any:
        """ADK's storage object of one row (no ORM session: read-only); raises on a bad value."""
        values = {}
        for column, decode, value in zip(self.columns, self.decoders, row, strict=True):
            values[column.key] = (
                decode(value) if decode is not None and value is not None else value
            )
        return self.entity(**values)


def _state_of(table: _Table) -> Callable[[Any], Any]:
    """The state of a row of ADK's app or user state table."""
    return lambda row: table.build(row).state


def _json_state(row: Any) -> Any:
    return json.loads(row.state or "{}")


def _storage_head(storage: Any) -> Head:
    key = (storage.app_name, storage.user_id, storage.id)
    return Head(key, _object(storage.state), storage.get_update_timestamp(), storage)


def _sqlite_head(row: Any) -> Head:
    key = (row.app_name, row.user_id, row.id)
    return Head(key, _object(json.loads(row.state or "{}")), float(row.update_time))


def _session(head: Head, events: list[Event], app: dict[str, Any], user: dict[str, Any]) -> Session:
    """One session, its state merged as ADK's services merge it."""
    state = _merge(app, user, head.state)
    if head.storage is not None:
        session: Session = head.storage.to_session(state=state, events=events)
        return session
    app_name, user_id, session_id = head.key
    return Session(
        app_name=app_name,
        user_id=user_id,
        id=session_id,
        state=state,
        events=events,
        last_update_time=head.updated,
    )


def _object(value: Any) -> dict[str, Any]:
    """A state as stored: a JSON object (None: empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"a state must be a JSON object, got {type(value).__name__}")
    return dict(value)


def _merge(app: dict[str, Any], user: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
    """One session's state as ADK's session services merge it: ``app:`` and ``user:`` keys."""
    return {
        **session,
        **{f"app:{k}": v for k, v in app.items()},
        **{f"user:{k}": v for k, v in user.items()},
    }


def _in_window(updated: float, filters: SessionFilter) -> bool:
    return (filters.since is None or updated >= filters.since) and (
        filters.until is None or updated < filters.until
    )


def _where(filters: SessionFilter) -> tuple[str, dict[str, Any]]:
    """The SQL filter of the SQLite service's sessions table (bound parameters)."""
    clauses, params = [], {}
    if filters.app is not None:
        clauses.append("app_name = :app")
        params["app"] = filters.app
    if filters.user is not None:
        clauses.append("user_id = :user")
        params["user"] = filters.user
    if filters.sessions:
        names = [f":s{i}" for i in range(len(filters.sessions))]
        clauses.append(f"id IN ({', '.join(names)})")
        params.update(
            {name[1:]: value for name, value in zip(names, filters.sessions, strict=False)}
        )
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _values(keys: Sequence[tuple[str, ...]], names: str) -> tuple[str, dict[str, str]]:
    """A ``VALUES`` list of bound tuples for `keys` (each value named by a letter of `names`)."""
    marks = ", ".join("(" + ", ".join(f":{n}{i}" for n in names) + ")" for i in range(len(keys)))
    params = {f"{n}{i}": v for i, key in enumerate(keys) for n, v in zip(names, key, strict=True)}
    return marks, params
