"""The agent module's own telemetry gets nothing of a run unless the case keeps it.

Each test runs `telemetry_case.py` in a process of its own (OpenTelemetry's
providers are set once per process): an OTLP exporter of spans and logs to a
collector on 127.0.0.1 with message content captured, an in-memory span
exporter (the eval's own sink) and a litellm `CustomLogger`, then one case on
ADK's real `LiteLlm` against a fake provider, then a span outside any run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("telemetry_case.py")
RUN_SPANS = {
    "invoke_workflow shop",
    "invoke_agent shop",
    "generate_content openai/fake-model",
    "execute_tool lookup",
}


def run(mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_off_sends_the_user_exporters_and_litellm_logger_nothing_of_the_run():
    seen = run("off")

    assert seen["status"] == "passed", seen["explain"]
    assert [span["name"] for span in seen["collector_spans"]] == ["outside-any-run"]
    assert seen["collector_logs"] == []
    assert seen["litellm_calls"] == []
    assert seen["litellm_callbacks_after"] == ["Listener"]  # put back after the run
    in_memory = {span["name"] for span in seen["memory_spans"] if span["case"] == "order"}
    assert in_memory == RUN_SPANS  # the eval's own sink sees the run, tagged
    collector = seen["collector"]
    assert seen["runs_for_real"] == [
        f"spans BatchSpanProcessor(OTLPSpanExporter to {collector}/v1/traces): "
        "gets nothing of the runs",
        f"logs BatchLogRecordProcessor(OTLPLogExporter to {collector}/v1/logs): "
        "gets nothing of the runs",
        "spans SimpleSpanProcessor(InMemorySpanExporter): the eval's own, gets the runs' telemetry",
        "litellm callback __main__.Listener: gets nothing of the runs",
    ]


@pytest.mark.slow
def test_keep_sends_them_the_run_tagged_with_run_and_case():
    seen = run("keep")

    assert seen["status"] == "passed", seen["explain"]
    tagged = {span["name"] for span in seen["collector_spans"] if span["case"] == "order"}
    assert tagged == RUN_SPANS
    assert any("SECRET-SHIPPED" in span["text"] for span in seen["collector_spans"])
    assert seen["collector_logs"]
    assert all(log["case"] == "order" for log in seen["collector_logs"])
    assert len(seen["litellm_calls"]) == 2  # both model calls
    assert "outside-any-run" in [span["name"] for span in seen["collector_spans"]]
    assert all("gets the runs' telemetry" in line for line in seen["runs_for_real"])
    assert seen["adk_run_config"] == "None"  # a provider is set: ADK's telemetry as configured


LATE_SDK = """
import asyncio, json, sys
from google.adk.agents import LlmAgent
from adk_eval import EvalCase, run_eval
from adk_eval.testing import ScriptedLlm

def case():
    agent = LlmAgent(name="a", model=ScriptedLlm(["Hi."]))
    return EvalCase(name="c", agent=agent, first_message="x")

first = asyncio.run(run_eval(case()))
sdk_after_first = sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk"))
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

class Kept(SpanExporter):
    names = []
    def export(self, spans):
        self.names.extend(span.name for span in spans)
        return SpanExportResult.SUCCESS

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(Kept()))
trace.set_tracer_provider(provider)
second = asyncio.run(run_eval(case()))
with trace.get_tracer("user").start_as_current_span("outside-any-run"):
    pass
print(json.dumps({"status": [first.status, second.status], "sdk": sdk_after_first,
                  "exported": Kept.names}))
"""


@pytest.mark.slow
def test_no_sdk_is_imported_for_a_run_and_one_set_up_after_it_is_routed_from_the_next_run():
    done = subprocess.run(
        [sys.executable, "-c", LATE_SDK], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    assert seen["status"] == ["passed", "passed"]
    assert seen["sdk"] == []  # a process with no SDK provider: nothing to route, nothing imported
    assert seen["exported"] == ["outside-any-run"]  # the second run's spans: not the user's


def test_with_no_provider_adk_serializes_no_message_content_for_nobody():
    from google.adk.telemetry.context import ContentCapturingMode

    from adk_eval._sandbox._telemetry import nobody_listens, run_config

    assert nobody_listens()  # this process sets no OpenTelemetry SDK provider
    quiet = run_config()
    assert quiet.telemetry.capture_message_content is ContentCapturingMode.NO_CONTENT
    assert not quiet.telemetry.should_add_content_to_legacy_spans
    # ADK's legacy request attributes: the experimental ones convert every content anyway.
    assert quiet.telemetry.genai_semconv_stability_opt_in == "stable"


async def test_the_quiet_telemetry_changes_nothing_the_model_sees_or_the_session_keeps():
    """ADK's own runner, with its default RunConfig and with the one the harness uses."""
    from google.adk.agents import LlmAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from adk_eval._sandbox._telemetry import run_config
    from adk_eval.testing import ScriptedLlm, tool_call

    def lookup(key: str) -> dict:
        """Looks a key up."""
        return {"value": key.upper()}

    async def conversation(config) -> tuple[list, list]:
        seen = []

        def model(request):
            seen.append(request.model_dump(mode="json", exclude={"live_connect_config"}))
            turn = sum(content.role == "model" for content in request.contents)
            return [tool_call("lookup", {"key": "a"}), "Done."][turn % 2]

        agent = LlmAgent(name="a", model=ScriptedLlm(responder=model), tools=[lookup])
        runner = InMemoryRunner(agent=agent, app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        for text in ("Go.", "Again."):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id="u", session_id=session.id, new_message=message, run_config=config
            ):
                pass
        stored = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id=session.id
        )
        events = [
            (e.author, e.content.model_dump(mode="json") if e.content else None)
            for e in stored.events
        ]
        return seen, events

    default = await conversation(None)
    quiet = await conversation(run_config())
    assert len(default[0]) == 4
    assert without_call_ids(quiet) == without_call_ids(default)


def without_call_ids(value):
    """`value` with ADK's random function-call ids left out (they differ run to run)."""
    if isinstance(value, dict):
        return {k: without_call_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list | tuple):
        return [without_call_ids(item) for item in value]
    return value
