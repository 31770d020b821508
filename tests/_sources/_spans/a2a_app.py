"""The remote side of the A2A tests: `far`, an ADK agent served with ``to_a2a()``.

Also what a user adds to each service so that trace context crosses the hop:
`inject_trace_context` (the caller's httpx request hook) and `TraceContext`
(ASGI middleware of the served app), both with OpenTelemetry's own W3C
propagator. Run as a script (``python -m tests._sources._spans.a2a_app PORT
ENDPOINT``), it serves `far` on 127.0.0.1:PORT as a service of its own: its own
tracer provider (``service.name`` ``orders``) sends every span, as it ends, to
the OTLP HTTP ENDPOINT.
"""

from __future__ import annotations

import sys
import warnings

import httpx
from google.adk.agents import LlmAgent
from opentelemetry import context, propagate

from adk_eval.testing import ScriptedLlm, tool_call


def lookup(order: str) -> dict:
    """Looks an order up."""
    return {"status": "shipped", "order": order}


def far_agent() -> LlmAgent:
    """The remote service's agent: looks the order up, then answers."""
    model = ScriptedLlm([tool_call("lookup", {"order": "B7"}), "Shipped: B7 left today."] * 5)
    return LlmAgent(name="far", description="Tracks orders.", model=model, tools=[lookup])


class TraceContext:
    """ASGI middleware: the request's W3C trace context made the current one while it runs."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        self.app = app

    async def __call__(self, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]
        }
        token = context.attach(propagate.extract(headers))
        try:
            await self.app(scope, receive, send)
        finally:
            context.detach(token)


async def inject_trace_context(request: httpx.Request) -> None:
    """httpx request hook: the current span's W3C trace context in the request's headers."""
    propagate.inject(request.headers)


def served(port: int, carry: bool):  # type: ignore[no-untyped-def]
    """`far` as an A2A Starlette app for 127.0.0.1:`port`, extracting trace context if `carry`."""
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        app = to_a2a(far_agent(), host="127.0.0.1", port=port)
    if carry:
        app.add_middleware(TraceContext)
    return app


def main(port: int, endpoint: str) -> None:
    """Serves `far` as its own service, its spans sent to `endpoint` as they end."""
    import uvicorn
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "orders"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    uvicorn.run(served(port, carry=True), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
