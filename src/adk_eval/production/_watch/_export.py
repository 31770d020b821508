"""Each verdict of a watch as OpenTelemetry data beside the conversation's own spans.

A team already looks at its agent's traces in Phoenix, Langfuse, Jaeger or another
OTLP backend; `OtlpVerdicts` writes every `WatchVerdict` there, as the GenAI
semantic conventions' evaluation result: a span named ``gen_ai.evaluation.result``
carrying ``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label`` and ``gen_ai.evaluation.explanation`` (the
attribute names opentelemetry-semantic-conventions 0.65b0 defines; the convention
itself describes an event of that name, which the span carries too, so a backend
reading either finds it).

Where it goes: the convention parents the result to the operation it evaluates; a
verdict knows its conversation's trace id, not its span ids, so the span is made in
that trace (its trace id is the conversation's, it has no parent): a backend lists
it with the conversation's own spans. A conversation read from spans is in several
traces (one per invocation): the verdict goes in the newest. Every verdict also
carries ``gen_ai.conversation.id`` (the session id), by which a backend groups a
session's traces; a session store keeps no trace id (ADK's sessions carry none),
so that is how a verdict on a stored session finds its conversation. A link would
be shown only on a span of its own trace, which nobody opens; a conversation whose
source carries no trace id gets a trace of its own, named by ``adk_eval.conversation``.

Redacted by construction: a verdict holds names, a metric, a score, a party; no
conversation text reaches a span. Export is the OpenTelemetry SDK's own OTLP/HTTP
exporter (protobuf), in batches on its own thread, on a tracer provider of its own
(never the process's global one): a backend that is down costs the exporter's
retries and one logged line, never the watch.
"""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.util.types import AttributeValue

from ..._errors import EvalSetupError
from ._verdict import WatchVerdict

__all__ = ["EVALUATION_RESULT", "OtlpVerdicts", "traces_url", "verdict_attributes"]

EVALUATION_RESULT = "gen_ai.evaluation.result"
"""The convention's name for an evaluation result (the span's and its event's)."""

_TRACES_PATH = "/v1/traces"


class _TraceIds(RandomIdGenerator):
    """Random ids, except the trace id of the next root span, when one is set."""

    def __init__(self) -> None:
        self.next_trace_id: int | None = None

    def generate_trace_id(self) -> int:
        chosen, self.next_trace_id = self.next_trace_id, None
        return chosen if chosen is not None else super().generate_trace_id()


def _trace_id(value: str | None) -> int | None:
    """A verdict's trace id as an int, or None when it has none (or not 32 hex digits)."""
    if value is None or len(value) != 32:
        return None
    try:
        number = int(value, 16)
    except ValueError:
        return None
    return number or None


def verdict_attributes(verdict: WatchVerdict) -> dict[str, AttributeValue]:
    """The attributes of a verdict's evaluation result: names, a score, a party; no text.

    ``gen_ai.evaluation.score.label`` is ``pass``, ``fail`` or ``not_applicable``;
    ``gen_ai.evaluation.score.value`` is the metric's score when it has one.
    """
    label = "not_applicable" if verdict.passed is None else "pass" if verdict.passed else "fail"
    attributes: dict[str, AttributeValue] = {
        "gen_ai.evaluation.name": verdict.metric,
        "gen_ai.evaluation.score.label": label,
        "adk_eval.conversation": verdict.conversation,
        # the convention's conversation (session) id: a backend groups a session's traces by it
        "gen_ai.conversation.id": verdict.conversation.rsplit("/", 1)[-1],
        "adk_eval.judged": verdict.judged,
    }
    if verdict.score is not None:
        attributes["gen_ai.evaluation.score.value"] = float(verdict.score)
    if verdict.party is not None:
        attributes["adk_eval.party"] = verdict.party
        attributes["gen_ai.evaluation.explanation"] = f"{label}, attributed to {verdict.party}"
    return attributes


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of `endpoint` (a base URL, or one ending in ``/v1/traces``).

    Raises:
        EvalSetupError: `endpoint` is not an http(s) URL with a host.
    """
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EvalSetupError(
            f"--otlp-endpoint {endpoint!r} is not an OTLP/HTTP endpoint; give its URL, "
            "for example http://127.0.0.1:4318 (the receiver's /v1/traces is added)"
        )
    path = parts.path.rstrip("/")
    if not path.endswith(_TRACES_PATH):
        path += _TRACES_PATH
    return parts._replace(path=path).geturl()


class OtlpVerdicts:
    """Writes each verdict to an OTLP/HTTP endpoint as a ``gen_ai.evaluation.result`` span.

    Call it with each `WatchVerdict`; spans leave in batches. `flush` waits until
    every verdict so far was sent (or `timeout` passed); `close` flushes and stops.

    Args:
        endpoint: The receiver's base URL (``http://127.0.0.1:4318``), or its
            ``/v1/traces`` URL.
        service_name: The ``service.name`` of the spans' resource.
        timeout: Seconds one export request may take.
        headers: Extra HTTP headers (a backend's API key, for instance).

    Raises:
        EvalSetupError: `endpoint` is not an http(s) URL.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        service_name: str = "adk-eval watch",
        timeout: float = 10.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.url = traces_url(endpoint)
        self._ids = _TraceIds()
        self._lock = threading.Lock()  # the next trace id is one span's at a time
        exporter = OTLPSpanExporter(endpoint=self.url, timeout=timeout, headers=headers)
        self._provider = TracerProvider(
            resource=Resource.create({"service.name": service_name}), id_generator=self._ids
        )
        self._provider.add_span_processor(BatchSpanProcessor(exporter))
        self._tracer = self._provider.get_tracer("adk_eval.watch")

    def __call__(self, verdict: WatchVerdict) -> None:
        """Records one verdict's span (in its conversation's trace when it has one)."""
        attributes = verdict_attributes(verdict)
        at = int(verdict.at * 1e9) if verdict.at else None
        with self._lock:
            self._ids.next_trace_id = _trace_id(verdict.trace_id)
            span = self._tracer.start_span(
                EVALUATION_RESULT,
                context=trace.set_span_in_context(trace.INVALID_SPAN),  # a root, always
                attributes=attributes,
                start_time=at,
            )
            self._ids.next_trace_id = None
        event = {k: v for k, v in attributes.items() if k.startswith("gen_ai.evaluation.")}
        span.add_event(EVALUATION_RESULT, attributes=event, timestamp=at)
        span.end(end_time=at)

    def flush(self, timeout: float = 30.0) -> bool:
        """Sends every verdict recorded so far; whether it finished within `timeout` seconds."""
        return self._provider.force_flush(int(timeout * 1000))

    def close(self) -> None:
        """Sends what is left and stops the exporter."""
        self._provider.shutdown()
