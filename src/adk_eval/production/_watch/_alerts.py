"""Where a watch's alerts go: JSON lines, a webhook, and the exit code of a bounded run.

A drop is news only if someone hears it. `JsonLinesAlerts` writes each `Alert` as
one JSON object on one line (stdout by default: a log shipper or ``jq`` reads it);
`WebhookAlerts` POSTs the same object to a URL (Slack-like relays, PagerDuty
bridges, a team's own endpoint), with a timeout, and a failure is one line on
stderr, never the end of the watch: a webhook that is down must not stop the
scoring. `exit_code` is the rule of a bounded run (``--until``) in a CI-like
check: 1 if any alert fired, else 0.

An alert carries metric names, rates, conversation names and counts by party;
never what was said.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO
from urllib.parse import urlsplit

import httpx

from ..._errors import EvalSetupError
from ..._strict_json import dumps
from ._verdict import Alert

__all__ = ["JsonLinesAlerts", "WebhookAlerts", "alert_data", "exit_code"]


def alert_data(alert: Alert) -> dict[str, Any]:
    """An alert as a JSON object: its fields, and its one line under ``"line"``."""
    low, high = alert.interval
    return {
        "kind": "adk_eval.watch.alert",
        "metric": alert.metric,
        "baseline": alert.baseline,
        "current": alert.current,
        "interval": [low, high],
        "conversations": list(alert.conversations),
        "parties": dict(alert.parties),
        "looked": alert.looked,
        "test": alert.test,
        "at": alert.at,
        "line": alert.line(),
    }


def exit_code(alerts: Sequence[Alert]) -> int:
    """A bounded run's exit code: 1 if any alert fired, else 0."""
    return 1 if alerts else 0


class JsonLinesAlerts:
    """Writes each alert as one JSON object on one line of `stream` (stdout by default)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def __call__(self, alert: Alert) -> None:
        """Writes and flushes one line."""
        stream = self.stream if self.stream is not None else sys.stdout
        stream.write(dumps(alert_data(alert), sort_keys=True) + "\n")
        stream.flush()


class WebhookAlerts:
    """POSTs each alert as JSON to `url`; a failure is one line on stderr, never an exception.

    Args:
        url: An http(s) URL.
        timeout: Seconds one POST may take (connecting, sending, answering).
        headers: Extra HTTP headers (a token, for instance).
        errors: Where a failure's line goes (stderr by default).

    Raises:
        EvalSetupError: `url` is not an http(s) URL.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 5.0,
        headers: dict[str, str] | None = None,
        errors: TextIO | None = None,
    ) -> None:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EvalSetupError(
                f"--webhook {url!r} is not an http(s) URL; give the URL alerts are POSTed to, "
                "for example https://hooks.example.com/adk-eval"
            )
        self.url, self.timeout, self.headers, self.errors = url.strip(), timeout, headers, errors
        port = f":{parts.port}" if parts.port else ""
        self.shown = f"{parts.scheme}://{parts.hostname}{port}"  # a hook's path may be its token
        self.sent = 0
        self.failed = 0

    def __call__(self, alert: Alert) -> None:
        """POSTs one alert; a refusal, an error status or a timeout is counted and told."""
        body = dumps(alert_data(alert), sort_keys=True).encode("utf-8")
        headers = {"Content-Type": "application/json", **(self.headers or {})}
        try:
            response = httpx.post(self.url, content=body, headers=headers, timeout=self.timeout)
            problem = None if response.is_success else f"answered HTTP {response.status_code}"
        except httpx.TimeoutException:
            problem = f"did not answer within {self.timeout:g} s"
        except httpx.HTTPError as error:
            problem = f"could not be reached ({type(error).__name__}: {error})"
        if problem is None:
            self.sent += 1
            return
        self.failed += 1
        errors = self.errors if self.errors is not None else sys.stderr
        line = f"adk-eval watch: the webhook at {self.shown} {problem}; the {alert.metric} alert "
        errors.write(" ".join((line + "was not delivered (the watch goes on)").split()) + "\n")
        errors.flush()
