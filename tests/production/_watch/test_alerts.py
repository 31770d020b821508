"""Alerts as JSON lines, to a webhook on 127.0.0.1 (a failure one line, no crash); exit codes."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from adk_eval import EvalSetupError
from adk_eval.production._watch._alerts import (
    JsonLinesAlerts,
    WebhookAlerts,
    alert_data,
    exit_code,
)
from adk_eval.production._watch._verdict import Alert

ALERT = Alert(
    "helpful",
    0.9,
    0.74,
    (0.05, 0.27),
    conversations=("shop/ann/s9", "shop/bob/s7"),
    parties={"agent": 30, "user": 2},
    looked=212,
    test="mixture SPRT, alpha 0.05",
    at=1.7e9,
)


class Hook(BaseHTTPRequestHandler):
    """Records each POST's body; answers the status the test set (or sleeps first)."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        server = self.server
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server.received.append((self.path, self.headers["Content-Type"], body))  # type: ignore[attr-defined]
        time.sleep(server.delay)  # type: ignore[attr-defined]
        self.send_response(server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def hook() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    server.daemon_threads = True
    server.received, server.status, server.delay = [], 200, 0.0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def url(server: ThreadingHTTPServer, path: str = "/hooks/T0K3N") -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def test_each_alert_is_one_json_object_on_one_line():
    stream = io.StringIO()
    alerts = JsonLinesAlerts(stream)
    alerts(ALERT)
    alerts(Alert("tone", 0.8, 0.5, (0.1, 0.5)))
    first, second = stream.getvalue().splitlines()
    assert json.loads(first) == {
        "kind": "adk_eval.watch.alert",
        "metric": "helpful",
        "baseline": 0.9,
        "current": 0.74,
        "interval": [0.05, 0.27],
        "conversations": ["shop/ann/s9", "shop/bob/s7"],
        "parties": {"agent": 30, "user": 2},
        "looked": 212,
        "test": "mixture SPRT, alpha 0.05",
        "at": 1.7e9,
        "line": ALERT.line(),
    }
    assert json.loads(second)["metric"] == "tone"


def test_the_webhook_receives_the_alert_as_json(hook):
    errors = io.StringIO()
    webhook = WebhookAlerts(url(hook), errors=errors)
    webhook(ALERT)
    ((path, content_type, body),) = hook.received
    assert path == "/hooks/T0K3N"
    assert content_type == "application/json"
    assert json.loads(body) == alert_data(ALERT)
    assert (webhook.sent, webhook.failed, errors.getvalue()) == (1, 0, "")


def test_a_webhook_error_status_is_one_line_and_the_watch_goes_on(hook):
    hook.status = 500
    errors = io.StringIO()
    webhook = WebhookAlerts(url(hook), errors=errors)
    webhook(ALERT)  # no exception
    (line,) = errors.getvalue().splitlines()
    assert line == (
        f"adk-eval watch: the webhook at http://127.0.0.1:{hook.server_address[1]} answered "
        "HTTP 500; the helpful alert was not delivered (the watch goes on)"
    )
    assert "T0K3N" not in line  # a hook's path may be its secret
    assert webhook.failed == 1


def test_a_slow_webhook_times_out_in_one_line(hook):
    hook.delay = 1.0
    errors = io.StringIO()
    started = time.monotonic()
    WebhookAlerts(url(hook), timeout=0.2, errors=errors)(ALERT)
    assert time.monotonic() - started < 0.9
    (line,) = errors.getvalue().splitlines()
    assert "did not answer within 0.2 s" in line


def test_an_unreachable_webhook_is_one_line():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: refused
        errors = io.StringIO()
        WebhookAlerts(f"http://127.0.0.1:{port}/x", timeout=1, errors=errors)(ALERT)
    (line,) = errors.getvalue().splitlines()
    assert "could not be reached (ConnectError" in line


@pytest.mark.parametrize("bad", ["hooks.example.com/x", "ftp://h/x", "http:///x"])
def test_a_webhook_that_is_not_an_http_url_is_refused_in_one_line(bad):
    with pytest.raises(EvalSetupError, match="is not an http") as error:
        WebhookAlerts(bad)
    assert "\n" not in str(error.value)


def test_a_bounded_run_exits_1_when_any_alert_fired():
    assert exit_code([]) == 0
    assert exit_code([ALERT]) == 1
    assert exit_code((ALERT, ALERT)) == 1
