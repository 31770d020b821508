"""The span collector's HTTP side: each OTLP/HTTP request kept, dropped or refused.

`Receiver` is a stdlib threading HTTP server serving at most `MAX_CONNECTIONS`
connections at once, each handled by `_Handler`: ``POST /v1/traces`` (an
``ExportTraceServiceRequest``, protobuf or OTLP/JSON, gzipped or not) is decoded
and handed to the `Sink` (the `SpanCollector`, which writes it);
``POST /v1/logs`` and ``/v1/metrics`` are read and dropped; anything else is
refused with a status and one line (`Refusal`), counted by kind.

On a loopback address a request naming another host (``Host``) is refused (421),
so a web page that rebinds its own name to 127.0.0.1 cannot plant conversations.
A body is received a chunk at a time within a `Budget` of bytes shared by every
connection, then decoded and written holding one of the sink's few ``bodies``
places: a slow sender holds its connection and the bytes it sent, never a place a
normal export waits for.
"""

from __future__ import annotations

import contextlib
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from ..._sandbox._loopback import is_loopback as _loopback
from ._otlp import SpanFormatError, spans_from_json, spans_from_proto
from ._span import Span

__all__ = ["MAX_BODIES_IN_FLIGHT", "MAX_CONNECTIONS", "Budget", "Receiver", "Refusal", "Sink"]

MAX_CONNECTIONS = 64  # served at once; one more is answered 503 and closed
MAX_BODIES_IN_FLIGHT = 4  # decoded or written at once; one waiting over 30 s gets 503

_TRACES_PATH = "/v1/traces"
_DROPPED_PATHS = ("/v1/logs", "/v1/metrics")
_CHUNK = 65536  # a body is received this much at a time, each chunk counted in the budget
_SOCKET_TIMEOUT = 30.0
_MAX_ECHO = 200
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Budget:
    """Bytes of request bodies being received, at most `size` at once."""

    def __init__(self, size: int) -> None:
        self.size, self.held = size, 0
        self._lock = threading.Lock()

    def take(self, count: int) -> bool:
        """Holds `count` more bytes if the budget has them (else holds nothing)."""
        with self._lock:
            if self.held + count > self.size:
                return False
            self.held += count
            return True

    def give(self, count: int) -> None:
        """Gives back `count` bytes."""
        with self._lock:
            self.held -= count


class Sink(Protocol):
    """What the receiver hands requests to (the `SpanCollector`)."""

    host: str
    max_body: int
    bodies: threading.BoundedSemaphore
    budget: Budget

    def refused(self, kind: str) -> None:
        """Counts a refused request."""

    def count_dropped(self) -> None:
        """Counts a dropped log or metric request."""

    def keep(self, spans: list[Span]) -> None:
        """Writes one request's spans (raises `Refusal` if it cannot)."""


class Refusal(Exception):
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
    raise Refusal(400, "bad_request", " ".join(reason.split())[:300])


class _Handler(BaseHTTPRequestHandler):
    """One connection: OTLP export requests on ``POST /v1/traces``, refusals otherwise."""

    protocol_version = "HTTP/1.1"
    timeout = _SOCKET_TIMEOUT
    server: Receiver
    _held = 0

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the collector reports counts, not each request."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # every method but POST
            return self._not_post
        raise AttributeError(name)

    def _not_post(self) -> None:
        route = self.path.split("?")[0]
        try:
            self._check_host()
        except Refusal as refusal:
            return self._refuse(refusal)
        if route != _TRACES_PATH and route not in _DROPPED_PATHS:
            self._refuse(Refusal(404, "not_found", f"no such path; POST to {_TRACES_PATH}"))
        else:
            self._refuse(Refusal(405, "method_not_allowed", f"{route} takes POST only"))

    def do_POST(self) -> None:
        """An export request: its spans kept (logs and metrics dropped), or a refusal."""
        collector = self.server.collector
        route = self.path.split("?")[0]
        if route != _TRACES_PATH and route not in _DROPPED_PATHS:
            return self._not_post()
        self._held = 0  # bytes of the budget this request holds
        try:
            self._check_host()
            is_json = self._check_types()
            length = self._length(collector.max_body)
            if route != _TRACES_PATH:
                self._drain(length)
                collector.count_dropped()
            else:
                body = self._receive(length)
                if not collector.bodies.acquire(timeout=_SOCKET_TIMEOUT):
                    raise Refusal(503, "busy", "too many requests at once; retry later")
                try:  # decoded and written holding one of the places
                    collector.keep(_decode(self._gunzip(body, collector.max_body), is_json))
                finally:
                    collector.bodies.release()
        except Refusal as refusal:
            return self._refuse(refusal)
        finally:
            collector.budget.give(self._held)
        answer = b"{}" if is_json else b""  # an empty Export*ServiceResponse
        self._reply(200, answer, "application/json" if is_json else "application/x-protobuf")

    def _check_host(self) -> None:
        """Refuses a request naming another host than this loopback server (DNS rebinding)."""
        bound = self.server.collector.host
        header = self.headers.get("Host")
        if header is None or not _host_allowed(header, bound):
            shown = "no Host" if header is None else repr(header[:_MAX_ECHO])
            reason = f"this collector answers requests for {bound} only, not {shown}"
            raise Refusal(421, "wrong_host", reason)

    def _check_types(self) -> bool:
        """Whether the body is JSON (else protobuf); refuses other types and encodings."""
        media = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media not in ("application/json", "application/x-protobuf", "application/protobuf"):
            reason = f"Content-Type {media or '(none)'}: send protobuf or JSON"
            raise Refusal(415, "unsupported_type", reason)
        if self._encoding() not in ("identity", "gzip"):
            shown = f"Content-Encoding {self._encoding()}"
            raise Refusal(415, "unsupported_type", f"{shown}: send gzip or none")
        return media == "application/json"

    def _encoding(self) -> str:
        return (self.headers.get("Content-Encoding") or "identity").strip().lower()

    def _length(self, limit: int) -> int:
        length = (self.headers.get("Content-Length") or "").strip()
        if not length:
            raise Refusal(411, "length_required", "a Content-Length is required")
        if not length.isdigit():
            raise Refusal(400, "bad_request", "the Content-Length is not a number")
        if int(length) > limit:
            raise Refusal(413, "too_large", f"the body is over {limit} bytes")
        return int(length)

    def _receive(self, length: int) -> bytes:
        """The request body, received a chunk at a time within the collector's budget."""
        budget, body = self.server.collector.budget, bytearray()
        while len(body) < length:
            size = min(_CHUNK, length - len(body))
            if not budget.take(size):
                raise Refusal(503, "busy", "too many bodies being received at once; retry later")
            self._held += size
            chunk = self._read(size)
            body += chunk
            if len(chunk) < size:
                raise Refusal(400, "bad_request", "the body is shorter than its Content-Length")
        return bytes(body)

    def _read(self, size: int) -> bytes:
        """Up to `size` bytes of the body; a broken or silent connection is a refusal."""
        try:
            return self.rfile.read(size)
        except TimeoutError:
            reason = f"the body stopped arriving for {_SOCKET_TIMEOUT:.0f} s"
            raise Refusal(400, "bad_request", reason) from None
        except OSError as error:
            raise Refusal(400, "bad_request", f"the connection broke: {error}") from None

    def _drain(self, length: int) -> None:
        """Reads and forgets a body (a log or metric export)."""
        while length > 0:
            chunk = self._read(min(_CHUNK, length))
            if not chunk:
                raise Refusal(400, "bad_request", "the body is shorter than its Content-Length")
            length -= len(chunk)

    def _gunzip(self, body: bytes, limit: int) -> bytes:
        """The body, gunzipped if it was sent gzipped (at most `limit` bytes)."""
        if self._encoding() != "gzip":
            return body
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(body, limit + 1)
        except zlib.error as error:
            raise Refusal(400, "bad_request", f"the body is not gzip ({error})") from None
        if len(data) > limit:
            raise Refusal(413, "too_large", f"the decompressed body is over {limit} bytes")
        if not inflater.eof:
            raise Refusal(400, "bad_request", "the gzip body is truncated")
        return data

    def _refuse(self, refusal: Refusal) -> None:
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


class Receiver(ThreadingHTTPServer):
    """A threading HTTP server serving at most `MAX_CONNECTIONS` connections at once."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], family: int, collector: Sink) -> None:
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


def _host_allowed(header: str, bound: str) -> bool:
    """Whether a ``Host`` header may reach a server bound to `bound`.

    The rule the studio and viewer follow too: on a loopback address only a
    loopback name (or the address itself); beyond loopback, any name.
    """
    if not _loopback(bound):
        return True
    name = header.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    return name == bound.lower() or _loopback(name)
