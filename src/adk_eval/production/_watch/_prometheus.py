"""A watch's counts on a metrics endpoint in Prometheus' text format, for the team's dashboards.

`PrometheusEndpoint` counts what the watch loop hands it (each `WatchVerdict`,
each `Alert`, conversations scored and skipped, judge calls and spend) and serves
them at ``GET /metrics`` in the text exposition format (version 0.0.4) that
Prometheus, Grafana Agent, the OpenTelemetry Collector's Prometheus receiver and
others scrape. Counts only: metric names, outcomes, parties and skip reasons are
the labels; no conversation name or text is (a label per conversation would also
grow without bound).

It is an ``http.server`` on a thread, like the house's other small servers, on
loopback unless `allow_remote` (the one loopback rule, `refuse_remote`).
"""

from __future__ import annotations

import ipaddress
import math
import socket
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from ..._sandbox._loopback import refuse_remote
from ._verdict import Alert, WatchVerdict

__all__ = ["CONTENT_TYPE", "PrometheusEndpoint"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The text exposition format's content type."""

_PREFIX = "adk_eval_watch_"


def _escape(value: str) -> str:
    """A label value as the format writes it (backslash, double quote and newline escaped)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    """A sample value as the format writes it (``+Inf``, ``NaN``, integers without ``.0``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _family(
    name: str, kind: str, help_text: str, samples: Iterable[tuple[Mapping[str, str], float]]
) -> list[str]:
    """One metric family's lines: HELP, TYPE, then its samples (labels sorted)."""
    lines = [f"# HELP {_PREFIX}{name} {help_text}", f"# TYPE {_PREFIX}{name} {kind}"]
    for labels, value in samples:
        shown = ",".join(f'{key}="{_escape(labels[key])}"' for key in sorted(labels))
        lines.append(
            f"{_PREFIX}{name}{{{shown}}} {_number(value)}"
            if shown
            else f"{_PREFIX}{name} {_number(value)}"
        )
    return lines


_FAMILIES = (
    ("verdicts_total", "counter", ("metric", "outcome"),
     "Verdicts by metric and outcome (pass, fail, not_applicable)."),
    ("pass_rate", "gauge", ("metric",), "Passed over passed and failed verdicts, by metric."),
    ("failures_total", "counter", ("metric", "party"),
     "Failed verdicts by metric and the party they are attributed to."),
    ("judged_verdicts_total", "counter", ("metric",), "Verdicts a model judged, by metric."),
    ("conversations_scored_total", "counter", (), "Finished conversations scored."),
    ("conversations_skipped_total", "counter", ("reason",), "Conversations not scored, by reason."),
    ("judge_calls_total", "counter", (), "Judge model calls."),
    ("judge_tokens_total", "counter", (), "Judge model tokens."),
    ("judge_cost_usd_total", "counter", (),
     "Judge spend in US dollars, as the model-call gate prices it."),
    ("alerts_total", "counter", ("metric",), "Drop alerts fired, by metric."),
)  # fmt: skip
"""Each family: its name (after the prefix), type, label names and help."""


class _Counts:
    """The counters behind the endpoint, by family and label values; one lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: dict[str, dict[tuple[str, ...], float]] = {
            name: {} if labels else {(): 0} for name, _, labels, _ in _FAMILIES
        }

    def add(self, family: str, labels: tuple[str, ...] = (), amount: float = 1) -> None:
        """Adds to one sample; the caller holds `lock`."""
        samples = self.values[family]
        samples[labels] = samples.get(labels, 0) + amount

    def lines(self) -> list[str]:
        """Every family's lines, as one consistent snapshot."""
        with self.lock:
            verdicts = self.values["verdicts_total"]
            rates = self.values["pass_rate"]
            for metric, _ in verdicts:
                passed = verdicts.get((metric, "pass"), 0)
                looked = passed + verdicts.get((metric, "fail"), 0)
                if looked:
                    rates[(metric,)] = passed / looked
            lines: list[str] = []
            for name, kind, labels, help_text in _FAMILIES:
                samples = sorted(self.values[name].items())
                lines += _family(
                    name,
                    kind,
                    help_text,
                    ((dict(zip(labels, k, strict=True)), v) for k, v in samples),
                )
            return lines


class _Handler(BaseHTTPRequestHandler):
    """``GET /metrics``: the exposition; anything else: 404 or 405, one line."""

    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a scrape every few seconds is not news."""

    def _answer(
        self, status: int, body: str, content_type: str = "text/plain; charset=utf-8"
    ) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_GET(self) -> None:
        """The counts, or a 404 naming the one path."""
        if self.path.split("?")[0] != "/metrics":
            return self._answer(404, "no such path; scrape /metrics\n")
        self._answer(200, "\n".join(self.server.counts.lines()) + "\n", CONTENT_TYPE)

    do_HEAD = do_GET

    def do_POST(self) -> None:
        """Refused: the endpoint is read-only."""
        self._answer(405, "/metrics takes GET only\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], family: int, counts: _Counts) -> None:
        self.address_family = family
        self.counts = counts
        super().__init__(address, _Handler)


class _Totals(Protocol):
    """A watch's running totals, as `WatchSummary` keeps them."""

    scored: int
    skipped_sample: int
    skipped_budget: int
    unreadable: int
    judge_calls: int
    judge_tokens: int
    judge_cost: float


class PrometheusEndpoint:
    """A watch's counts served at ``http://HOST:PORT/metrics``; a context manager.

    Call it with each `WatchVerdict`; `alert` with each `Alert`; `scored`,
    `skipped` and `judge_spend` as the loop scores, skips and judges.

    Args:
        host: The interface (a loopback address unless `allow_remote`).
        port: The port (0 picks a free one; `url` has the real one).
        allow_remote: Allows a non-loopback `host`.

    `start` raises `EvalSetupError` (a refused `host`) or `OSError` (cannot bind).
    """

    def __init__(
        self, host: str = "127.0.0.1", port: int = 9464, *, allow_remote: bool = False
    ) -> None:
        self.host, self.port, self.allow_remote = host.strip("[]"), port, allow_remote
        self._counts = _Counts()
        self._server: _Server | None = None

    def __call__(self, verdict: WatchVerdict) -> None:
        """Counts one verdict (its outcome, its party when it failed, whether it was judged)."""
        passed = verdict.passed
        outcome = "not_applicable" if passed is None else "pass" if passed else "fail"
        with self._counts.lock:
            self._counts.add("verdicts_total", (verdict.metric, outcome))
            if passed is False:
                self._counts.add("failures_total", (verdict.metric, verdict.party or "unknown"))
            if verdict.judged:
                self._counts.add("judged_verdicts_total", (verdict.metric,))

    def alert(self, alert: Alert) -> None:
        """Counts one alert fired."""
        with self._counts.lock:
            self._counts.add("alerts_total", (alert.metric,))

    def scored(self, conversations: int = 1) -> None:
        """Counts finished conversations scored."""
        with self._counts.lock:
            self._counts.add("conversations_scored_total", (), conversations)

    def skipped(self, reason: str, conversations: int = 1) -> None:
        """Counts conversations not scored, by reason (``sampled_out``, ``budget``...)."""
        with self._counts.lock:
            self._counts.add("conversations_skipped_total", (reason,), conversations)

    def judge_spend(self, calls: int = 0, tokens: int = 0, cost: float = 0.0) -> None:
        """Counts judge model calls, their tokens and their cost (US dollars)."""
        with self._counts.lock:
            self._counts.add("judge_calls_total", (), calls)
            self._counts.add("judge_tokens_total", (), tokens)
            self._counts.add("judge_cost_usd_total", (), cost)

    def follow(self, summary: _Totals) -> None:
        """Sets the conversation and judge counts to a watch's running totals.

        For a loop that keeps them itself (`WatchSummary`: conversations scored,
        judges left out of the sample or over budget, unreadable sessions, judge
        calls, tokens and dollars), instead of `scored`, `skipped` and `judge_spend`:
        call it as often as the totals are worth a look (a scrape reads the last
        values given).
        """
        with self._counts.lock:
            values = self._counts.values
            values["conversations_scored_total"][()] = summary.scored
            skipped = values["conversations_skipped_total"]
            for reason, count in (
                ("sampled_out", summary.skipped_sample),
                ("budget", summary.skipped_budget),
                ("unreadable", summary.unreadable),
            ):
                skipped[(reason,)] = count
            values["judge_calls_total"][()] = summary.judge_calls
            values["judge_tokens_total"][()] = summary.judge_tokens
            values["judge_cost_usd_total"][()] = summary.judge_cost

    def text(self) -> str:
        """The exposition a scrape gets now."""
        return "\n".join(self._counts.lines()) + "\n"

    @property
    def url(self) -> str:
        """The metrics URL (``http://127.0.0.1:PORT/metrics``)."""
        assert self._server is not None, "the endpoint is not running"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._server.server_address[1]}/metrics"

    def start(self) -> PrometheusEndpoint:
        """Serves in a background thread until `stop`."""
        refuse_remote(self.host, self.allow_remote)  # counts name metrics and parties
        try:
            ipv6 = ipaddress.ip_address(self.host).version == 6
        except ValueError:
            ipv6 = False
        family = socket.AF_INET6 if ipv6 else socket.AF_INET
        self._server = _Server((self.host, self.port), family, self._counts)
        threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Stops serving."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> PrometheusEndpoint:
        return self.start()

    def __exit__(self, *error: object) -> None:
        self.stop()
