"""The model cache's SQLite file: where it is, opening it, and a file that is not one.

`cache_file` finds the file (see `models._cache`). `CacheDatabase` is one open
connection to it, shared by a process's threads: in WAL mode, with a busy
timeout, so that worker processes write it at once. A file is the cache's when
it carries the cache's mark (SQLite's ``application_id``, read by SQLite, else
from the file's header) or is empty; any other file at the path (a text file,
another program's database, a damaged file without the mark) is one
`EvalSetupError` saying it is not a model cache, and is never written, cleared
or deleted. A damaged file that has the mark is one `EvalSetupError` naming the
fix, `remove_damaged`: what ``adk-eval cache clear`` does with it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..._errors import CacheBusyError, EvalSetupError
from ..._file_kinds import MODEL_CACHE, SQLITE_HEADER, read_head, sqlite_mark
from ._settings import ModelCalls

__all__ = [
    "CACHE_DIR_ENV",
    "CacheBusyError",
    "CacheDatabase",
    "cache_file",
    "remove_damaged",
]

CACHE_DIR_ENV = "ADK_EVAL_CACHE_DIR"
"""The folder of the cache file, when set (the file is ``models.sqlite`` in it)."""

_FILE_NAME = "models.sqlite"
_SCHEMA_VERSION = 1
_BUSY_TIMEOUT_S = 30.0

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT,
    case_name TEXT,
    attempt INTEGER NOT NULL,
    created REAL NOT NULL,
    request_hash TEXT NOT NULL,
    responses TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL
)""",
    "CREATE INDEX IF NOT EXISTS entries_created ON entries (created)",
    f"PRAGMA application_id = {MODEL_CACHE.mark}",
    f"PRAGMA user_version = {_SCHEMA_VERSION}",
)


def cache_file(settings: ModelCalls | None = None) -> Path:
    """The cache's file: `settings`' ``cache_path``, else the user's cache folder's."""
    if settings is not None and settings.cache_path is not None:
        return Path(settings.cache_path).expanduser()
    folder = os.environ.get(CACHE_DIR_ENV)
    if folder:
        return Path(folder).expanduser() / _FILE_NAME
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".cache"
    return root / "adk-eval" / _FILE_NAME


class CacheDatabase:
    """One connection to one cache file, shared by the threads of a process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.connection = _connect(path)

    @contextmanager
    def using(self) -> Iterator[sqlite3.Connection]:
        """The connection, held by this thread; a damaged file is one clear error."""
        with self.lock:
            try:
                yield self.connection
            except sqlite3.OperationalError as error:
                if _busy(error):
                    raise CacheBusyError(
                        f"model cache {self.path} stayed locked by another process for "
                        f"{_BUSY_TIMEOUT_S:g} s ({error}): try again"
                    ) from None
                raise _damaged(self.path, error) from None
            except sqlite3.DatabaseError as error:
                raise _damaged(self.path, error) from None

    def close(self) -> None:
        """Closes the connection."""
        with self.lock:
            self.connection.close()


def remove_damaged(path: Path) -> bool:
    """Deletes the cache file at `path` (and its WAL files) when it carries the cache's mark.

    What `adk-eval cache clear` does with a file `open_cache` refuses: only a
    file the cache itself marked goes (damaged, or of another schema); any other
    file (not SQLite, another program's database, damaged without the mark) stays
    as it is.

    Returns:
        Whether the file was deleted.
    """
    if not path.is_file() or not _marked(path):
        return False
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        name.unlink(missing_ok=True)
    return True


def _marked(path: Path) -> bool:
    """Whether the file at `path` carries the cache's mark: as SQLite reads it, else its header.

    SQLite's answer counts when it can give one (a mark still in the write-ahead
    log included); a file it cannot read is judged by the header's bytes.
    """
    try:
        connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            return bool(
                connection.execute("PRAGMA application_id").fetchone()[0] == MODEL_CACHE.mark
            )
        finally:
            connection.close()
    except sqlite3.Error:
        pass
    return sqlite_mark(read_head(path) or b"") == MODEL_CACHE.mark


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to the cache at `path`, made when there is no file (see the module doc).

    Processes opening one new cache at once race to make it WAL and create its
    tables; SQLite answers some of those steps "locked" at once rather than after
    its busy timeout, so the whole set-up is tried again, with a growing pause,
    for up to the busy timeout.
    """
    if path.is_dir():
        raise EvalSetupError(
            f"model cache {path} is a folder: give the cache a file path (--cache-path, "
            "ModelCalls(cache_path=...))"
        )
    _check_header(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline, pause = time.monotonic() + _BUSY_TIMEOUT_S, 0.01
    while True:
        try:
            return _set_up(path)
        except sqlite3.OperationalError as error:
            if not _busy(error):
                raise _damaged(path, error) from None
            if time.monotonic() + pause > deadline:
                raise EvalSetupError(f"model cache {path} stayed locked: {error}") from None
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def _set_up(path: Path) -> sqlite3.Connection:
    """One try at connecting: WAL, the tables, the mark (`sqlite3.OperationalError` if busy)."""
    try:
        connection = sqlite3.connect(
            path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as error:
        raise _damaged(path, error) from None
    try:
        _check_owner(path, connection)
        connection.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        _create(path, connection)
    except sqlite3.OperationalError:
        connection.close()
        raise
    except BaseException as error:
        connection.close()
        if isinstance(error, sqlite3.DatabaseError):
            raise _damaged(path, error) from None
        raise
    return connection


def _check_header(path: Path) -> None:
    """A file that is there and not SQLite is not ours: it is left alone."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as error:
        raise EvalSetupError(f"model cache {path} cannot be read: {error}") from None
    if head and head != SQLITE_HEADER:
        raise _not_ours(path, "not an SQLite file")


def _check_owner(path: Path, connection: sqlite3.Connection) -> None:
    """An SQLite file with tables and without the cache's mark is someone else's.

    The mark, the version and the tables are read in one statement, so in one
    snapshot: another process may be creating the cache in between two reads.
    """
    owner, version, tables = connection.execute(
        "SELECT (SELECT application_id FROM pragma_application_id()),"
        " (SELECT user_version FROM pragma_user_version()),"
        " (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
    if owner == MODEL_CACHE.mark:
        if version not in (0, _SCHEMA_VERSION):
            raise EvalSetupError(
                f"model cache {path} was written by another version of adk-eval "
                f"(schema {version}): clear it (adk-eval cache clear) or use another path "
                "(--cache-path, ModelCalls(cache_path=...))"
            )
        return
    if owner != 0 or tables:
        raise _not_ours(path, "another SQLite database")


def _create(path: Path, connection: sqlite3.Connection) -> None:
    """Makes the tables and marks the file, once, whichever process comes first."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        if connection.execute("PRAGMA application_id").fetchone()[0] != MODEL_CACHE.mark:
            _check_owner(path, connection)
            for statement in _SCHEMA:
                connection.execute(statement)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _damaged(path: Path, cause: object) -> EvalSetupError:
    """The error for a file SQLite cannot use: a damaged cache, or no cache at all."""
    if not _marked(path):
        return _not_ours(path, f"SQLite cannot read it: {cause}")
    return EvalSetupError(
        f"model cache {path} is damaged ({cause}); it was not modified: delete it with "
        f"`adk-eval cache clear --cache-path {path}`, or use another path "
        f"(--cache-path, ModelCalls(cache_path=...), ${CACHE_DIR_ENV})"
    )


def _not_ours(path: Path, what: str) -> EvalSetupError:
    return EvalSetupError(
        f"{path} is not an adk-eval model cache ({what}); it was not modified: choose "
        f"another path (--cache-path, ModelCalls(cache_path=...), ${CACHE_DIR_ENV})"
    )
