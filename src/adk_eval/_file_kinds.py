"""The kinds of file adk-eval writes or reads, in one table: what marks each, and who owns it.

Several of them are SQLite files, and a path given for one may name another (a
model cache given as ``--log``, a session store as ``--db``). Each reader tells
them apart the same way, by this table:

* a file of adk-eval's own that others may be pointed at carries a **mark**:
  SQLite's ``application_id`` (bytes 68 to 71 of the header, big-endian), set
  when the file is made. The model cache (``ADKC``), the mock MCP server's call
  log (``mmcp``) and the mock A2A server's exchange log (``ma2a``) carry one; a
  file with another program's mark is never ours;
* a file without a mark is known by its **tables**: the runs database by
  ``runs``, a span file (ADK's `SqliteSpanExporter`, ``adk-eval collect``) by
  ``spans``, an ADK session store by ``sessions`` and ``events`` (a mock MCP
  call log is one too: ``adk-eval score`` reads it);
* trace files that are not SQLite are known by their **suffixes** (OTLP/JSON
  documents or JSON lines, OTLP protobuf), or by their first bytes.

Every SQLite file starts with `SQLITE_HEADER`; `sqlite_mark` reads the mark
from a header's first 100 bytes without opening the file as a database, and
`sqlite_tables` the tables of one that is open. And
before anything is read, a path that is no regular file is named for what it is
(`not_a_file`): a FIFO named ``*.json`` would block the read forever, and
``/dev/zero`` never ends.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FILE_KINDS",
    "MOCK_A2A_LOG",
    "MOCK_MCP_LOG",
    "MODEL_CACHE",
    "OTLP_JSON",
    "OTLP_PROTO",
    "RUNS_DATABASE",
    "SESSION_STORE",
    "SPANS_FILE",
    "SQLITE_HEADER",
    "FileKind",
    "not_a_file",
    "read_head",
    "sqlite_kind",
    "sqlite_mark",
    "sqlite_tables",
    "suffix_kind",
]

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

_HEADER_SIZE = 100
_MARK_AT = slice(68, 72)  # the header's application_id, big-endian


@dataclass(frozen=True)
class FileKind:
    """One kind of file and how it is told apart.

    Attributes:
        name: What it is called in a message (``a model cache``).
        owner: Who writes it.
        mark: Its SQLite ``application_id`` (None: it carries none).
        tables: The tables an unmarked SQLite file of this kind has.
        suffixes: The file-name suffixes of a kind that is not SQLite.
    """

    name: str
    owner: str
    mark: int | None = None
    tables: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()


MODEL_CACHE = FileKind("a model cache", "adk_eval.models (the model-output cache)", 0x41444B43)
MOCK_MCP_LOG = FileKind("a mock MCP call log", "adk-eval mock-mcp --log", 0x6D6D6370)
MOCK_A2A_LOG = FileKind("a mock A2A exchange log", "adk-eval mock-a2a --log", 0x6D613261)
RUNS_DATABASE = FileKind(
    "an adk-eval runs database", "adk-eval run (reporting's RunStore)", tables=frozenset({"runs"})
)
SPANS_FILE = FileKind(
    "a span file", "ADK's SqliteSpanExporter, adk-eval collect", tables=frozenset({"spans"})
)
SESSION_STORE = FileKind(
    "an ADK session store", "ADK's session services", tables=frozenset({"sessions", "events"})
)
OTLP_JSON = FileKind("OTLP/JSON", "an OpenTelemetry exporter", suffixes=(".json", ".jsonl"))
OTLP_PROTO = FileKind("OTLP protobuf", "an OpenTelemetry exporter", suffixes=(".pb", ".binpb"))

FILE_KINDS = (
    MODEL_CACHE,
    MOCK_MCP_LOG,
    MOCK_A2A_LOG,
    RUNS_DATABASE,
    SPANS_FILE,
    SESSION_STORE,
    OTLP_JSON,
    OTLP_PROTO,
)
"""Every kind, the marked ones first (a mark decides before any table does)."""


_NOT_FILES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_a_file(path: Path | str) -> str | None:
    """What `path` is when it exists but is not a regular file (``a FIFO (named pipe)``).

    None for a regular file, or a path that cannot be examined (its reader says why).
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _NOT_FILES if test(mode)), "not a regular file")


def read_head(path: Path) -> bytes | None:
    """The first 100 bytes of the file at `path` (fewer if it is shorter); None if unreadable."""
    try:
        with path.open("rb") as file:
            return file.read(_HEADER_SIZE)
    except OSError:
        return None


def sqlite_mark(head: bytes) -> int | None:
    """The ``application_id`` in an SQLite file's first 100 bytes; None if they are not SQLite's.

    0 is an unmarked SQLite file. The mark in a write-ahead log not yet copied back
    is not in the header: a reader that can open the file asks SQLite instead.
    """
    if not head.startswith(SQLITE_HEADER) or len(head) < _HEADER_SIZE:
        return None
    return int.from_bytes(head[_MARK_AT], "big")


def sqlite_tables(connection: sqlite3.Connection) -> set[str]:
    """The tables of an open SQLite file, SQLite's own (``sqlite_sequence``) left out."""
    query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    return {name for (name,) in connection.execute(query)}


def sqlite_kind(mark: int, tables: Iterable[str]) -> FileKind | None:
    """The kind of an SQLite file with `mark` and `tables`; None for another program's file."""
    if mark:
        return next((kind for kind in FILE_KINDS if kind.mark == mark), None)
    present = set(tables)
    return next((k for k in FILE_KINDS if k.tables and k.tables <= present), None)


def suffix_kind(path: Path) -> FileKind | None:
    """The kind a file's suffix names (``.jsonl``: OTLP/JSON), whatever its case; else None."""
    suffix = path.suffix.lower()
    return next((kind for kind in FILE_KINDS if suffix in kind.suffixes), None)
