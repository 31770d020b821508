"""The queries of ADK's two database layouts, turned into sessions (used by `_database`).

* ``database``: `DatabaseSessionService`'s schema v1, read with ADK's own schema
  classes (``schemas.v1``: `StorageSession`, `StorageEvent`, the app and user
  state tables) and turned into sessions by their `to_session` and `to_event`;
* ``sqlite``: `SqliteSessionService`'s tables (epoch times, JSON text), read as
  that service reads them (`Event.model_validate_json`).

Rows are rebuilt into ADK's storage objects without an ORM session: nothing is
tracked, nothing can be flushed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any, Literal

from google.adk.events import Event
from google.adk.sessions import Session

from ._filter import SessionFilter

__all__ = ["BATCH", "Layout", "Reader"]

BATCH = 200
"""Sessions read at once: their events come in one query."""

Layout = Literal["database", "sqlite"]
"""Which ADK service wrote the store."""


class Reader:
    """The queries of one store's layout."""

    def __init__(self, layout: Layout, connection: Any) -> None:
        self.layout = layout
        self.connection = connection
        self.app_states: dict[str, dict[str, Any]] = {}

    async def session_rows(self, connection: Any, filters: SessionFilter) -> AsyncIterator[Any]:
        """The session rows that pass `filters` (but `limit`), most recently updated first."""
        from sqlalchemy import select, text

        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageSession as S

            query = select(S).order_by(S.update_time.desc(), S.app_name, S.user_id, S.id)
            if filters.app is not None:
                query = query.where(S.app_name == filters.app)
            if filters.user is not None:
                query = query.where(S.user_id == filters.user)
            if filters.sessions:
                query = query.where(S.id.in_(list(filters.sessions)))
            rows = await connection.stream(query.execution_options(yield_per=BATCH))
            async for (storage,) in _orm_rows(rows, S):
                if _in_window(storage.get_update_timestamp(), filters):
                    yield storage
            return
        where, params = _where(filters)
        rows = await connection.stream(
            text(
                "SELECT app_name, user_id, id, state, update_time FROM sessions"
                f"{where} ORDER BY update_time DESC, app_name, user_id, id"
            ),
            params,
        )
        async for row in rows:
            if _in_window(float(row.update_time), filters):
                yield row

    async def sessions(self, rows: Sequence[Any]) -> list[Session]:
        """The sessions of `rows`, each with its events and merged state."""
        if not rows:
            return []
        keys = [(row.app_name, row.user_id, row.id) for row in rows]
        events = await self._events(keys)
        users = await self._user_states({(app, user) for app, user, _ in keys})
        for app in {app for app, _, _ in keys} - set(self.app_states):
            self.app_states[app] = await self._app_state(app)
        found = []
        for row, key in zip(rows, keys, strict=True):
            app_state, user_state = self.app_states[key[0]], users.get(key[:2], {})
            if self.layout == "database":
                state = _merge(app_state, user_state, dict(row.state or {}))
                found.append(row.to_session(state=state, events=events.get(key, [])))
            else:
                state = _merge(app_state, user_state, json.loads(row.state or "{}"))
                found.append(
                    Session(
                        app_name=row.app_name,
                        user_id=row.user_id,
                        id=row.id,
                        state=state,
                        events=events.get(key, []),
                        last_update_time=float(row.update_time),
                    )
                )
        return found

    async def _events(
        self, keys: Sequence[tuple[str, str, str]]
    ) -> dict[tuple[str, str, str], list[Event]]:
        from sqlalchemy import select, text, tuple_

        found: dict[tuple[str, str, str], list[Event]] = {}
        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageEvent as E

            query = (
                select(E)
                .where(tuple_(E.app_name, E.user_id, E.session_id).in_(keys))
                .order_by(E.app_name, E.user_id, E.session_id, E.timestamp, E.id)
            )
            result = await self.connection.execute(query)
            for event in _storage_objects(result, E):
                key = (event.app_name, event.user_id, event.session_id)
                found.setdefault(key, []).append(event.to_event())
            return found
        marks = ", ".join(f"(:a{i}, :u{i}, :s{i})" for i in range(len(keys)))
        params = {
            f"{name}{i}": value
            for i, key in enumerate(keys)
            for name, value in zip("aus", key, strict=False)
        }
        result = await self.connection.execute(
            text(
                "SELECT app_name, user_id, session_id, event_data FROM events "
                f"WHERE (app_name, user_id, session_id) IN (VALUES {marks}) "
                "ORDER BY app_name, user_id, session_id, timestamp, id"
            ),
            params,
        )
        for row in result:
            key = (row.app_name, row.user_id, row.session_id)
            found.setdefault(key, []).append(Event.model_validate_json(row.event_data))
        return found

    async def _user_states(
        self, pairs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        from sqlalchemy import select, text, tuple_

        pairs = list(pairs)
        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageUserState as U

            result = await self.connection.execute(
                select(U).where(tuple_(U.app_name, U.user_id).in_(pairs))
            )
            return {
                (u.app_name, u.user_id): dict(u.state or {}) for u in _storage_objects(result, U)
            }
        marks = ", ".join(f"(:a{i}, :u{i})" for i in range(len(pairs)))
        params = {
            f"{n}{i}": v for i, pair in enumerate(pairs) for n, v in zip("au", pair, strict=False)
        }
        result = await self.connection.execute(
            text(
                "SELECT app_name, user_id, state FROM user_states "
                f"WHERE (app_name, user_id) IN (VALUES {marks})"
            ),
            params,
        )
        return {(row.app_name, row.user_id): json.loads(row.state or "{}") for row in result}

    async def _app_state(self, app: str) -> dict[str, Any]:
        from sqlalchemy import select, text

        if self.layout == "database":
            from google.adk.sessions.schemas.v1 import StorageAppState as A

            result = await self.connection.execute(select(A).where(A.app_name == app))
            states = [dict(a.state or {}) for a in _storage_objects(result, A)]
            return states[0] if states else {}
        result = await self.connection.execute(
            text("SELECT state FROM app_states WHERE app_name = :app"), {"app": app}
        )
        row = result.first()
        return json.loads(row.state or "{}") if row else {}


async def _orm_rows(rows: Any, entity: Any) -> AsyncIterator[tuple[Any]]:
    """ORM objects of `entity` from a streamed Core result over its table."""
    async for row in rows:
        yield (_entity(row, entity),)


def _storage_objects(result: Any, entity: Any) -> list[Any]:
    return [_entity(row, entity) for row in result]


def _entity(row: Any, entity: Any) -> Any:
    """An ADK storage object rebuilt from a row of its table (no ORM session: read-only)."""
    mapping = row._mapping
    values = {column.key: mapping[column] for column in entity.__table__.columns}
    return entity(**values)


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
