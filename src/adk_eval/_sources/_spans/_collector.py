"""``adk-eval collect``: an OTLP/HTTP receiver keeping spans in a SQLite file as they arrive.

`SpanCollector` serves OTLP over HTTP (`_receiver`: ``POST /v1/traces``,
protobuf or OTLP/JSON, gzipped or not, as the OpenTelemetry SDK's OTLP HTTP
exporter sends; logs and metrics, which an app sends too when given only
``OTEL_EXPORTER_OTLP_ENDPOINT``, answered and dropped) and writes each request's
spans in one transaction on one SQLite connection (serialized), in WAL mode so
that ``adk-eval score`` reads the file while it grows (`_spans_file`). A refusal
is an HTTP status and a one-line reason, counted in `CollectorStats`.
"""

from __future__ import annotations

import ipaddress
import socket
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..._sandbox._loopback import refuse_remote
from ._receiver import MAX_BODIES_IN_FLIGHT, Budget, Receiver, Refusal
from ._span import Span
from ._spans_file import CollectorError, open_spans_file
from ._store import write_spans

__all__ = ["DEFAULT_MAX_BODY", "CollectorError", "CollectorStats", "SpanCollector"]
# CollectorError is `_spans_file`'s, named here too: a caller of the collector catches it.

DEFAULT_MAX_BODY = 16 * 1024 * 1024
"""The largest request body accepted (compressed, and again once decompressed)."""

_STOP_GRACE = 5.0


@dataclass(frozen=True)
class CollectorStats:
    """What a collector has done so far.

    Attributes:
        requests: Export requests accepted (answered 200).
        spans_received: Spans in those requests.
        spans_kept: Spans written (a span id already in the file is not written again).
        refused: Requests refused, by kind: ``bad_request`` (400), ``not_found``
            (404), ``method_not_allowed`` (405), ``length_required`` (411),
            ``too_large`` (413), ``unsupported_type`` (415), ``wrong_host`` (421:
            another host name on a loopback address), ``busy`` (503), ``failed``
            (500: the file could not be written).
        dropped: Log and metric export requests answered and dropped.
    """

    requests: int = 0
    spans_received: int = 0
    spans_kept: int = 0
    refused: Mapping[str, int] = field(default_factory=dict)
    dropped: int = 0

    def summary(self) -> str:
        """One line: spans kept, requests accepted and dropped, refusals by kind."""
        line = f"{self.spans_kept} span(s) kept, {self.spans_received} received "
        line += f"in {self.requests} request(s)"
        if self.dropped:
            line += f"; {self.dropped} log and metric request(s) dropped"
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.refused.items()))
        return line + (
            f"; {sum(self.refused.values())} refused: {kinds}" if kinds else "; none refused"
        )


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
        self.budget = Budget(MAX_BODIES_IN_FLIGHT * max_body)
        self._dropped = 0
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # the connection's and the counts'
        self._counts = (0, 0, 0)  # requests, spans received, spans kept
        self._refused: dict[str, int] = {}
        self._server: Receiver | None = None

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
            return CollectorStats(*self._counts, refused=dict(self._refused), dropped=self._dropped)

    def start(self) -> SpanCollector:
        """Opens the file and serves in a background thread until `stop`."""
        family = _family(self.host, self.allow_remote)
        connection = open_spans_file(self.out)
        try:
            self._server = Receiver((self.host, self.port), family, self)
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

    def count_dropped(self) -> None:
        """Counts a log or metric export request answered and dropped."""
        with self._lock:
            self._dropped += 1

    def keep(self, spans: list[Span]) -> None:
        """Writes one request's spans in one transaction and counts the request accepted."""
        with self._lock:
            if self._connection is None:
                raise Refusal(503, "busy", "the collector is stopping")
            try:
                kept = write_spans(self._connection, spans)
            except sqlite3.Error as error:
                self._connection.rollback()
                reason = f"the spans file cannot be written: {error}"
                raise Refusal(500, "failed", reason) from None
            requests, received, kept_before = self._counts
            self._counts = (requests + 1, received + len(spans), kept_before + kept)
