"""Scoring traces agrees with scoring the session store they came from.

One real ADK app (`_spans/agreement_app.py`: parallel calls, an AgentTool two
deep, a transfer, a long-running tool) runs on ADK's `DatabaseSessionService`
while its spans go, through the real OpenTelemetry SDK, to three places at
once: ``adk-eval collect`` (the SDK's OTLP HTTP exporter), an OTLP JSON-lines
file (the OpenTelemetry Collector's file exporter's format) and ADK's own
`SqliteSpanExporter`. Each is scored with the same metrics as the store.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from google.adk.telemetry.sqlite_span_exporter import SqliteSpanExporter
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from adk_eval._sources._spans._collector import SpanCollector
from adk_eval.metrics import event_count_metric, never_called
from adk_eval.production import open_sessions
from adk_eval.production._score import score_sessions

from .agreement_app import METRICS, run_conversations

_IDS = ("traceId", "spanId", "parentSpanId")


class OtlpJsonLines(SpanExporter):
    """Writes each export as one OTLP/JSON line, hex ids, as the Collector's file exporter."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans):  # type: ignore[no-untyped-def]
        document = MessageToDict(encode_spans(spans))
        for resource in document.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in _IDS:
                        if span.get(key):
                            span[key] = base64.b64decode(span[key]).hex()
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(document) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def verdicts(score) -> dict[str, dict[str, object]]:
    """Each session's metric verdicts and values (when applicable), by session id."""
    return {
        result.name.rsplit("/", 1)[-1]: {
            name: (metric.verdict, metric.value) if metric.applicable else "n/a"
            for name, metric in result.metrics.items()
        }
        for result in score.results
    }


async def scored(spec: str, metrics: list | None = None) -> dict[str, dict[str, str]]:
    source = open_sessions(spec)
    await source.check()
    try:
        return verdicts(await score_sessions(source, metrics or METRICS, include_open=True))
    finally:
        getattr(source, "close", lambda: None)()


NEEDS_CONTENT = {"replies", "asked"}
"""The metrics that read what was said or the calls' arguments."""


@pytest.fixture(params=["content", "no content"])
async def exported(request, capture_spans, tmp_path, monkeypatch):
    """The app's conversations on a store, and their spans in the three places.

    ADK 2.13's spans carry what was said only when the OpenTelemetry GenAI
    content capture is asked for; by default they do not.
    """
    if request.param == "content":
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    else:
        monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    adk_file, lines, collected = (
        tmp_path / "adk_spans.db",
        tmp_path / "traces.jsonl",
        tmp_path / "collected.db",
    )
    capture_spans.add(SqliteSpanExporter(db_path=str(adk_file)))
    capture_spans.add(OtlpJsonLines(lines))
    with SpanCollector(collected, port=0) as collector:
        capture_spans.add(OTLPSpanExporter(endpoint=collector.endpoint + "/v1/traces"))
        store = tmp_path / "sessions.db"
        ids = await run_conversations(f"sqlite+aiosqlite:///{store}")
    return {
        "content": request.param == "content",
        "ids": ids,
        "store": f"sqlite:///{store}",
        "sources": [f"adk-spans:{adk_file}", f"otlp:{lines}", str(collected)],
    }


async def test_each_trace_source_scores_as_the_store_wherever_the_spans_carry_the_facts(exported):
    from_store = await scored(exported["store"])
    assert sorted(from_store) == sorted(exported["ids"])
    assert all(v["n_even"][0] == "pass" for v in from_store.values())  # the store has the state
    kinds = dict(zip(["parallel", "deep", "waits"], exported["ids"], strict=True))
    assert from_store[kinds["parallel"]]["calls_by_name"][0] == "pass"
    assert from_store[kinds["deep"]]["calls_by_name"][0] == "fail"  # its lookup is nested
    assert from_store[kinds["waits"]]["asked"][0] == "pass"
    assert from_store[kinds["parallel"]]["looked_up"] == ("pass", 2)

    for spec in exported["sources"]:
        from_traces = await scored(spec)
        assert sorted(from_traces) == sorted(exported["ids"]), spec
        for session_id, expected in from_store.items():
            expected = {**expected, "n_even": "n/a"}  # spans carry no state
            if not exported["content"]:
                expected.update(dict.fromkeys(NEEDS_CONTENT, "n/a"))
            assert from_traces[session_id] == expected, (spec, session_id)


def test_adk_eval_score_reads_the_collectors_file_says_what_it_lacks_and_exports_goldens(
    exported, tmp_path, isolated_imports
):
    from click.testing import CliRunner

    from adk_eval._cli import main
    from adk_eval.goldens import load_eval_set

    metrics = tmp_path / "metrics_eval.py"
    metrics.write_text("from tests._sources._spans.agreement_app import METRICS\n")
    report, goldens = tmp_path / "report.json", tmp_path / "mined.evalset.json"
    collected = exported["sources"][-1]
    args = ["score", collected, "--metrics", str(metrics), "--json", str(report), "--no-store"]
    args += ["--export-goldens", str(goldens), "--where", "looked_up passed"]
    result = CliRunner().invoke(main, args)

    assert f"the traces in {collected}" in result.output
    lacks = [line for line in result.output.splitlines() if "not applicable" in line]
    assert any("carry no state" in line and "(3 session(s))" in line for line in lacks)
    assert any("content capture was off" in line for line in lacks) != exported["content"]
    runs = json.loads(report.read_text())["results"]
    assert len(runs) == 3, result.output
    assert result.exit_code == 1, result.output  # the deep conversation's trajectory fails
    if exported["content"]:  # one conversation looked up itself: mined, as `adk eval` reads it
        mined = load_eval_set(goldens)
        assert [case.eval_id for case in mined.eval_cases] == [exported["ids"][0]]
        turn = mined.eval_cases[0].conversation[0]
        assert turn.user_content.parts[0].text == "parallel please"
        calls = turn.intermediate_data.tool_uses
        assert [(call.name, call.args) for call in calls] == [
            ("lookup", {"key": "A1"}),
            ("lookup", {"key": "A2"}),
        ]


async def test_shadow_replays_a_traced_conversation_on_its_recorded_answers(exported):
    """With its words, a traced conversation replays as a stored one; without, it is left out."""
    from adk_eval.production import shadow_sessions

    from .agreement_app import build_agent

    results = await shadow_sessions(
        open_sessions(f"otlp:{exported['sources'][1].split(':', 1)[1]}"),
        build_agent(),
        metrics=METRICS,
    )
    if not exported["content"]:  # a replay needs the recorded messages and tool answers
        assert list(results) == []
        assert sorted(results.counts.lacking.first) == sorted(exported["ids"])
        return
    by_id = {result.name.rsplit("/", 1)[-1]: result for result in results}
    parallel = by_id[exported["ids"][0]]
    assert parallel.divergence is None, parallel.divergence
    assert parallel.outcome == "same"
    assert parallel.recorded.metrics["n_even"].verdict == "n/a"  # spans carry no state
    assert parallel.new_calls == parallel.recorded_calls
    assert list(parallel.recorded_calls[0]) == ['lookup{"key": "A1"}', 'lookup{"key": "A2"}']


DESK_AGENT = '''
from google.adk.agents import LlmAgent
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call


def lookup(key: str) -> dict:
    """Looks an order up."""
    return {"status": "shipped", "key": key}


def _step(request):
    asked = request.contents[-1].parts[0].text or ""
    if model_turn_index(request) == 0 and asked.startswith("where is"):
        return tool_call("lookup", {"key": asked.split()[-1].rstrip("?")})
    return "Done: " + (asked or "shipped")


root_agent = LlmAgent(name="desk", model=ScriptedLlm(responder=_step), tools=[lookup])
'''

SERVER_METRICS = [
    event_count_metric("looked_up", "tool_call", lambda c: c.name == "lookup", lambda n: n >= 1),
    event_count_metric("replies", "agent_message", lambda m: bool(m.text), lambda n: n >= 1),
    never_called("delete_account"),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _drive(base: str) -> None:
    """A user's three conversations through the server's HTTP API, and its other requests."""
    with httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/health").status_code == 200
        for turns in (["where is A1?"], ["hello", "where is B2?"], ["where is C3?"]):
            session = client.post("/apps/desk/users/ann/sessions", json={}).json()["id"]
            for text in turns:
                message = {"role": "user", "parts": [{"text": text}]}
                run = {"app_name": "desk", "user_id": "ann", "session_id": session}
                reply = client.post("/run", json={**run, "new_message": message})
                assert reply.status_code == 200, reply.text
            assert client.get(f"/apps/desk/users/ann/sessions/{session}").status_code == 200
        assert client.get("/list-apps").status_code == 200
        assert client.get("/health").status_code == 200


def _serve(agents: Path, store: Path, collector: SpanCollector) -> str:
    """Runs `adk api_server` exporting to `collector`, drives it, stops it; its output."""
    environment = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,  # spans, logs and metrics
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    }
    port = _free_port()
    command = [str(Path(sys.executable).parent / "adk"), "api_server", "--port", str(port)]
    command += ["--session_service_uri", f"sqlite:///{store}", str(agents)]
    server = subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
        while server.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/health").status_code == 200:
                    break
            time.sleep(0.1)
        _drive(base)
    finally:
        server.send_signal(signal.SIGINT)  # Ctrl-C: it exits, flushing its spans and logs
        output = server.communicate(timeout=60)[0]
    return output


async def _score_both(store: Path, traces: Path) -> tuple[dict, dict, list[str]]:
    from_store = await scored(f"sqlite:///{store}", SERVER_METRICS)
    source = open_sessions(str(traces))
    await source.check()
    try:
        results = await score_sessions(source, SERVER_METRICS, include_open=True)
        return from_store, verdicts(results), source.notes
    finally:
        source.close()


@pytest.mark.slow
def test_a_real_api_servers_spans_score_exactly_its_stored_conversations(tmp_path):
    """`adk api_server` exports its own request spans too: they are no conversations."""
    agents = tmp_path / "agents"
    (agents / "desk").mkdir(parents=True)
    (agents / "desk" / "__init__.py").write_text("from . import agent\n")
    (agents / "desk" / "agent.py").write_text(DESK_AGENT)
    store, traces = tmp_path / "sessions.db", tmp_path / "traces.db"
    with SpanCollector(traces, port=0) as collector:
        output = _serve(agents, store, collector)
    assert "Finished server process" in output, output  # a graceful stop: spans flushed
    from_store, from_traces, notes = asyncio.run(_score_both(store, traces))
    assert len(from_store) == 3
    assert from_traces == from_store  # the same conversations, the same verdicts
    assert not [note for note in notes if "content capture was off" in note]
    (left_out,) = [note for note in notes if "no agent invocation" in note]
    assert "3 POST /apps/{app_name}/users/{user_id}/sessions" in left_out
    assert "GET /health" in left_out
    assert "Failed to export" not in output, output
    assert collector.stats.refused == {}
    assert collector.stats.dropped >= 1  # ADK's logs, answered and dropped
