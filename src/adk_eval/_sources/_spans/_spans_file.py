"""The file ``adk-eval collect`` writes spans to: a new file, or a spans file to append to.

`open_spans_file` creates the file (WAL journal, so ``adk-eval score`` reads it
while it grows) or appends to an existing spans file (the collector's own, or
ADK's `SqliteSpanExporter`'s, which gains the collector's extra columns). Anything
else is refused with one line and left exactly as it was: a FIFO or a folder, a
file that is not SQLite, another app's database, even one with no table yet.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from ..._errors import CollectorError, EvalSetupError
from ..._file_kinds import SPANS_FILE, SQLITE_HEADER, sqlite_tables
from .._database import sqlite_uri
from .._files import not_a_file
from ._span import EXTRA_COLUMNS, SPANS_TABLE

__all__ = ["CollectorError", "open_spans_file"]

_ADK_COLUMNS = {"span_id", "trace_id", "parent_span_id", "name", "attributes_json", "session_id"}


def _spans_columns(path: Path) -> list[str]:
    """The spans table's columns of an existing SQLite file; refuses any other file."""
    with path.open("rb") as file:
        magic = file.read(len(SQLITE_HEADER))
    refused = f"--out {path} exists and is not a spans file"
    if magic != SQLITE_HEADER:
        raise CollectorError(f"{refused} (not SQLite); give a new file or a spans file")
    try:
        with contextlib.closing(sqlite3.connect(sqlite_uri(path.resolve()), uri=True)) as reader:
            tables = sqlite_tables(reader)
            columns = [row[1] for row in reader.execute("PRAGMA table_info(spans)")]
    except (sqlite3.Error, EvalSetupError) as error:
        raise CollectorError(f"{refused} (unreadable SQLite: {error})") from None
    if not tables:  # an app's database before its first table: not ours to take
        raise CollectorError(
            f"{refused} (no tables: an empty SQLite database); give a new file or a spans file"
        )
    if tables != SPANS_FILE.tables or not set(_ADK_COLUMNS) <= set(columns):
        shown = ", ".join(sorted(tables)[:5])
        raise CollectorError(f"{refused} (its tables: {shown}); give a new file or a spans file")
    return columns


def open_spans_file(path: Path) -> sqlite3.Connection:
    """A connection to `path`, checked to be (or made) a spans file with every column.

    Raises:
        CollectorError: `path` is not a regular file, or a file other than a spans file.
    """
    kind = not_a_file(path)
    if kind is not None:
        raise CollectorError(f"--out {path} is {kind}, not a file; give a new file or a spans file")
    existing = path.exists() and path.stat().st_size > 0
    columns = _spans_columns(path) if existing else None
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
    try:
        if columns is None or set(EXTRA_COLUMNS) <= set(columns):  # this collector's own file
            connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(SPANS_TABLE)
        for column in EXTRA_COLUMNS:  # an ADK file gains the columns it lacks
            if columns is not None and column not in columns:
                connection.execute(f"ALTER TABLE spans ADD COLUMN {column} TEXT")
        connection.commit()
    except BaseException:
        connection.close()
        raise
    return connection
