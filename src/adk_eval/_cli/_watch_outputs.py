"""Where ``adk-eval watch`` sends what it finds: the drop monitor, OTLP, Prometheus, alerts.

The watch loop hands each verdict to consumers and each alert to one callback;
this module turns the command's options into those consumers and owns their
lives, so the command's own module stays about reading and scoring:

* a `DropMonitor`, always on (``--alpha``, ``--baseline`` or ``--learn``): the
  only source of alerts;
* ``--otlp-endpoint URL``: each verdict as a span (`OtlpVerdicts`);
* ``--prometheus HOST:PORT`` (loopback unless ``--allow-remote``): the counts at
  ``/metrics`` (`PrometheusEndpoint`), kept in step with the watch's summary;
* ``--webhook URL``: each alert POSTed as JSON (`WebhookAlerts`).

One rule for alerts on stdout: one line each (``ALERT`` and `Alert.line`), or with
``--json-alerts`` one JSON object each, and then stdout holds nothing else (the
banner and summaries go to stderr) so ``jq`` or a log shipper reads it whole.
Whatever was opened is closed at the end of the run, however it ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click

from ._common import fail, grouped, host_and_port

__all__ = ["Outputs", "output_options"]


@dataclass
class Outputs:
    """The watch's output options, and the consumers opened from them.

    Attributes:
        alpha: The drop test's false-alarm level (over 1,000 conversations per metric).
        baseline: Every metric's expected pass rate, known exactly; None: learned.
        learn: Conversations each metric's baseline is learned from.
        otlp_endpoint: The OTLP/HTTP receiver verdicts are sent to.
        prometheus: ``HOST:PORT`` of the metrics endpoint.
        allow_remote: Allows a non-loopback Prometheus host.
        webhook: The URL alerts are POSTed to.
        json_alerts: Alerts as JSON lines, alone on stdout.
    """

    alpha: float = 0.05
    baseline: float | None = None
    learn: int = 200
    otlp_endpoint: str | None = None
    prometheus: str | None = None
    allow_remote: bool = False
    webhook: str | None = None
    json_alerts: bool = False
    opened: list[Any] = field(default_factory=list)

    def open(self, out: Any) -> tuple[list[Any], Any]:
        """The verdict consumers and the alert callback; a wrong option is one line.

        Args:
            out: The console progress lines and (without ``--json-alerts``) alerts go to.
        """
        from .._errors import EvalSetupError
        from ..production._watch._alerts import JsonLinesAlerts, WebhookAlerts
        from ..production._watch._drop import DropMonitor
        from ..production._watch._export import OtlpVerdicts

        consumers: list[Any] = [DropMonitor(self.baseline, learn=self.learn, alpha=self.alpha)]
        sinks: list[Any] = [JsonLinesAlerts() if self.json_alerts else _Lines(out)]
        try:
            if self.webhook is not None:
                sinks.append(WebhookAlerts(self.webhook))
            if self.otlp_endpoint is not None:
                consumers.append(self._keep(OtlpVerdicts(self.otlp_endpoint)))
        except EvalSetupError as error:
            self.close()
            fail(str(error))
        if self.prometheus is not None:
            endpoint = self._serve()
            consumers.append(endpoint)
            sinks.append(endpoint.alert)
            out.print(f"Prometheus metrics at {endpoint.url}", markup=False)

        def on_alert(alert: Any) -> None:
            for sink in sinks:
                sink(alert)

        return consumers, on_alert

    def _serve(self) -> Any:
        """The Prometheus endpoint, started; a refused or busy address is one line."""
        from .._errors import EvalSetupError
        from ..production._watch._prometheus import PrometheusEndpoint

        assert self.prometheus is not None
        host, port = host_and_port(self.prometheus, "--prometheus", "127.0.0.1:9464")
        endpoint = PrometheusEndpoint(host, port, allow_remote=self.allow_remote)
        try:
            return self._keep(endpoint.start())
        except EvalSetupError as error:
            self.close()
            fail(f"--prometheus: {error}")
        except OSError as error:
            self.close()
            fail(
                f"--prometheus {self.prometheus}: cannot listen there ({error.strerror or error}); "
                "give a free port, or port 0 for any free one"
            )

    def _keep(self, opened: Any) -> Any:
        self.opened.append(opened)
        return opened

    def follow(self, summary: Any) -> None:
        """Brings the Prometheus counts of conversations and judge calls up to `summary`."""
        for opened in self.opened:
            if hasattr(opened, "follow"):
                opened.follow(summary)

    def close(self) -> None:
        """Sends what is left (OTLP) and stops serving (Prometheus); each once."""
        while self.opened:
            opened = self.opened.pop()
            if hasattr(opened, "close"):
                opened.close()
            else:
                opened.stop()


class _Lines:
    """Alerts as one ``ALERT`` line each on the command's console."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def __call__(self, alert: Any) -> None:
        self.out.print(f"ALERT {alert.line()}", markup=False, highlight=False)


output_options = grouped(
    "outputs",
    Outputs,
    click.option(
        "--alpha",
        type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
        default=0.05,
        show_default=True,
        help="The drop test's false-alarm level, per metric over 1,000 conversations.",
    ),
    click.option(
        "--baseline",
        type=click.FloatRange(0.0, 1.0),
        metavar="RATE",
        help="Every metric's expected pass rate, known exactly (default: learned).",
    ),
    click.option(
        "--learn",
        type=click.IntRange(min=1),
        default=200,
        show_default=True,
        metavar="N",
        help="Without --baseline: each metric's baseline is its first N conversations.",
    ),
    click.option("--otlp-endpoint", metavar="URL", help="Send each verdict there as a span."),
    click.option(
        "--prometheus", metavar="HOST:PORT", help="Serve the counts at HOST:PORT/metrics."
    ),
    click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --prometheus host."),
    click.option("--webhook", metavar="URL", help="POST each alert there as JSON."),
    click.option(
        "--json-alerts",
        is_flag=True,
        help="Alerts as JSON lines, alone on stdout (the other lines go to stderr).",
    ),
)
"""The watch's output options, handed to the command as one `Outputs`."""
