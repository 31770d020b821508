"""The spans table: written by write_spans, read (never written) by SpanStore."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from google.adk.sessions import InMemorySessionService
from google.adk.telemetry.sqlite_span_exporter import SqliteSpanExporter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from adk_eval._errors import EvalSetupError
from adk_eval._sources._spans._otlp import spans_from_proto
from adk_eval._sources._spans._span import SPANS_TABLE, Span
from adk_eval._sources._spans._store import SpanStore, write_spans
from tests._sources._spans.test_otlp import make_spans
from tests.production import stores


def decoded(conversations: int = 2, session: bool = True) -> list[Span]:
    return spans_from_proto(encode_spans(make_spans(conversations, session)).SerializeToString())


def spool(tmp_path: Path, spans: list[Span]) -> Path:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "spans.db"
    with sqlite3.connect(path) as connection:
        write_spans(connection, spans)
    connection.close()
    return path


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        entry.name: (entry.read_bytes(), entry.stat().st_mtime_ns) for entry in folder.iterdir()
    }


def test_write_spans_fills_the_columns_and_ignores_duplicates(tmp_path: Path) -> None:
    spans = decoded()
    connection = sqlite3.connect(tmp_path / "spans.db")
    assert write_spans(connection, spans) == 6
    assert write_spans(connection, spans[:2] + spans[:1]) == 0
    rows = connection.execute(
        "SELECT name, session_id, invocation_id, status_code FROM spans ORDER BY rowid"
    ).fetchall()
    assert ("call_llm", "s0", "e-0", "ok") in rows
    assert ("execute_tool lookup", None, None, "error") in rows
    connection.close()


def test_a_store_reads_back_what_was_written(tmp_path: Path) -> None:
    spans = decoded()
    with SpanStore.open(spool(tmp_path, list(reversed(spans)))) as store:
        assert store.count() == 6
        assert store.conversations() == ["s0", "s1"]
        read = store.spans_of("s0")
    expected = sorted(
        (span for span in spans if span.trace_id == read[0].trace_id),
        key=lambda span: (span.start_ns, span.span_id),
    )
    assert read == expected
    assert [span.name for span in read] == ["invocation", "call_llm", "execute_tool lookup"]
    assert store.skipped == 0


def test_traces_without_a_session_are_conversations_of_their_own(tmp_path: Path) -> None:
    spans = decoded(2, session=False)
    with SpanStore.open(spool(tmp_path, spans)) as store:
        keys = store.conversations()
        assert keys == [f"trace:{trace}" for trace in dict.fromkeys(s.trace_id for s in spans)]
        assert {span.trace_id for span in store.spans_of(keys[1])} == {keys[1][6:]}
        assert len(store.spans_of(keys[0])) == 3
        assert store.spans_of("trace:" + "0" * 32) == []
        assert store.spans_of("nobody") == []


def test_a_trace_naming_two_sessions_goes_to_one_only(tmp_path: Path) -> None:
    spans = decoded(1)
    root = next(span for span in spans if span.parent_id is None)
    other = dataclasses.replace(root, attributes={"gcp.vertex.agent.session_id": "a-first"})
    with SpanStore.open(spool(tmp_path, [*spans[:-1], other])) as store:
        assert store.conversations() == ["a-first"]
        assert len(store.spans_of("a-first")) == 3
        assert store.spans_of("s0") == []


def test_a_malformed_row_is_skipped_and_counted(tmp_path: Path) -> None:
    path = spool(tmp_path, decoded(1))
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE spans SET attributes_json = '{bad' WHERE name = 'call_llm'")
        connection.execute("UPDATE spans SET events_json = '[1]' WHERE name = 'invocation'")
    connection.close()
    with SpanStore.open(path) as store:
        (key,) = store.conversations()
        assert [span.name for span in store.spans_of(key)] == ["execute_tool lookup"]
        assert store.skipped == 2


def test_adks_own_span_file_is_read_and_left_untouched(tmp_path: Path, capture_spans: Any) -> None:
    folder = tmp_path / "adk"
    folder.mkdir()
    exporter = SqliteSpanExporter(db_path=str(folder / "spans.db"))
    capture_spans.add(exporter)
    keys = asyncio.run(stores.fill_service(InMemorySessionService(), 3))
    exporter.shutdown()
    before = snapshot(folder)
    with SpanStore.open(folder / "spans.db") as store:
        assert store.conversations() == [key[2] for key in keys]
        for key in store.conversations():
            spans = store.spans_of(key)
            assert spans[0].name.startswith("invoke_workflow")
            assert spans[0].status is None
            assert spans[0].events == ()
        assert store.count() == len(capture_spans.spans())
    assert snapshot(folder) == before


def test_a_file_in_wal_mode_is_read_while_written_and_gets_nothing_new(tmp_path: Path) -> None:
    path = tmp_path / "collect.db"
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode = WAL")
    spans = decoded(3)
    write_spans(writer, spans[:3])
    listing = sorted(os.listdir(tmp_path))
    with SpanStore.open(path) as store:
        assert store.conversations() == ["s0"]
        write_spans(writer, spans[3:])
        assert store.conversations() == ["s0", "s1", "s2"]
    assert sorted(os.listdir(tmp_path)) == listing
    writer.close()
    before = snapshot(tmp_path)  # no writer: no -wal, opened immutable
    with SpanStore.open(path) as store:
        assert store.count() == 9
    assert snapshot(tmp_path) == before


def test_not_sqlite_no_table_or_missing_columns_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "x.db"
    text.write_text("hello")
    with pytest.raises(EvalSetupError, match="not an SQLite file"):
        SpanStore.open(text)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (a)").connection.close()
    with pytest.raises(EvalSetupError, match="has no spans table"):
        SpanStore.open(empty)
    odd = tmp_path / "odd.db"
    sqlite3.connect(odd).execute("CREATE TABLE spans (span_id)").connection.close()
    with pytest.raises(EvalSetupError, match="has no trace_id"):
        SpanStore.open(odd)
    with pytest.raises(EvalSetupError, match="no such span file"):
        SpanStore.open(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_a_fifo_is_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "spans.db"
    os.mkfifo(fifo)
    with pytest.raises(EvalSetupError, match="FIFO"):
        SpanStore.open(fifo)


def test_the_table_ddl_is_adks_plus_extra_columns(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "a.db")
    connection.execute(SPANS_TABLE)
    assert write_spans(connection, []) == 0
    connection.close()


def _web_server_spans() -> list[Span]:
    """An `adk api_server`'s traces: its own request spans, and one /run holding an invocation."""
    spans = []
    for n, name in enumerate(["GET /health", "POST /apps/{app}/sessions", "GET /list-apps"]):
        trace = f"{n + 1:032x}"
        spans.append(Span(trace, f"{n + 1:016x}", None, name, n, n + 1))
        spans.append(Span(trace, f"{n + 1:08x}{1:08x}", f"{n + 1:016x}", "fastapi.endpoint", n, n))
    spans.append(Span(f"{9:032x}", f"{9:016x}", None, "POST /apps/{app}/sessions", 8, 9))
    run = decoded(1)
    top = Span(run[0].trace_id, "f" * 16, None, "POST /run", 10, 99)
    for span in run:  # the invocation's root goes under the request's span
        spans.append(dataclasses.replace(span, parent_id=span.parent_id or top.span_id))
    return [*spans, top]


def test_only_traces_of_an_agent_invocation_are_conversations(tmp_path: Path) -> None:
    with SpanStore.open(spool(tmp_path, _web_server_spans())) as store:
        assert store.conversations() == ["s0"]
        assert store.left_out == {
            "POST /apps/{app}/sessions": 2,
            "GET /health": 1,
            "GET /list-apps": 1,
        }
        assert store.spans_of("s0")[0].name == "POST /run"
    spans = decoded(1, session=False)  # a trace naming no session, of an invocation
    with SpanStore.open(spool(tmp_path / "x", spans)) as store:
        assert store.conversations() == [f"trace:{spans[0].trace_id}"]
        assert store.left_out == {}
