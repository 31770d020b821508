"""SpanCollector: a real ADK run's spans through the real OTLP HTTP exporter, JSON, gzip, abuse."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from adk_eval import EvalSetupError
from adk_eval._sources._spans._collector import CollectorError, SpanCollector
from adk_eval._sources._spans._store import SpanStore
from adk_eval.testing import ScriptedLlm, tool_call

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def lookup(key: str) -> dict:
    """Looks an order up."""
    return {"status": "shipped", "key": key}


async def run_adk(question: str = "where is A1?") -> str:
    """One real ADK conversation (a tool call, then an answer); returns its session id."""
    agent = LlmAgent(
        name="desk",
        model=ScriptedLlm([tool_call("lookup", {"key": "A1"}), "A1 has shipped."]),
        tools=[lookup],
    )
    runner = InMemoryRunner(agent=agent, app_name="desk_app")
    session = await runner.session_service.create_session(app_name="desk_app", user_id="ann")
    message = types.Content(role="user", parts=[types.Part(text=question)])
    async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        pass
    return session.id


def rows(path: Path) -> dict[str, tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        found = connection.execute(
            "SELECT span_id, trace_id, parent_span_id, name, session_id, attributes_json FROM spans"
        )
        return {row[0]: row[1:] for row in found}


def otlp_json(span_id: str = "00000000000000a1", session: str = "s1") -> dict:
    """A one-span OTLP/JSON ExportTraceServiceRequest."""
    attribute = {"key": "gcp.vertex.agent.session_id", "value": {"stringValue": session}}
    span = {
        "traceId": "0" * 16 + span_id,
        "spanId": span_id,
        "name": "invocation",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [attribute],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_a_real_adk_run_exported_by_the_sdk_is_kept(tmp_path, capture_spans, compression):
    out = tmp_path / "traces.db"
    with SpanCollector(out, port=0) as collector:
        exporter = OTLPSpanExporter(
            endpoint=collector.endpoint + "/v1/traces", compression=compression
        )
        capture_spans.add(exporter)
        session_id = asyncio.run(run_adk())
    finished = capture_spans.spans()
    kept = rows(out)
    assert len(finished) >= 4
    assert collector.stats.spans_kept == len(finished) == len(kept)
    assert collector.stats.requests == len(finished)  # SimpleSpanProcessor: one per span
    assert collector.stats.refused == {}
    for span in finished:
        trace_id, parent, name, _session, attributes = kept[f"{span.context.span_id:016x}"]
        assert trace_id == f"{span.context.trace_id:032x}"
        assert parent == (f"{span.parent.span_id:016x}" if span.parent else None)
        assert name == span.name
        assert json.loads(attributes) == {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in span.attributes.items()
        }
    names = {row[2] for row in kept.values()}
    assert {"invoke_agent desk", "execute_tool lookup"} <= names, names
    assert session_id in {row[3] for row in kept.values()}
    assert sqlite3.connect(out).execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_otlp_json_and_gzip_posted_with_httpx(tmp_path):
    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        url = collector.endpoint + "/v1/traces"
        plain = httpx.post(url, json=otlp_json("00000000000000a1"))
        body = gzip.compress(json.dumps(otlp_json("00000000000000a2")).encode())
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        zipped = httpx.post(url, content=body, headers=headers)
        again = httpx.post(url, json=otlp_json("00000000000000a1"))  # a resent batch
    for reply in (plain, zipped, again):
        assert (reply.status_code, reply.content) == (200, b"{}")
        assert reply.headers["content-type"] == "application/json"
    assert set(rows(tmp_path / "t.db")) == {"00000000000000a1", "00000000000000a2"}
    stats = collector.stats
    assert (stats.requests, stats.spans_received, stats.spans_kept) == (3, 3, 2)


def test_the_file_is_read_while_the_collector_writes_it(tmp_path):
    out = tmp_path / "live.db"
    with SpanCollector(out, port=0) as collector:
        url = collector.endpoint + "/v1/traces"
        assert httpx.post(url, json=otlp_json("0000000000000001", "first")).status_code == 200
        with SpanStore.open(out) as store:
            assert store.count() == 1
            assert store.conversations() == ["first"]
            for number in range(2, 30):
                span_id, session = f"{number:016x}", f"s{number % 3}"
                assert httpx.post(url, json=otlp_json(span_id, session)).status_code == 200
                assert store.count() == number  # the reader sees each commit
        with SpanStore.open(out) as store:
            assert sorted(store.conversations()) == ["first", "s0", "s1", "s2"]
            assert [span.name for span in store.spans_of("first")] == ["invocation"]


def raw_request(endpoint: str, request: bytes) -> bytes:
    """Sends raw bytes over a socket; the whole reply."""
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return reply


def test_hostile_requests_are_refused_counted_and_the_server_carries_on(tmp_path, capture_spans):
    with SpanCollector(tmp_path / "t.db", port=0, max_body=64 * 1024) as collector:
        url = collector.endpoint + "/v1/traces"
        good = encode_spans([]).SerializeToString()
        with httpx.Client() as client:
            post = client.post
            assert post(url, content=b"\xff\x00garbage", headers=PROTOBUF).status_code == 400
            not_json = {"Content-Type": "application/json"}
            assert post(url, content=b"{not json", headers=not_json).status_code == 400
            assert post(url, json={"resourceSpans": 7}).status_code == 400
            assert post(url, json=[1, 2]).status_code == 400
            assert (
                post(url, content=b"\x00" * 10, headers={"Content-Type": "text/plain"}).status_code
                == 415
            )
            gzipped = {**PROTOBUF, "Content-Encoding": "br"}
            assert post(url, content=b"x", headers=gzipped).status_code == 415
            assert post(url, content=b"x" * 70_000, headers=PROTOBUF).status_code == 413
            bomb = gzip.compress(b"\x00" * 1_000_000)
            bomb_headers = {**PROTOBUF, "Content-Encoding": "gzip"}
            assert post(url, content=bomb, headers=bomb_headers).status_code == 413
            not_gzip = post(url, content=b"plain", headers=bomb_headers)
            assert not_gzip.status_code == 400
            assert post(collector.endpoint + "/v1/profiles", json={}).status_code == 404
            assert client.get(url).status_code == 405
            assert client.request("PURGE", url).status_code == 405
        huge = raw_request(
            collector.endpoint,
            b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-protobuf\r\nContent-Length: 999999999999\r\n\r\n",
        )
        assert huge.startswith(b"HTTP/1.1 413 ")
        assert b"over 65536 bytes" in huge
        assert raw_request(
            collector.endpoint,
            b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n\r\n",
        ).startswith(b"HTTP/1.1 411 ")
        reply = httpx.post(url, content=good, headers=PROTOBUF)
        assert (reply.status_code, reply.content) == (200, b"")
        assert reply.headers["content-type"] == "application/x-protobuf"
    assert collector.stats.refused == {
        "bad_request": 5,
        "unsupported_type": 2,
        "too_large": 3,
        "not_found": 1,
        "method_not_allowed": 2,
        "length_required": 1,
    }
    assert collector.stats.requests == 1


def test_truncated_protobuf_of_real_spans_is_a_400(tmp_path, capture_spans):
    asyncio.run(run_adk())
    whole = encode_spans(capture_spans.spans()).SerializeToString()
    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        url = collector.endpoint + "/v1/traces"
        cut = httpx.post(url, content=whole[: len(whole) // 2], headers=PROTOBUF)
        assert cut.status_code == 400
        assert cut.text.count("\n") == 1
        assert httpx.post(url, content=whole, headers=PROTOBUF).status_code == 200
    assert collector.stats.spans_kept == len(capture_spans.spans())


@pytest.mark.slow
def test_a_flood_of_bad_requests_leaves_the_server_answering(tmp_path):
    bodies = [b"\x0a\xff\xff", b"", b"\x12\x05abc", b"{}garbage"] * 125
    failures: list[int] = []

    def send(part: list[bytes], url: str) -> None:
        with httpx.Client() as client:
            for body in part:
                reply = client.post(url, content=body + b"\xff", headers=PROTOBUF)
                failures.append(reply.status_code)

    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        url = collector.endpoint + "/v1/traces"
        threads = [threading.Thread(target=send, args=(bodies[n::10], url)) for n in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert httpx.post(url, json=otlp_json()).status_code == 200
    assert failures == [400] * 500
    assert collector.stats.refused == {"bad_request": 500}
    assert (collector.stats.requests, collector.stats.spans_kept) == (1, 1)


def test_other_files_are_refused_and_left_byte_for_byte(tmp_path):
    store = tmp_path / "sessions.db"
    with sqlite3.connect(store) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, state TEXT)")
        connection.execute("INSERT INTO sessions VALUES ('s1', '{}')")
    connection.close()
    text = tmp_path / "notes.db"
    text.write_text("not a database\n")
    for path in (store, text):
        before = path.read_bytes()
        with pytest.raises(CollectorError, match="exists and is not a spans file"):
            SpanCollector(path, port=0).start()
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db", "sessions.db"]


def test_an_adk_span_file_and_a_collector_file_are_appended_to(tmp_path, capture_spans):
    from google.adk.telemetry.sqlite_span_exporter import SqliteSpanExporter

    adk_file = tmp_path / "adk.db"
    capture_spans.add(SqliteSpanExporter(db_path=str(adk_file)))
    asyncio.run(run_adk())
    written_by_adk = set(rows(adk_file))
    assert written_by_adk
    for _ in range(2):  # the second time: the collector's own file, the span already there
        with SpanCollector(adk_file, port=0) as collector:
            httpx.post(collector.endpoint + "/v1/traces", json=otlp_json())
    assert collector.stats.spans_kept == 0
    assert set(rows(adk_file)) == written_by_adk | {"00000000000000a1"}
    with SpanStore.open(adk_file) as store:
        assert "s1" in store.conversations()


def test_only_loopback_unless_allowed(tmp_path):
    with pytest.raises(EvalSetupError, match="--allow-remote"):
        SpanCollector(tmp_path / "t.db", host="0.0.0.0", port=0).start()
    assert not (tmp_path / "t.db").exists()
    with SpanCollector(tmp_path / "t.db", host="0.0.0.0", port=0, allow_remote=True) as open_:
        assert open_.endpoint.startswith("http://0.0.0.0:")
    with SpanCollector(tmp_path / "t.db", host="::1", port=0) as ipv6:
        assert ipv6.endpoint.startswith("http://[::1]:")
        assert httpx.post(ipv6.endpoint + "/v1/traces", json=otlp_json()).status_code == 200


def test_a_request_for_another_host_name_is_refused(tmp_path):
    """DNS rebinding: a web page whose name now points at 127.0.0.1 cannot plant conversations."""
    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        url = collector.endpoint + "/v1/traces"
        port = url.split(":")[2].split("/")[0]
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example"):
            refused = httpx.post(url, json=otlp_json(), headers={"Host": host})
            assert refused.status_code == 421, host
            assert "answers requests for 127.0.0.1 only" in refused.text
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]"):
            assert httpx.post(url, json=otlp_json(), headers={"Host": host}).status_code == 200
        no_host = raw_request(
            collector.endpoint,
            b"POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2\r\n\r\n{}",
        )
        assert no_host.startswith(b"HTTP/1.1 421 ")
    assert collector.stats.refused == {"wrong_host": 4}
    assert collector.stats.requests == 3
    with SpanCollector(tmp_path / "t.db", host="0.0.0.0", port=0, allow_remote=True) as remote:
        url = f"http://127.0.0.1:{remote.endpoint.rsplit(':', 1)[1]}/v1/traces"
        reply = httpx.post(url, json=otlp_json(), headers={"Host": "collector.internal:4318"})
        assert reply.status_code == 200  # listening beyond loopback: any name reaches it


def test_half_sent_bodies_do_not_hold_up_a_normal_export(tmp_path):
    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        host, port = collector.endpoint.removeprefix("http://").rsplit(":", 1)
        stalled = []
        for _ in range(8):
            connection = socket.create_connection((host, int(port)), timeout=10)
            connection.sendall(
                b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"resour'
            )
            stalled.append(connection)
        try:
            time.sleep(0.2)  # the collector is reading each of them
            started = time.monotonic()
            reply = httpx.post(collector.endpoint + "/v1/traces", json=otlp_json(), timeout=10)
            assert reply.status_code == 200
            assert time.monotonic() - started < 2
        finally:
            for connection in stalled:
                connection.close()
        deadline = time.monotonic() + 5
        while collector.budget.held and time.monotonic() < deadline:
            time.sleep(0.05)
        assert collector.budget.held == 0  # each cut body gave back what it held
    assert collector.stats.requests == 1
    assert collector.stats.refused == {"bad_request": 8}


def test_logs_and_metrics_are_accepted_and_dropped(tmp_path):
    """ADK sends them too when OTEL_EXPORTER_OTLP_ENDPOINT is set: no error in the app's log."""
    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        for signal in ("logs", "metrics"):
            url = f"{collector.endpoint}/v1/{signal}"
            protobuf = httpx.post(url, content=b"\x0a\x00" * 5000, headers=PROTOBUF)
            assert (protobuf.status_code, protobuf.content) == (200, b"")
            as_json = httpx.post(url, json={"resourceLogs": []})
            assert (as_json.status_code, as_json.content) == (200, b"{}")
        assert httpx.get(f"{collector.endpoint}/v1/logs").status_code == 405
    stats = collector.stats
    assert (stats.requests, stats.dropped, stats.refused) == (0, 4, {"method_not_allowed": 1})
    assert stats.summary() == (
        "0 span(s) kept, 0 received in 0 request(s); 4 log and metric request(s) dropped; "
        "1 refused: 1 method_not_allowed"
    )
    assert rows(tmp_path / "t.db") == {}


def test_an_empty_sqlite_file_of_another_app_is_refused_unchanged(tmp_path):
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as connection:
        connection.execute("PRAGMA user_version = 3")  # an SQLite file, no table yet
    connection.close()
    before = other.read_bytes()
    assert before.startswith(b"SQLite format 3\x00")
    with pytest.raises(CollectorError, match=r"exists and is not a spans file \(no tables"):
        SpanCollector(other, port=0).start()
    assert other.read_bytes() == before


def test_a_fifo_is_refused_as_out(tmp_path):
    fifo = tmp_path / "spans.fifo"
    os.mkfifo(fifo)
    with pytest.raises(CollectorError, match=r"--out .* is a FIFO \(named pipe\), not a file"):
        SpanCollector(fifo, port=0).start()


def test_a_connection_reset_mid_body_is_counted_not_a_traceback(tmp_path, capfd):
    with SpanCollector(tmp_path / "t.db", port=0) as collector:
        host, port = collector.endpoint.removeprefix("http://").rsplit(":", 1)
        connection = socket.create_connection((host, int(port)), timeout=10)
        connection.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )
        time.sleep(0.2)
        connection.setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
        )
        connection.close()  # an RST, not a FIN
        deadline = time.monotonic() + 5
        while not collector.stats.refused and time.monotonic() < deadline:
            time.sleep(0.05)
        assert httpx.post(collector.endpoint + "/v1/traces", json=otlp_json()).status_code == 200
    assert collector.stats.refused == {"bad_request": 1}
    assert collector.budget.held == 0
    assert "Traceback" not in capfd.readouterr().err
