"""stream_documents: an OTLP/JSON document read span by span gives what json.loads gives."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from adk_eval._sources._spans import _json_stream
from adk_eval._sources._spans._json_stream import NotJson, stream_documents
from adk_eval._sources._spans._otlp import SpanFormatError, spans_from_json
from adk_eval._sources._spans._span import Span
from tests._sources._spans.test_otlp import make_spans


def streamed(text: str | bytes) -> list[Span]:
    found: list[Span] = []
    data = text.encode() if isinstance(text, str) else text
    stream_documents(io.BytesIO(data), found.extend)
    return found


def real_document() -> dict[str, Any]:
    """Real SDK spans as protobuf's JSON printer writes them (base64 ids), two resources."""
    document = json.loads(MessageToJson(encode_spans(make_spans(3))))
    document["resourceSpans"].append(json.loads(json.dumps(document["resourceSpans"][0])))
    resource = document["resourceSpans"][1]["resource"]
    resource["attributes"] = [{"key": "service.name", "value": {"stringValue": "desk"}}]
    return document


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 16])
def test_every_layout_and_chunk_size_gives_the_spans_json_loads_gives(monkeypatch, chunk):
    monkeypatch.setattr(_json_stream, "_CHUNK", chunk)
    document = real_document()
    expected = spans_from_json(document)
    assert len(expected) == 18
    assert streamed(json.dumps(document, indent=2)) == expected
    assert streamed("\ufeff" + json.dumps(document)) == expected  # one line, with a BOM
    late = json.loads(json.dumps(document))  # each resource written after its spans
    for element in late["resourceSpans"]:
        element["resource"] = element.pop("resource")
        element["schemaUrl"] = 12.5
    assert streamed(json.dumps(late, indent=1)) == expected
    twice = json.dumps(document, indent=2) + "\n" + json.dumps(document)
    assert streamed(twice) == expected + expected


def test_snake_case_null_and_empty_parts_are_read() -> None:
    span = {"trace_id": "ab" * 16, "span_id": "cd" * 8, "name": "invocation"}
    document = {"resource_spans": [{"instrumentation_library_spans": [{"spans": [span]}]}]}
    assert [s.span_id for s in streamed(json.dumps(document, indent=2))] == ["cd" * 8]
    assert streamed('{"resourceSpans": null}\n{}\n{"resourceSpans": [{"scopeSpans": []}]}') == []


def test_a_span_larger_than_many_chunks_is_read_whole(monkeypatch) -> None:
    monkeypatch.setattr(_json_stream, "_CHUNK", 512)
    big = {"key": "blob", "value": {"stringValue": "x" * 300_000}}
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "n", "attributes": [big]}
    (found,) = streamed(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    assert found.attributes["blob"] == "x" * 300_000


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            '{\n  "resourceSpans": [\n    {"scopeSpans": [\n      {"spans": [}\n',
            4,
            "Expecting value",
        ),
        ('{\n "resourceSpans": [\n', 3, "Expecting value"),
        ('{\n "resourceSpans": []\n "x": 1}', 3, "expected ','"),
        ("{\n 5: 1}", 2, "expected a key"),
        (b'{\n "resourceSpans": [\xff]}', 2, "not UTF-8"),
    ],
)
def test_text_that_is_not_json_names_its_line(text: str | bytes, line: int, reason: str) -> None:
    with pytest.raises(NotJson) as raised:
        streamed(text)
    assert raised.value.line == line
    assert reason in raised.value.reason


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[1, 2]", "the document is list, not an object"),
        ('{"resourceMetrics": []}', "no resourceSpans in the document (it has `resourceMetrics`"),
        ('{"resourceSpans": {}}', ".resourceSpans is dict, not a list"),
        ('{"resourceSpans": [7]}', "resourceSpans[0] is int, not an object"),
        (
            '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "cdcdcdcdcdcdcdcd"}]}]}]}',
            "resourceSpans[0].scopeSpans[0].spans[0] has no traceId",
        ),
    ],
)
def test_json_that_is_not_a_trace_export_says_where(text: str, says: str) -> None:
    with pytest.raises(SpanFormatError, match=None) as raised:
        streamed(text)
    assert says in str(raised.value)
