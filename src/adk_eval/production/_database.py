"""Reading an ADK session store's database without ever writing to it.

ADK's `DatabaseSessionService` prepares its tables before every first operation,
reads included: it creates missing tables and indexes (a missing SQLite file is
created; an older store gains an index, which on a big ``events`` table is slow
and locks) and writes its schema version. So the service itself is not used
here. Instead:

* the connection is read-only at the driver: SQLite is opened with
  ``mode=ro`` (a missing file is an error, never created), PostgreSQL with
  ``default_transaction_read_only`` on, so any write would fail loudly;
* the rows are read with ADK's own schema classes (`StorageSession`,
  `StorageEvent`, its app and user state tables; ``schemas.v1``) and turned into
  sessions by ADK's own `to_event` and `to_session`, with the app and user
  state merged under their prefixes as the service merges them;
* a store of ADK's `SqliteSessionService` (``adk web``'s ``.adk/session.db``: no
  ``adk_internal_metadata`` table, epoch times and JSON text) is read as that
  service reads it: `Event.model_validate_json` of each row.

Sessions stream in batches (`BATCH` sessions, their events in one query), the
most recently updated first, so memory stays flat whatever the store's size.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from google.adk.events import Event
from google.adk.sessions import Session

from .._errors import EvalSetupError
from ._sources import SessionFilter

__all__ = ["BATCH", "DatabaseSource"]

BATCH = 200
"""Sessions read at once: their events come in one query."""

Layout = Literal["database", "sqlite"]


class DatabaseSource:
    """An ADK session store's database, opened read-only.

    Args:
        url: ``sqlite:///PATH``, ``sqlite+aiosqlite:///PATH`` or ``postgresql://...``.

    Raises:
        EvalSetupError: A missing SQLite file, or a URL SQLAlchemy cannot parse.
    """

    def __init__(self, url: str) -> None:
        try:
            from sqlalchemy.engine import make_url
        except ImportError:
            raise EvalSetupError(
                'reading an ADK session store needs SQLAlchemy: pip install "adk-eval[production]"'
            ) from None
        try:
            parsed = make_url(url)
        except Exception as error:
            raise EvalSetupError(f"not a database URL: {error}") from None
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            path = Path(parsed.database or "")
            if not parsed.database or not path.is_file():
                raise EvalSetupError(
                    f"no such SQLite file: {parsed.database or '(none given)'} (a session "
                    "store is never created when read; sqlite:///relative/path, "
                    "sqlite:////absolute/path)"
                )
            self.path = path.resolve()
            self._url = parsed.set(
                drivername="sqlite+aiosqlite",
                database=f"file:{self.path}?mode=ro",
                query={"uri": "true"},
            )
            self.description = str(self.path)
        else:
            self._url = parsed.set(drivername="postgresql+asyncpg")
            where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database or ''}"
            self.description = f"postgresql://{where}"

    async def check(self) -> None:
        """Connects and reads which store it is, before anything is scored.

        Raises:
            EvalSetupError: The store cannot be reached or holds no ADK sessions.
        """
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(self._url, **self._engine_args())
        try:
            async with engine.connect() as connection:
                await self._layout(connection)
        except EvalSetupError:
            raise
        except Exception as error:
            raise EvalSetupError(self._problem(error)) from None
        finally:
            await engine.dispose()

    def _engine_args(self) -> dict[str, Any]:
        if self.dialect == "sqlite":
            return {}
        return {"connect_args": {"server_settings": {"default_transaction_read_only": "on"}}}

    async def sessions(self, filters: SessionFilter) -> AsyncIterator[Session]:
        """The sessions that pass `filters`, most recently updated first (see the module doc).

        Raises:
            EvalSetupError: The store cannot be reached or read, or holds no ADK sessions:
                one line naming it.
        """
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(self._url, **self._engine_args())
        try:
            async with engine.connect() as listing, engine.connect() as reading:
                layout = await self._layout(listing)
                reader = _Reader(layout, reading)
                batch: list[Any] = []
                left = filters.limit
                async for row in reader.session_rows(listing, filters):
                    if left == 0:
                        break
                    batch.append(row)
                    left = None if left is None else left - 1
                    if len(batch) == BATCH:
                        for session in await reader.sessions(batch):
                            yield session
                        batch = []
                for session in await reader.sessions(batch):
                    yield session
        except EvalSetupError:
            raise
        except Exception as error:
            raise EvalSetupError(self._problem(error)) from None
        finally:
            await engine.dispose()

    async def _layout(self, connection: Any) -> Layout:
        """Which ADK store wrote the database (and that it is one).

        Raises:
            EvalSetupError: No ADK session tables, or ADK's legacy v0 schema.
        """
        from sqlalchemy import inspect

        def look(sync_connection: Any) -> tuple[set[str], set[str], str | None]:
            inspector = inspect(sync_connection)
            tables = set(inspector.get_table_names())
            columns = (
                {c["name"] for c in inspector.get_columns("events")}
                if ("events" in tables)
                else set()
            )
            version = None
            if "adk_internal_metadata" in tables:
                from sqlalchemy import text

                row = sync_connection.execute(
                    text("SELECT value FROM adk_internal_metadata WHERE key = 'schema_version'")
                ).fetchone()
                version = row[0] if row else None
            return tables, columns, version

        tables, columns, version = await connection.run_sync(look)
        if not {"sessions", "events"} <= tables:
            missing = ", ".join(sorted({"sessions", "events"} - tables))
            raise EvalSetupError(
                f"{self.description} has no ADK session tables (missing: {missing}); is it "
                "the store an agent's DatabaseSessionService or `adk web` writes?"
            )
        if "event_data" not in columns:
            raise EvalSetupError(
                f"{self.description} is in ADK's legacy v0 session schema (pickled events); "
                "migrate a copy with `adk migrate session` and read that"
            )
        if "adk_internal_metadata" not in tables:
            return "sqlite"
        if version != "1":
            raise EvalSetupError(
                f"{self.description} is in ADK session schema version {version!r}; this "
                "adk-eval reads version '1'"
            )
        return "database"

    def _problem(self, error: BaseException) -> str:
        """One line for what went wrong reaching or reading the store."""
        error = _root_cause(error)
        kind = type(error).__name__
        text = str(error).strip().splitlines()[0] if str(error).strip() else kind
        if kind == "InvalidPasswordError":
            return f"{self.description} refused the password: {text}"
        if kind == "InvalidCatalogNameError":
            return f"{self.description}: no such database ({text})"
        if isinstance(error, OSError) or kind in ("ConnectionRefusedError", "gaierror"):
            return f"cannot reach {self.description}: {text}"
        return f"cannot read sessions from {self.description}: {kind}: {text}"


def _root_cause(error: BaseException) -> BaseException:
    """The driver's own error under SQLAlchemy's wrappers (``orig``, then the cause chain)."""
    seen = set()
    while id(error) not in seen:
        seen.add(id(error))
        inner = getattr(error, "orig", None) or error.__cause__
        if inner is None:
            break
        error = inner
    return error


class _Reader:
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
