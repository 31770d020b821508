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

An SQLite file is opened by a ``file:`` URI of its own: the path percent-escaped
(a file name may hold ``?``, ``#`` or ``%``, which SQLite would otherwise read as
the URI's options: ``uri?mode=rwc&x=.db`` would create a new empty ``uri``), and
only the store's name is taken from the URL, never options after it. A store in
WAL mode gets no new files beside it: one that no process has open (no ``-wal``
file) is opened ``immutable`` (otherwise SQLite creates ``-wal`` and ``-shm``
files even to read), one in use is read through its own ``-wal`` and ``-shm``.

A read closes what it opened even when it is cancelled (a stopped watch, Ctrl-C):
its engine is disposed of to the end before the cancellation goes on, so no
connection is left for the garbage collector to find later.

Sessions stream in batches (`BATCH` sessions, their events in one query), the
most recently updated first, so memory stays flat whatever the store's size. A
session whose rows cannot be read is handed to the caller's ``unreadable``
callback (see `_rows`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import quote

from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._file_kinds import SQLITE_HEADER, read_head
from ._files import OnUnreadable, not_a_file
from ._filter import SessionFilter
from ._rows import BATCH, Head, Layout, Reader
from ._source import SourceBase

__all__ = ["DatabaseSource"]


class DatabaseSource(SourceBase):
    """An ADK session store's database, opened read-only.

    Args:
        url: ``sqlite:///PATH``, ``sqlite+aiosqlite:///PATH`` or ``postgresql://...``.

    Raises:
        EvalSetupError: A missing SQLite file (or one that is not a regular file, or
            a URL with options after it), or a URL SQLAlchemy cannot parse.
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
            self.path = _sqlite_path(url, parsed)
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
        async with self._connected() as engine, engine.connect() as connection:
            await self._layout(connection)

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Any]:
        """An engine, disposed of afterwards; a failure of the store's is one line naming it."""
        engine = self._engine()
        try:
            yield engine
        except EvalSetupError:
            raise
        except Exception as error:
            raise EvalSetupError(self._problem(error)) from None
        finally:
            await _to_completion(engine.dispose())

    def _engine(self) -> Any:
        """An engine whose every connection is read-only at the driver."""
        from sqlalchemy.ext.asyncio import create_async_engine
        from sqlalchemy.pool import NullPool

        if self.dialect != "sqlite":
            read_only = {"server_settings": {"default_transaction_read_only": "on"}}
            return create_async_engine(self._url, connect_args=read_only)
        uri = sqlite_uri(self.path)

        async def connect() -> Any:
            import aiosqlite

            return await aiosqlite.connect(uri, uri=True)

        # A URL without a file would share one connection (StaticPool): each its own.
        return create_async_engine("sqlite+aiosqlite://", async_creator=connect, poolclass=NullPool)

    async def read(
        self, filters: SessionFilter, unreadable: OnUnreadable
    ) -> AsyncIterator[tuple[Session, frozenset[str]]]:
        """The sessions that pass `filters`, lacking nothing, most recently updated first.

        A session whose rows cannot be read goes to `unreadable` and is left out.

        Raises:
            EvalSetupError: The store cannot be reached or read, or holds no ADK sessions.
        """
        async with (
            self._connected() as engine,
            engine.connect() as listing,
            engine.connect() as reading,
        ):
            reader = Reader(await self._layout(listing), reading, unreadable)
            batch: list[Head] = []
            left = filters.limit
            async for head in reader.session_rows(listing, filters):
                if left == 0:
                    break
                batch.append(head)
                left = None if left is None else left - 1
                if len(batch) == BATCH:
                    for session in await reader.sessions(batch):
                        yield session, frozenset()
                    batch = []
            for session in await reader.sessions(batch):
                yield session, frozenset()

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


async def _to_completion(closing: Coroutine[Any, Any, None]) -> None:
    """Awaits `closing` to its end even when the caller is cancelled meanwhile.

    A read cancelled (a stopped watch, a task group's cancel, Ctrl-C) while it
    disposed of its engine would leave the pool's connections open, to be
    collected later in whatever runs then; the cancellation goes on once they are
    closed.
    """
    task = asyncio.ensure_future(closing)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError as error:
            cancelled = error
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved (not logged as lost): the cancellation goes on
        raise cancelled
    await task  # what went wrong disposing, if anything


def _sqlite_path(url: str, parsed: Any) -> Path:
    """The SQLite file a URL names, checked to be one (see the module doc).

    The text after ``:///`` as written names it when such a file exists (a name may
    hold ``?`` or ``#``); else the URL's database, percent-escapes decoded
    (``%3F``), which takes no options after ``?``.

    Raises:
        EvalSetupError: No such file, a URL with options, or not a regular file.
    """
    written = url.split(":///", 1)[1] if ":///" in url else ""
    path = Path(written)
    if not written or not path.exists():
        path = Path(parsed.database or "")
        if parsed.query:
            options = "&".join(f"{k}={v}" for k, v in parsed.query.items())
            raise EvalSetupError(
                f"sqlite:///PATH takes no options, got `?{options}` (a store is only ever "
                "read); a file whose name holds `?` or `#` is named as it is, or with %3F / %23"
            )
        if not parsed.database or not path.exists():
            raise EvalSetupError(
                f"no such SQLite file: {written or '(none given)'} (a session store is never "
                "created when read; sqlite:///relative/path, sqlite:////absolute/path)"
            )
    kind = not_a_file(path)
    if kind is not None:
        raise EvalSetupError(
            f"{path} is {kind}, not an SQLite file: give the session store's database file "
            "(nothing was read)"
        )
    return path.resolve()


def sqlite_uri(path: Path) -> str:
    """The read-only ``file:`` URI of an SQLite store, creating nothing beside it.

    Raises:
        EvalSetupError: A WAL-mode store with a ``-wal`` file but no ``-shm`` (reading
            it would create one).
    """
    options = "mode=ro"
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if _in_wal_mode(path):
        if not wal.exists():
            options += "&immutable=1"  # nothing is in a log: no -wal or -shm to create
        elif not shm.exists():
            raise EvalSetupError(
                f"{path} has a write-ahead log ({wal.name}) but no {shm.name}: reading it "
                f"would create {shm.name} beside the store; score a copy made with "
                f"`sqlite3 {path} '.backup COPY'`"
            )
    return f"file:{quote(str(path))}?{options}"


def _in_wal_mode(path: Path) -> bool:
    """Whether an SQLite file's header says WAL mode (its read and write versions are 2)."""
    header = read_head(path) or b""
    return header.startswith(SQLITE_HEADER) and header[18:20] == b"\x02\x02"


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
