"""``adk-eval collect``: an OTLP/HTTP receiver keeping spans in a SQLite file as they arrive.

`SpanCollector` answers ``POST /v1/traces`` (an ``ExportTraceServiceRequest``,
protobuf or OTLP/JSON, gzipped or not, as the OpenTelemetry SDK's OTLP HTTP
exporter sends) on a stdlib threading HTTP server, and writes each request's
spans in one transaction on one SQLite connection (serialized), in WAL mode so
that ``adk-eval score`` reads the file while it grows. A refusal is an HTTP
status and a one-line reason, counted; memory stays bounded (`MAX_CONNECTIONS`
served at once, `MAX_BODIES_IN_FLIGHT` bodies of at most ``max_body`` bytes).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import sqlite3
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..._errors import CollectorError, EvalSetupError
from ..._sandbox._loopback import refuse_remote
from .._database import sqlite_uri
from ._otlp import SpanFormatError, spans_from_json, spans_from_proto
from ._span import EXTRA_COLUMNS, SPANS_TABLE, Span
from ._store import write_spans

__all__ = ["DEFAULT_MAX_BODY", "CollectorError", "CollectorStats", "SpanCollector"]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
"""The largest request body accepted (compressed, and again once decompressed)."""

MAX_CONNECTIONS = 64  # served at once; one more is answered 503 and closed
MAX_BODIES_IN_FLIGHT = 4  # read, decoded or written at once; one waiting over 30 s gets 503

_TRACES_PATH = "/v1/traces"
_SOCKET_TIMEOUT = 30.0
_STOP_GRACE = 5.0
_ADK_COLUMNS = {"span_id", "trace_id", "parent_span_id", "name", "attributes_json", "session_id"}
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass(frozen=True)
class CollectorStats:
    """What a collector has done so far.

    Attributes:
        requests: Export requests accepted (answered 200).
        spans_received: Spans in those requests.
        spans_kept: Spans written (a span id already in the file is not written again).
        refused: Requests refused, by kind: ``bad_request`` (400), ``not_found``
            (404), ``method_not_allowed`` (405), ``length_required`` (411),
            ``too_large`` (413), ``unsupported_type`` (415), ``busy`` (503),
            ``failed`` (500: the file could not be written).
    """

    requests: int = 0
    spans_received: int = 0
    spans_kept: int = 0
    refused: Mapping[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """One line: spans kept, requests accepted, refusals by kind."""
        line = f"{self.spans_kept} span(s) kept, {self.spans_received} received "
        line += f"in {self.requests} request(s)"
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.refused.items()))
        return line + (
            f"; {sum(self.refused.values())} refused: {kinds}" if kinds else "; none refused"
        )


class _Refusal(Exception):
    """A request answered with an error status (`kind` is its `CollectorStats.refused` key)."""

    def __init__(self, status: int, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.kind, self.reason = status, kind, reason


def _decode(body: bytes, is_json: bool) -> list[Span]:
    """The spans of an ``ExportTraceServiceRequest`` body (protobuf or OTLP/JSON)."""
    try:
        if not is_json:
            return spans_from_proto(body)
        document = json.loads(body)
        if not isinstance(document, dict):
            raise SpanFormatError(f"the JSON body is {type(document).__name__}, not an object")
        return spans_from_json(document)
    except SpanFormatError as error:
        reason = str(error)
    except (ValueError, RecursionError) as error:  # not JSON, or not UTF-8
        reason = f"the body is not JSON ({error})"
    raise _Refusal(400, "bad_request", " ".join(reason.split())[:300])


class _Handler(BaseHTTPRequestHandler):
    """One connection: OTLP export requests on ``POST /v1/traces``, refusals otherwise."""

    protocol_version = "HTTP/1.1"
    timeout = _SOCKET_TIMEOUT
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the collector reports counts, not each request."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # every method but POST
            return self._not_post
        raise AttributeError(name)

    def _not_post(self) -> None:
        if self.path.split("?")[0] != _TRACES_PATH:
            self._refuse(_Refusal(404, "not_found", f"no such path; POST to {_TRACES_PATH}"))
        else:
            self._refuse(_Refusal(405, "method_not_allowed", f"{_TRACES_PATH} takes POST only"))

    def do_POST(self) -> None:
        """An export request: its spans kept and an empty response, or a refusal."""
        collector = self.server.collector
        if self.path.split("?")[0] != _TRACES_PATH:
            return self._not_post()
        try:
            is_json = self._check_types()
            length = self._length(collector.max_body)
            if not collector.bodies.acquire(timeout=_SOCKET_TIMEOUT):
                raise _Refusal(503, "busy", "too many requests at once; retry later")
            try:  # a body is read, decoded and written while holding one of the places
                collector.keep(_decode(self._body(length, collector.max_body), is_json))
            finally:
                collector.bodies.release()
        except _Refusal as refusal:
            return self._refuse(refusal)
        answer = b"{}" if is_json else b""  # an empty ExportTraceServiceResponse
        self._reply(200, answer, "application/json" if is_json else "application/x-protobuf")

    def _check_types(self) -> bool:
        """Whether the body is JSON (else protobuf); refuses other types and encodings."""
        media = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media not in ("application/json", "application/x-protobuf", "application/protobuf"):
            reason = f"Content-Type {media or '(none)'}: send protobuf or JSON"
            raise _Refusal(415, "unsupported_type", reason)
        if self._encoding() not in ("identity", "gzip"):
            shown = f"Content-Encoding {self._encoding()}"
            raise _Refusal(415, "unsupported_type", f"{shown}: send gzip or none")
        return media == "application/json"

    def _encoding(self) -> str:
        return (self.headers.get("Content-Encoding") or "identity").strip().lower()

    def _length(self, limit: int) -> int:
        length = (self.headers.get("Content-Length") or "").strip()
        if not length:
            raise _Refusal(411, "length_required", "a Content-Length is required")
        if not length.isdigit():
            raise _Refusal(400, "bad_request", "the Content-Length is not a number")
        if int(length) > limit:
            raise _Refusal(413, "too_large", f"the body is over {limit} bytes")
        return int(length)

    def _body(self, length: int, limit: int) -> bytes:
        """The request body, gunzipped (at most `limit` bytes)."""
        body = self.rfile.read(length)
        if len(body) < length:
            raise _Refusal(400, "bad_request", "the body is shorter than its Content-Length")
        if self._encoding() != "gzip":
            return body
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(body, limit + 1)
        except zlib.error as error:
            raise _Refusal(400, "bad_request", f"the body is not gzip ({error})") from None
        if len(data) > limit:
            raise _Refusal(413, "too_large", f"the decompressed body is over {limit} bytes")
        if not inflater.eof:
            raise _Refusal(400, "bad_request", "the gzip body is truncated")
        return data

    def _refuse(self, refusal: _Refusal) -> None:
        self.server.collector.refused(refusal.kind)
        self.close_connection = True  # the body may be unread
        self._reply(refusal.status, (refusal.reason + "\n").encode(), "text/plain; charset=utf-8")

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    """A threading HTTP server serving at most `MAX_CONNECTIONS` connections at once."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], family: int, collector: SpanCollector) -> None:
        self.address_family = family
        self.collector = collector
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.collector.refused("busy")
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def _spans_columns(path: Path) -> list[str] | None:
    """The spans table's columns of a SQLite file (None: no table); refuses any other file."""
    with path.open("rb") as file:
        magic = file.read(16)
    refused = f"--out {path} exists and is not a spans file"
    if magic != b"SQLite format 3\x00":
        raise CollectorError(f"{refused} (not SQLite); give a new file or a spans file")
    query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    try:
        with contextlib.closing(sqlite3.connect(sqlite_uri(path.resolve()), uri=True)) as reader:
            tables = {name for (name,) in reader.execute(query)}
            columns = [row[1] for row in reader.execute("PRAGMA table_info(spans)")]
    except (sqlite3.Error, EvalSetupError) as error:
        raise CollectorError(f"{refused} (unreadable SQLite: {error})") from None
    if tables and (tables != {"spans"} or not set(_ADK_COLUMNS) <= set(columns)):
        shown = ", ".join(sorted(tables)[:5])
        raise CollectorError(f"{refused} (its tables: {shown}); give a new file or a spans file")
    return columns or None


def _open_spans_file(path: Path) -> sqlite3.Connection:
    """A connection to `path`, checked to be (or made) a spans file with every column."""
    if path.is_dir():
        raise CollectorError(f"--out {path} is a directory")
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


def _family(host: str, allow_remote: bool) -> int:
    """The address family to bind `host` with; a non-loopback host needs `allow_remote`."""
    refuse_remote(host, allow_remote)  # every server's rule: spans carry prompts and replies
    try:
        ipv6 = ipaddress.ip_address(host).version == 6
    except ValueError:
        ipv6 = False
    return socket.AF_INET6 if ipv6 else socket.AF_INET


class SpanCollector:
    """An OTLP/HTTP span receiver writing to a SQLite spans file; a context manager.

    Args:
        out: The spans file: created (WAL journal) if absent or empty; an existing
            spans file (``adk-eval collect``'s or ADK's `SqliteSpanExporter`'s) is
            appended to; any other file is refused and left as it is.
        host: The interface (a loopback address unless `allow_remote`).
        port: The port (0 picks a free one; `endpoint` has the real one).
        allow_remote: Allows a non-loopback `host`.
        max_body: The largest body accepted, compressed and decompressed (bytes).

    `start` raises `EvalSetupError` (a refused `host`; `CollectorError`, one, a refused
    `out`) or `OSError` (cannot bind).
    """

    def __init__(
        self,
        out: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 4318,
        allow_remote: bool = False,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        self.out, self.host, self.port = Path(out), host.strip("[]"), port
        self.allow_remote, self.max_body = allow_remote, max_body
        self.bodies = threading.BoundedSemaphore(MAX_BODIES_IN_FLIGHT)
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # the connection's and the counts'
        self._counts = (0, 0, 0)  # requests, spans received, spans kept
        self._refused: dict[str, int] = {}
        self._server: _Server | None = None

    @property
    def endpoint(self) -> str:
        """The base URL for ``OTEL_EXPORTER_OTLP_ENDPOINT`` (exporters add ``/v1/traces``)."""
        assert self._server is not None, "the collector is not running"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._server.server_address[1]}"

    @property
    def stats(self) -> CollectorStats:
        """The counts so far."""
        with self._lock:
            return CollectorStats(*self._counts, refused=dict(self._refused))

    def start(self) -> SpanCollector:
        """Opens the file and serves in a background thread until `stop`."""
        family = _family(self.host, self.allow_remote)
        connection = _open_spans_file(self.out)
        try:
            self._server = _Server((self.host, self.port), family, self)
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)
        thread.start()
        return self

    def stop(self) -> CollectorStats:
        """Stops listening, lets requests in progress finish (5 s at most), closes the file."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        deadline, held = time.monotonic() + _STOP_GRACE, 0
        while held < MAX_BODIES_IN_FLIGHT:  # every request being read or written is done
            if not self.bodies.acquire(timeout=max(0.0, deadline - time.monotonic())):
                break
            held += 1
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
        for _ in range(held):
            self.bodies.release()
        return self.stats

    def __enter__(self) -> SpanCollector:
        return self.start()

    def __exit__(self, *error: object) -> None:
        self.stop()

    def refused(self, kind: str) -> None:
        """Counts a refused request."""
        with self._lock:
            self._refused[kind] = self._refused.get(kind, 0) + 1

    def keep(self, spans: list[Span]) -> None:
        """Writes one request's spans in one transaction and counts the request accepted."""
        with self._lock:
            if self._connection is None:
                raise _Refusal(503, "busy", "the collector is stopping")
            try:
                kept = write_spans(self._connection, spans)
            except sqlite3.Error as error:
                self._connection.rollback()
                reason = f"the spans file cannot be written: {error}"
                raise _Refusal(500, "failed", reason) from None
            requests, received, kept_before = self._counts
            self._counts = (requests + 1, received + len(spans), kept_before + kept)
