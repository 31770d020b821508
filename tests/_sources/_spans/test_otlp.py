"""OTLP decoding: real SDK spans, encoded by the real OTLP encoder, read back."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from typing import Any

import pytest
from google.adk.sessions import InMemorySessionService
from google.protobuf.json_format import MessageToDict, MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from adk_eval._sources._spans._otlp import SpanFormatError, spans_from_json, spans_from_proto
from adk_eval._sources._spans._span import conversation_of
from tests.production import stores


def make_spans(conversations: int = 2, session: bool = True) -> list[ReadableSpan]:
    """Real SDK spans: per conversation an invocation with a child model call and tool."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test")
    for n in range(conversations):
        names = {"gcp.vertex.agent.session_id": f"s{n}"} if session else {}
        with tracer.start_as_current_span("invocation"):
            with tracer.start_as_current_span(
                "call_llm",
                attributes={
                    **names,
                    "gcp.vertex.agent.invocation_id": f"e-{n}",
                    "count": n,
                    "ratio": 0.5,
                    "flag": True,
                    "tags": ["a", "b"],
                },
            ) as call:
                call.add_event("chunk", {"size": 3})
                call.set_status(Status(StatusCode.OK))
            with tracer.start_as_current_span("execute_tool lookup") as tool:
                tool.set_status(Status(StatusCode.ERROR, "no such order"))
    provider.shutdown()
    return list(memory.get_finished_spans())


def hex_ids(document: Any) -> Any:
    """An OTLP/JSON document (protobuf's printer: base64 ids) with hex ids, as OTLP says."""
    document = copy.deepcopy(document)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex().upper()
    return document


def test_json_and_proto_give_the_same_spans_with_base64_hex_or_snake_case_ids() -> None:
    readable = make_spans()
    request = encode_spans(readable)
    from_proto = spans_from_proto(request.SerializeToString())
    as_json = json.loads(MessageToJson(request))
    assert from_proto == spans_from_json(as_json)
    assert from_proto == spans_from_json(hex_ids(as_json))
    assert from_proto == spans_from_json(MessageToDict(request, preserving_proto_field_name=True))
    by_id = {format(span.context.span_id, "016x"): span for span in readable}
    assert set(by_id) == {span.span_id for span in from_proto}
    for span in from_proto:
        original = by_id[span.span_id]
        assert span.trace_id == format(original.context.trace_id, "032x")
        assert span.parent_id == (
            format(original.parent.span_id, "016x") if original.parent else None
        )
        assert (span.name, span.start_ns, span.end_ns) == (
            original.name,
            original.start_time,
            original.end_time,
        )
        assert span.resource["service.name"] == "unknown_service"


def test_attribute_values_events_and_statuses_become_json_values() -> None:
    spans = {
        span.name: span
        for span in spans_from_proto(encode_spans(make_spans(1)).SerializeToString())
    }
    call = spans["call_llm"]
    assert call.attributes == {
        "gcp.vertex.agent.session_id": "s0",
        "gcp.vertex.agent.invocation_id": "e-0",
        "count": 0,
        "ratio": 0.5,
        "flag": True,
        "tags": ["a", "b"],
    }
    assert [(e.name, dict(e.attributes)) for e in call.events] == [("chunk", {"size": 3})]
    assert call.events[0].time_ns >= call.start_ns
    assert (call.status, call.status_message) == ("ok", None)
    assert (spans["execute_tool lookup"].status, spans["execute_tool lookup"].status_message) == (
        "error",
        "no such order",
    )
    assert spans["invocation"].status is None
    assert conversation_of(call) == "s0"


def _document(span: dict[str, Any], key: str = "scopeSpans") -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": []}, key: [{"spans": [span]}]}]}


SPAN = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "call_llm"}


def test_hand_written_json_every_value_kind_string_status_and_legacy_scope_name() -> None:
    span = {
        **SPAN,
        "startTimeUnixNano": 5,
        "endTimeUnixNano": "7",
        "status": {"code": "STATUS_CODE_ERROR", "message": "bad"},
        "attributes": [
            {"key": "i", "value": {"intValue": "12345678901234567890"}},
            {"key": "d", "value": {"doubleValue": "NaN"}},
            {"key": "b", "value": {"bytesValue": "AAE="}},
            {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "x", "value": {}}]}}},
            {"key": "arr", "value": {"arrayValue": {"values": [{"boolValue": False}]}}},
        ],
        "events": [{"name": "late", "timeUnixNano": "9"}, {"name": "early", "timeUnixNano": 6}],
    }
    (found,) = spans_from_json(_document(span, "instrumentationLibrarySpans"))
    assert found.attributes["i"] == 12345678901234567890
    assert found.attributes["d"] != found.attributes["d"]  # NaN
    assert (found.attributes["b"], found.attributes["kv"], found.attributes["arr"]) == (
        "AAE=",
        {"x": None},
        [False],
    )
    assert [event.name for event in found.events] == ["early", "late"]
    assert (found.start_ns, found.end_ns, found.status, found.parent_id) == (5, 7, "error", None)


def test_a_real_adk_runs_spans_decode_with_their_session(capture_spans: Any) -> None:
    service = InMemorySessionService()
    keys = asyncio.run(stores.fill_service(service, 2))
    request = encode_spans(capture_spans.spans())
    spans = spans_from_json(json.loads(MessageToJson(request)))
    assert spans == spans_from_proto(request.SerializeToString())
    assert {conversation_of(span) for span in spans} - {None} == {key[2] for key in keys}
    assert any(span.name.startswith("invoke_agent") for span in spans)
    assert any(span.parent_id is None for span in spans)


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ([], "not an object"),
        ({"resourceMetrics": []}, "resourceMetrics"),
        ({"resourceSpans": {}}, "not a list"),
        (_document({**SPAN, "traceId": "xyz"}), "traceId `xyz` is neither"),
        (_document({**SPAN, "spanId": "AAE="}), "2 bytes, not 8"),
        (_document({"spanId": "cd" * 8}), "has no traceId"),
        (_document({**SPAN, "startTimeUnixNano": "soon"}), "startTimeUnixNano `soon`"),
        (_document({**SPAN, "startTimeUnixNano": -1}), "negative"),
        (_document({**SPAN, "status": {"code": "STATUS_CODE_MAYBE"}}), "not a status code"),
        (_document({**SPAN, "attributes": [{"value": {}}]}), "has no string key"),
        (_document({**SPAN, "attributes": [{"key": "k", "value": {"intValue": "1.5"}}]}), "1.5"),
        (
            _document({**SPAN, "attributes": [{"key": "k", "value": {"bytesValue": "@@"}}]}),
            "base64",
        ),
        (_document({**SPAN, "events": [{"name": 3}]}), "events[0].name"),
        (_document({**SPAN, "name": None}), "name is NoneType"),
    ],
)
def test_malformed_json_raises_one_line_naming_where(document: Any, says: str) -> None:
    with pytest.raises(SpanFormatError) as raised:
        spans_from_json(document)
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_an_empty_request_has_no_spans() -> None:
    assert spans_from_json({}) == []
    assert spans_from_proto(b"") == []


@pytest.mark.parametrize(
    "data", [b"\xff\xff\xff\xff", b"not protobuf at all", b"\x0a\x05\x12\x03\x12\x01"]
)
def test_bytes_that_are_not_a_request_raise_span_format_error(data: bytes) -> None:
    with pytest.raises(SpanFormatError):
        spans_from_proto(data)


def test_a_proto_span_with_a_short_id_is_refused() -> None:
    request = encode_spans(make_spans(1))
    request.resource_spans[0].scope_spans[0].spans[0].span_id = b"\x01\x02"
    with pytest.raises(SpanFormatError, match="span_id is 2 bytes, not 8"):
        spans_from_proto(request.SerializeToString())
