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


def test_with_no_provider_adk_serializes_no_message_content_for_nobody():
    from google.adk.telemetry.context import ContentCapturingMode

    from adk_eval._sandbox._telemetry import nobody_listens, run_config

    assert nobody_listens()  # this process sets no OpenTelemetry SDK provider
    quiet = run_config()
    assert quiet.telemetry.capture_message_content is ContentCapturingMode.NO_CONTENT
    assert not quiet.telemetry.should_add_content_to_legacy_spans
