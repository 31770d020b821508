"""Spans of real ADK runs, captured through the real OpenTelemetry SDK.

A process has one global tracer provider, set once; ADK's tracers are proxies
that find it. `capture_spans` installs an SDK `TracerProvider` and hands each
test the spans finished while it ran, through a processor that forwards to
whichever exporters the running test added (`SpanCapture.add`): an OTLP HTTP
exporter to ``adk-eval collect``, ADK's `SqliteSpanExporter`, ...

After the test the process is given back with no provider set, as the other
tests expect (they check that nobody listens to telemetry). OpenTelemetry has no
public way to unset a provider: its two module globals are reset. ADK's proxy
tracers keep the provider they found; it forwards to no exporter once the test
is over.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once


class _Forward(SpanExporter):
    """Sends each finished span to the current test's exporters."""

    def __init__(self) -> None:
        self.exporters: list[SpanExporter] = []

    def export(self, spans):  # type: ignore[no-untyped-def]
        for exporter in list(self.exporters):
            exporter.export(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


_FORWARD = _Forward()


def _install() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_FORWARD))
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:
        pytest.skip("another tracer provider was installed in this process first")


def _uninstall() -> None:
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]


class SpanCapture:
    """The spans finished during one test (`spans()`), and its extra exporters."""

    def __init__(self) -> None:
        self.memory = InMemorySpanExporter()
        self.added: list[SpanExporter] = [self.memory]

    def add(self, exporter: SpanExporter) -> None:
        """Also send this test's spans to `exporter` (flushed at the test's end)."""
        self.added.append(exporter)
        _FORWARD.exporters.append(exporter)

    def spans(self) -> list[ReadableSpan]:
        return list(self.memory.get_finished_spans())


@pytest.fixture
def capture_spans() -> Iterator[SpanCapture]:
    _install()
    capture = SpanCapture()
    _FORWARD.exporters.append(capture.memory)
    try:
        yield capture
    finally:
        _uninstall()
        for exporter in capture.added:
            if exporter in _FORWARD.exporters:
                _FORWARD.exporters.remove(exporter)
            exporter.shutdown()
