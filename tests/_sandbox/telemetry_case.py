"""Run as a script: an agent module's own telemetry, and what one eval run sends it.

The "agent's module" part sets what a production agent would: an OTLP span and
log exporter to a collector (here one on 127.0.0.1), message content captured,
and a litellm `CustomLogger`. An in-memory span exporter stands for the eval's
own sink. Then one case runs with ``telemetry=<argv[1]>`` against a fake
provider, and one span is made after it, outside any run. Prints what each sink
got as JSON. A process of its own: OpenTelemetry's providers are set once per
process.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import litellm
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from litellm.integrations.custom_logger import CustomLogger
from opentelemetry import _logs, trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from adk_eval import EvalCase, ToolMock, run_eval
from adk_eval._sandbox._telemetry import run_config
from adk_eval._suites._run import runs_for_real
from adk_eval.fake_provider import FakeProviderServer, text_reply, tool_reply


class Collector:
    """An OTLP/HTTP collector on 127.0.0.1 that keeps the spans and log records it decodes."""

    def __init__(self) -> None:
        self.spans: list[dict] = []
        self.logs: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/traces":
                    for spans in ExportTraceServiceRequest.FromString(body).resource_spans:
                        for scope in spans.scope_spans:
                            outer.spans += [_record(s.name, s.attributes) for s in scope.spans]
                elif self.path == "/v1/logs":
                    for logs in ExportLogsServiceRequest.FromString(body).resource_logs:
                        for scope in logs.scope_logs:
                            outer.logs += [
                                _record(r.event_name, r.attributes) for r in scope.log_records
                            ]
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _record(name: str, attributes) -> dict:
    values = {a.key: a.value.string_value for a in attributes}
    return {"name": name, "case": values.get("adk_eval.case"), "text": json.dumps(values)}


class Listener(CustomLogger):
    """The agent module's litellm logger."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        self.calls.append(str(kwargs.get("messages")))

    def log_success_event(self, kwargs, response_obj, start_time, end_time):
        self.calls.append(str(kwargs.get("messages")))


def lookup(order: str) -> dict:
    """Looks an order up."""
    raise AssertionError("mocked")


async def main(mode: str) -> None:
    collector = Collector()
    memory = InMemorySpanExporter()
    spans = TracerProvider()
    spans.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(f"{collector.endpoint}/v1/traces"))
    )
    spans.add_span_processor(SimpleSpanProcessor(memory))
    trace.set_tracer_provider(spans)
    logs = LoggerProvider()
    logs.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(f"{collector.endpoint}/v1/logs"))
    )
    _logs.set_logger_provider(logs)
    listener = Listener()
    litellm.callbacks = [listener]

    script = [tool_reply("lookup", {"order": "A1"}), text_reply("Diagnosis: SECRET-SHIPPED.")]
    with FakeProviderServer(script) as server:
        model = LiteLlm(
            model="openai/fake-model",
            api_base=server.openai_base,
            api_key="test-key",
            _skip_mcp_handler=True,
        )
        case = EvalCase(
            name="order",
            agent=LlmAgent(name="shop", model=model, tools=[lookup]),
            tool_mocks={"lookup": ToolMock.returning({"status": "SECRET-SHIPPED"})},
            first_message="Where is A1?",
            telemetry=mode,
        )
        shown = runs_for_real([case]).telemetry
        result = await run_eval(case)
    await asyncio.sleep(0.2)  # litellm's deferred logging, if any, has run
    with trace.get_tracer("afterwards").start_as_current_span("outside-any-run"):
        pass
    spans.force_flush()
    logs.force_flush()
    print(
        json.dumps(
            {
                "status": result.status,
                "runs_for_real": list(shown),
                "collector": collector.endpoint,
                "adk_run_config": repr(run_config()),
                "explain": result.explain(),
                "collector_spans": collector.spans,
                "collector_logs": collector.logs,
                "memory_spans": [
                    {"name": s.name, "case": (s.attributes or {}).get("adk_eval.case")}
                    for s in memory.get_finished_spans()
                ],
                "litellm_calls": listener.calls,
                "litellm_callbacks_after": [type(c).__name__ for c in litellm.callbacks],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
