"""The SQLite spans table: writing spans into it, reading a file of it one conversation at a time.

`write_spans` fills `SPANS_TABLE` (the collector's file, the private spool of an
OTLP file). `SpanStore` reads any file with a ``spans`` table (ADK's own
`SqliteSpanExporter` file included) without ever writing to it: it is opened
read-only by the same ``file:`` URI as a session store (`sqlite_uri`: no
``-wal``, ``-shm`` or journal created beside it, readable while a process writes
it in WAL mode).

A conversation is a set of traces of agent invocations: a trace belongs to the
conversation its spans name (their ``session_id`` column); a trace that names none
is a conversation of its own, keyed ``trace:<trace_id>``. A trace holding no span
of an agent invocation (ADK's ``invocation``, ``invoke_*``, ``call_llm``,
``generate_content``, ``execute_tool``, or an OpenInference span) is no
conversation: a web server's own request spans (``GET /health``, session creation)
are counted by their root span's name in `SpanStore.left_out`, not made into empty
conversations. Only one small tuple per conversation trace is held in memory
(`SpanStore.conversations`); spans are read one conversation at a time.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from ..._errors import EvalSetupError
from ..._file_kinds import SPANS_FILE, SQLITE_HEADER, sqlite_tables
from .._database import sqlite_uri
from .._files import not_a_file
from ._span import EXTRA_COLUMNS, SPANS_TABLE, Span, SpanEvent, conversation_of

__all__ = ["SpanStore", "write_spans"]

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS spans_session_id_idx ON spans(session_id)",
    "CREATE INDEX IF NOT EXISTS spans_trace_id_idx ON spans(trace_id)",
)
"""ADK's own indexes (same names), which reading one conversation at a time needs."""

_INSERT = (
    "INSERT OR IGNORE INTO spans (span_id, trace_id, parent_span_id, name, "
    "start_time_unix_nano, end_time_unix_nano, session_id, invocation_id, attributes_json, "
    "status_code, status_message, events_json, resource_json) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_BASE_COLUMNS = (
    "span_id",
    "trace_id",
    "parent_span_id",
    "name",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "attributes_json",
)

_TRACE_PREFIX = "trace:"

_OF_AN_INVOCATION = (
    "MAX(name IN ('invocation', 'call_llm') OR name GLOB 'invoke_*' "
    "OR name GLOB 'generate_content*' OR name GLOB 'execute_tool*' "
    "OR instr(attributes_json, '\"openinference.span.kind\"') > 0)"
)
"""SQL: whether a trace holds a span of an agent invocation (ADK's or OpenInference's)."""

_OWNERS = (
    "SELECT trace_id, MIN(COALESCE(start_time_unix_nano, 0)), "
    "MAX(CASE WHEN name != 'gen_ai.evaluation.result' THEN COALESCE(end_time_unix_nano, 0) "
    f"ELSE 0 END), {_OF_AN_INVOCATION}, "
    f"CASE WHEN {_OF_AN_INVOCATION} THEN "
    "(SELECT inner.session_id FROM spans AS inner "
    "WHERE inner.trace_id = outer.trace_id AND NULLIF(inner.session_id, '') IS NOT NULL "
    "ORDER BY COALESCE(inner.start_time_unix_nano, 0), inner.span_id LIMIT 1) "
    "ELSE (SELECT root.name FROM spans AS root WHERE root.trace_id = outer.trace_id "
    "ORDER BY NULLIF(root.parent_span_id, '') IS NOT NULL, "
    "COALESCE(root.start_time_unix_nano, 0), root.span_id LIMIT 1) END "
    "FROM spans AS outer GROUP BY trace_id"
)
"""SQL: per trace, its first start, its last end (an evaluation result's left out, as a
rebuilt session's update time leaves it out), whether it is of an invocation, and its
session (if so) or its root span's name (if not)."""


def _row(span: Span) -> tuple[Any, ...]:
    invocation = span.attributes.get("gcp.vertex.agent.invocation_id")
    events = [
        {"name": event.name, "time_unix_nano": event.time_ns, "attributes": dict(event.attributes)}
        for event in span.events
    ]
    return (
        span.span_id,
        span.trace_id,
        span.parent_id,
        span.name,
        span.start_ns,
        span.end_ns,
        conversation_of(span),
        invocation if isinstance(invocation, str) else None,
        json.dumps(dict(span.attributes), ensure_ascii=False, default=str),
        span.status,
        span.status_message,
        json.dumps(events, ensure_ascii=False, default=str),
        json.dumps(dict(span.resource), ensure_ascii=False, default=str),
    )


def write_spans(connection: sqlite3.Connection, spans: Iterable[Span]) -> int:
    """Inserts spans into the ``spans`` table (created if missing), and commits.

    A span whose ``span_id`` is already there is left out (a resent batch).

    Args:
        connection: A writable connection.
        spans: The spans to insert.

    Returns:
        How many rows were inserted.
    """
    connection.execute(SPANS_TABLE)
    for index in _INDEXES:
        connection.execute(index)
    before = connection.total_changes
    connection.executemany(_INSERT, (_row(span) for span in spans))
    connection.commit()
    return connection.total_changes - before


class SpanStore:
    """A read-only view of an SQLite file with a ``spans`` table.

    Attributes:
        path: The file read.
        skipped: Rows left out so far because a JSON column in them is malformed.
        skipped_input: Lines or messages of the input files left out while spooling
            them (a truncated last line); `notes` says which.
        notes: One line for each thing the caller may want to say once.
        left_out: The traces holding no span of an agent invocation, counted by
            their root span's name (as of the last `conversations`).
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self.path = path
        self.skipped = 0
        self.skipped_input = 0
        self.notes: list[str] = []
        self.left_out: Counter[str] = Counter()
        self._closers: list[Callable[[], Any]] = []
        columns = {row[1] for row in connection.execute("PRAGMA table_info(spans)")}
        missing = [column for column in (*_BASE_COLUMNS, "session_id") if column not in columns]
        if missing:
            connection.close()
            raise EvalSetupError(
                f"{path}'s spans table has no {', '.join(missing)} column: not a span file "
                "of ADK's SqliteSpanExporter or `adk-eval collect`"
            )
        self._extra = [column for column in EXTRA_COLUMNS if column in columns]
        self._owner_map: dict[str, tuple[str, int, int]] | None = None
        self._by_key: dict[str, list[str]] | None = None
        self._select = ", ".join((*_BASE_COLUMNS, *self._extra))

    @classmethod
    def open(cls, path: Path) -> SpanStore:
        """Opens a span file read-only (nothing is created or changed beside it).

        Raises:
            EvalSetupError: No such file, not a regular file, not SQLite, or no
                ``spans`` table in it.
        """
        if not path.exists():
            raise EvalSetupError(f"no such span file: {path}")
        kind = not_a_file(path)
        if kind is not None:
            raise EvalSetupError(f"{path} is {kind}, not an SQLite span file (nothing was read)")
        try:
            with path.open("rb") as file:
                header = file.read(len(SQLITE_HEADER))
        except OSError as error:
            raise EvalSetupError(f"cannot read {path}: {error.strerror or error}") from None
        if header != SQLITE_HEADER:
            raise EvalSetupError(
                f"{path} is not an SQLite file: a span file is ADK's SqliteSpanExporter "
                "file or the one `adk-eval collect` writes"
            )
        path = path.resolve()
        try:
            connection = sqlite3.connect(sqlite_uri(path), uri=True, check_same_thread=False)
            tables = sqlite_tables(connection)
        except sqlite3.Error as error:
            raise EvalSetupError(f"cannot read {path} as SQLite: {error}") from None
        if not SPANS_FILE.tables <= tables:
            connection.close()
            raise EvalSetupError(
                f"{path} has no spans table: not a span file of ADK's SqliteSpanExporter "
                "or `adk-eval collect`"
            )
        return cls(connection, path)

    def count(self) -> int:
        """How many spans the file holds."""
        return int(self._connection.execute("SELECT COUNT(*) FROM spans").fetchone()[0])

    def conversations(self) -> list[str]:
        """The conversation keys, ordered by their first span's start (then key).

        A trace goes to the conversation its earliest span naming one names (the
        outermost: an `AgentTool`'s inner agent runs in a session of its own, which
        its later spans name); a trace naming none is keyed ``trace:<trace_id>``; a
        trace of no agent invocation is none, and counted in `left_out`.
        """
        self._owner_map = self._by_key = None  # a file being written may have grown
        owners = self._owners()
        first: dict[str, int] = {}
        for key, start, _ in owners.values():
            first[key] = min(start, first.get(key, start))
        return sorted(first, key=lambda key: (first[key], key))

    def _owners(self) -> dict[str, tuple[str, int, int]]:
        """Each conversation trace's key, first start and last end (read once per store)."""
        if self._owner_map is None:
            self._owner_map, self.left_out = {}, Counter()
            for trace, start, end, invoked, named in self._connection.execute(_OWNERS):
                if not invoked:
                    self.left_out[str(named)] += 1
                    continue
                key = str(named) if named is not None else _TRACE_PREFIX + str(trace)
                self._owner_map[str(trace)] = (key, int(start), int(end or 0))
        return self._owner_map

    def _traces(self, key: str) -> list[str]:
        if self._by_key is None:
            self._by_key = {}
            for trace, (owner, _, _) in self._owners().items():
                self._by_key.setdefault(owner, []).append(trace)
        return self._by_key.get(key, [])

    def last_end(self, key: str) -> float:
        """The latest end of the conversation's spans in seconds (0 without one), from SQL.

        At least the update time its rebuilt session gets (`rebuild` may leave spans
        of other sessions out), so a conversation whose `last_end` is before a time
        was last updated before it, unbuilt.
        """
        owners = self._owners()
        return max((owners[trace][2] for trace in self._traces(key)), default=0) / 1e9

    def last_trace(self, key: str) -> str | None:
        """The conversation's newest trace (latest first start): its last invocation's."""
        owners = self._owners()
        traces = self._traces(key)
        return max(traces, key=lambda trace: (owners[trace][1], trace)) if traces else None

    def spans_of(self, key: str) -> list[Span]:
        """All spans of a conversation's traces, by start time then span id.

        A row with a malformed JSON column is left out and counted in `skipped`.
        """
        traces = self._traces(key)
        if not traces:
            return []
        marks = ", ".join("?" for _ in traces)
        rows = self._connection.execute(
            f"SELECT {self._select} FROM spans WHERE trace_id IN ({marks}) "
            "ORDER BY COALESCE(start_time_unix_nano, 0), span_id",
            traces,
        )
        return list(self._spans(rows))

    def _spans(self, rows: Iterable[tuple[Any, ...]]) -> Iterator[Span]:
        for row in rows:
            try:
                span = self._span(row)
            except (ValueError, TypeError, KeyError):
                self.skipped += 1
                continue
            yield span

    def _span(self, row: tuple[Any, ...]) -> Span:
        span_id, trace_id, parent, name, start, end, attributes_json = row[:7]
        extra = dict(zip(self._extra, row[7:], strict=True))
        attributes = _json(attributes_json, dict, {})
        events = tuple(
            SpanEvent(
                str(event["name"]),
                int(event.get("time_unix_nano") or 0),
                _checked(event.get("attributes") or {}, dict),
            )
            for event in _json(extra.get("events_json"), list, [])
        )
        status = extra.get("status_code")
        return Span(
            trace_id=str(trace_id),
            span_id=str(span_id),
            parent_id=str(parent) if parent else None,
            name=str(name or ""),
            start_ns=int(start or 0),
            end_ns=int(end or 0),
            attributes=attributes,
            events=events,
            status=status if status in ("ok", "error") else None,
            status_message=extra.get("status_message") or None,
            resource=_json(extra.get("resource_json"), dict, {}),
        )

    def on_close(self, closer: Callable[[], Any]) -> None:
        """Also calls `closer` when the store is closed (after closing the file)."""
        self._closers.append(closer)

    def close(self) -> None:
        """Closes the file, then calls what `on_close` added."""
        self._connection.close()
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> SpanStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _json(text: Any, kind: type[Any], empty: Any) -> Any:
    """A JSON column's value, checked to be of `kind`; `empty` when NULL."""
    if text is None or text == "":
        return empty
    return _checked(json.loads(text), kind)


def _checked(value: Any, kind: type[Any]) -> Any:
    if not isinstance(value, kind):
        raise ValueError(f"{type(value).__name__}, not {kind.__name__}")
    return value
