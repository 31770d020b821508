"""Verdicts reach a real OTLP receiver in their conversation's trace, redacted."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from adk_eval import EvalSetupError
from adk_eval._sources._spans._collector import SpanCollector
from adk_eval._sources._specs import open_sessions
from adk_eval.production._watch._export import OtlpVerdicts, traces_url
from adk_eval.production._watch._verdict import WatchVerdict
from tests._sources._spans.conftest import capture_spans  # noqa: F401  (the fixture)
from tests._sources._spans.test_collector import run_adk

SECRET = "my card is 4111 1111 1111 1111"


def conversation_trace(endpoint: str) -> str:
    """An app's own span (holding the user's text) sent to the receiver; its trace id."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{endpoint}/v1/traces")))
    with provider.get_tracer("app").start_as_current_span("invocation") as span:
        span.set_attribute("gcp.vertex.agent.session_id", "s1")
        span.set_attribute("gen_ai.input.messages", SECRET)
        trace_id = f"{span.get_span_context().trace_id:032x}"
    provider.shutdown()
    return trace_id


def rows(path: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        query = "SELECT trace_id, parent_span_id, name, attributes_json, events_json FROM spans"
        return list(connection.execute(query))


def test_each_verdict_is_an_evaluation_result_span_in_its_conversations_trace(tmp_path):
    out = tmp_path / "spans.db"
    with SpanCollector(out, port=0) as collector:
        trace_id = conversation_trace(collector.endpoint)
        verdicts = OtlpVerdicts(collector.endpoint)
        verdicts(WatchVerdict("shop/ann/s1", "helpful", False, 0.25, "agent", trace_id, 1.7e9))
        verdicts(WatchVerdict("shop/ann/s1", "no_refund", True, None, None, trace_id, 1.7e9, True))
        verdicts(WatchVerdict("shop/bob/s2", "helpful", None))
        assert verdicts.flush(10)
        verdicts.close()
        stats = collector.stats
    assert stats.spans_kept == 4
    assert not stats.refused

    found = {
        (
            json.loads(row[3]).get("adk_eval.conversation"),
            json.loads(row[3]).get("gen_ai.evaluation.name"),
        ): row
        for row in rows(out)
        if row[2] == "gen_ai.evaluation.result"
    }
    failed = found[("shop/ann/s1", "helpful")]
    assert failed[0] == trace_id
    assert failed[1] is None
    assert json.loads(failed[3]) == {
        "gen_ai.evaluation.name": "helpful",
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.score.value": 0.25,
        "gen_ai.evaluation.explanation": "fail, attributed to agent",
        "adk_eval.conversation": "shop/ann/s1",
        "gen_ai.conversation.id": "s1",
        "adk_eval.judged": False,
        "adk_eval.party": "agent",
    }
    (event,) = json.loads(failed[4])
    assert event["name"] == "gen_ai.evaluation.result"
    assert event["attributes"]["gen_ai.evaluation.score.label"] == "fail"
    passed = found[("shop/ann/s1", "no_refund")]
    assert passed[0] == trace_id
    assert json.loads(passed[3])["gen_ai.evaluation.score.label"] == "pass"
    assert json.loads(passed[3])["adk_eval.judged"] is True
    untraced = found[("shop/bob/s2", "helpful")]
    assert untraced[0] != trace_id
    assert len(untraced[0]) == 32
    assert json.loads(untraced[3])["gen_ai.evaluation.score.label"] == "not_applicable"


def test_an_exported_verdict_holds_no_conversation_text(tmp_path):
    out = tmp_path / "spans.db"
    with SpanCollector(out, port=0) as collector:
        trace_id = conversation_trace(collector.endpoint)
        verdicts = OtlpVerdicts(collector.endpoint + "/v1/traces")
        verdicts(WatchVerdict("shop/ann/s1", "helpful", False, 0.0, "user", trace_id, 1.7e9))
        verdicts.close()
    verdict, app = sorted(rows(out), key=lambda row: row[2])
    assert app[2] == "invocation"
    assert SECRET in app[3]
    assert verdict[0] == trace_id
    assert SECRET not in repr(verdict)
    assert "4111" not in repr(verdict)


@pytest.mark.parametrize("endpoint", ["127.0.0.1:4318", "grpc://127.0.0.1:4317", "http://"])
def test_an_endpoint_that_is_not_an_http_url_is_refused_in_one_line(endpoint):
    with pytest.raises(EvalSetupError, match="is not an OTLP/HTTP endpoint") as error:
        OtlpVerdicts(endpoint)
    assert "\n" not in str(error.value)


def test_the_traces_path_is_added_once():
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://h:4318/v1/traces/") == "http://h:4318/v1/traces"
    assert traces_url("https://h/otel") == "https://h/otel/v1/traces"


async def read_back(path: Path) -> list[tuple[str, float, list[str]]]:
    """Each conversation `score` reads from a spans file: its id, last update and events."""
    found = []
    async for session in open_sessions(str(path)).sessions():
        events = [event.model_dump_json(exclude={"id", "timestamp"}) for event in session.events]
        found.append((session.id, session.last_update_time, events))
    return found


def test_verdicts_beside_a_real_adk_run_leave_its_conversation_as_score_reads_it(
    tmp_path,
    capture_spans,  # noqa: F811  (the fixture imported above)
):
    out = tmp_path / "spans.db"
    with SpanCollector(out, port=0) as collector:
        capture_spans.add(OTLPSpanExporter(endpoint=collector.endpoint + "/v1/traces"))
        asyncio.run(run_adk())
        (trace_id,) = {f"{span.context.trace_id:032x}" for span in capture_spans.spans()}
        before = asyncio.run(read_back(out))
        verdicts = OtlpVerdicts(collector.endpoint)
        verdicts(WatchVerdict(f"desk_app/ann/{before[0][0]}", "helpful", False, 0.1, "agent",
                              trace_id, time.time() + 60))  # fmt: skip
        verdicts.close()
    assert [row[0] for row in rows(out)].count(trace_id) == len(capture_spans.spans()) + 1
    assert asyncio.run(read_back(out)) == before  # not updated: a watch would not rescore it


def test_a_receiver_that_is_down_never_raises_into_the_watch():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))  # bound, not listening: refused
        verdicts = OtlpVerdicts(f"http://127.0.0.1:{probe.getsockname()[1]}", timeout=0.3)
        verdicts(WatchVerdict("shop/ann/s1", "helpful", True, trace_id="ab" * 16))
        started = time.monotonic()
        verdicts.close()  # the exporter gives up after its timeout; nothing raised
    assert time.monotonic() - started < 5
