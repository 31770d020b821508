"""Decoding OTLP trace exports (JSON and protobuf) into `Span` records.

One `ExportTraceServiceRequest` (or its equal, ``TracesData``) at a time:
`spans_from_json` takes its OTLP/JSON form as parsed by `json.loads`,
`spans_from_proto` its binary protobuf form. OTLP/JSON writes ids as hex; some
exporters (protobuf's own JSON printer) write them as base64, and some write
field names in snake_case: both are read. Anything that does not fit raises
`SpanFormatError`, one line naming where (``resourceSpans[0].scopeSpans[0].spans[3]``)
and what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from ..._errors import SpanFormatError
from ._span import Span, SpanEvent

__all__ = [
    "SpanFormatError",
    "resource_from_json",
    "span_from_json",
    "spans_from_json",
    "spans_from_proto",
]

_HEX = re.compile(r"[0-9a-fA-F]*")
_STATUS = {0: None, 1: "ok", 2: "error"}
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_SCALARS = {"stringValue": str, "boolValue": bool}


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda found: "_" + found.group(1).lower(), name)


def _get(obj: Mapping[str, Any], name: str) -> Any:
    """A field by its lowerCamelCase name, or its snake_case one."""
    if name in obj:
        return obj[name]
    return obj.get(_snake(name))


def _list(obj: Mapping[str, Any], name: str, where: str) -> list[Any]:
    value = _get(obj, name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanFormatError(f"{where}.{name} is {type(value).__name__}, not a list")
    return value


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SpanFormatError(f"{where} is {type(value).__name__}, not an object")
    return value


def _id(value: Any, size: int, where: str) -> str | None:
    """An id of `size` bytes as lowercase hex, from hex or base64 text; None when empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SpanFormatError(f"{where} is {type(value).__name__}, not a string")
    if len(value) == 2 * size and _HEX.fullmatch(value):
        raw = bytes.fromhex(value)
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise SpanFormatError(
                f"{where} `{value[:40]}` is neither {2 * size} hex digits nor base64"
            ) from None
        if len(raw) != size:
            raise SpanFormatError(f"{where} `{value[:40]}` is {len(raw)} bytes, not {size}")
    return None if raw == bytes(size) else raw.hex()


def _nanos(value: Any, where: str) -> int:
    """A time in nanoseconds from an int or its decimal text; 0 when absent."""
    if value is None or value == "":
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SpanFormatError(f"{where} is {type(value).__name__}, not an integer")
    try:
        nanos = int(value)
    except ValueError:
        raise SpanFormatError(f"{where} `{str(value)[:40]}` is not an integer") from None
    if nanos < 0:
        raise SpanFormatError(f"{where} is negative ({nanos})")
    return nanos


def _value(value: Any, where: str) -> Any:
    """An OTLP/JSON ``AnyValue`` as a JSON value (kvlist: an object; bytes: base64 text)."""
    value = _object(value, where)
    for name, kind in _SCALARS.items():
        found = _get(value, name)
        if found is not None:
            if not isinstance(found, kind):
                raise SpanFormatError(f"{where}.{name} is {type(found).__name__}")
            return found
    found = _get(value, "intValue")
    if found is not None:
        return _integer(found, f"{where}.intValue")
    found = _get(value, "doubleValue")
    if found is not None:
        if isinstance(found, bool) or not isinstance(found, (int, float, str)):
            raise SpanFormatError(f"{where}.doubleValue is {type(found).__name__}")
        try:
            return float(found)
        except ValueError:
            raise SpanFormatError(f"{where}.doubleValue `{found}` is not a number") from None
    found = _get(value, "arrayValue")
    if found is not None:
        inner = _object(found, f"{where}.arrayValue")
        return [
            _value(item, f"{where}.arrayValue.values[{n}]")
            for n, item in enumerate(_list(inner, "values", f"{where}.arrayValue"))
        ]
    found = _get(value, "kvlistValue")
    if found is not None:
        inner = _object(found, f"{where}.kvlistValue")
        return _attributes(inner, "values", f"{where}.kvlistValue")
    found = _get(value, "bytesValue")
    if found is not None:
        if not isinstance(found, str):
            raise SpanFormatError(f"{where}.bytesValue is {type(found).__name__}, not base64")
        try:
            base64.b64decode(found, validate=True)
        except (binascii.Error, ValueError):
            raise SpanFormatError(f"{where}.bytesValue is not base64") from None
        return found
    return None


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SpanFormatError(f"{where} is {type(value).__name__}, not an integer")
    try:
        return int(value)
    except ValueError:
        raise SpanFormatError(f"{where} `{str(value)[:40]}` is not an integer") from None


def _attributes(obj: Mapping[str, Any], name: str, where: str) -> dict[str, Any]:
    """A list of ``{key, value}`` pairs as a dict."""
    found: dict[str, Any] = {}
    for n, pair in enumerate(_list(obj, name, where)):
        at = f"{where}.{name}[{n}]"
        pair = _object(pair, at)
        key = pair.get("key")
        if not isinstance(key, str):
            raise SpanFormatError(f"{at} has no string key")
        found[key] = _value(pair.get("value") or {}, f"{at}.value")
    return found


def _status(obj: Mapping[str, Any], where: str) -> tuple[str | None, str | None]:
    status = _get(obj, "status")
    if status is None:
        return None, None
    status = _object(status, f"{where}.status")
    code = status.get("code", 0)
    if isinstance(code, str) and code in _STATUS_NAMES:
        code = _STATUS_NAMES[code]
    if isinstance(code, bool) or not isinstance(code, int) or code not in _STATUS:
        raise SpanFormatError(f"{where}.status.code `{code}` is not a status code")
    message = status.get("message")
    if message is not None and not isinstance(message, str):
        raise SpanFormatError(f"{where}.status.message is {type(message).__name__}")
    return _STATUS[code], message or None


def _json_span(obj: Any, resource: Mapping[str, Any], where: str) -> Span:
    obj = _object(obj, where)
    trace_id = _id(_get(obj, "traceId"), 16, f"{where}.traceId")
    span_id = _id(_get(obj, "spanId"), 8, f"{where}.spanId")
    if trace_id is None or span_id is None:
        raise SpanFormatError(f"{where} has no {'traceId' if trace_id is None else 'spanId'}")
    name = obj.get("name", "")
    if not isinstance(name, str):
        raise SpanFormatError(f"{where}.name is {type(name).__name__}, not a string")
    events = []
    for n, event in enumerate(_list(obj, "events", where)):
        at = f"{where}.events[{n}]"
        event = _object(event, at)
        event_name = event.get("name", "")
        if not isinstance(event_name, str):
            raise SpanFormatError(f"{at}.name is {type(event_name).__name__}, not a string")
        events.append(
            SpanEvent(
                event_name,
                _nanos(_get(event, "timeUnixNano"), f"{at}.timeUnixNano"),
                _attributes(event, "attributes", at),
            )
        )
    status, message = _status(obj, where)
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(_get(obj, "parentSpanId"), 8, f"{where}.parentSpanId"),
        name=name,
        start_ns=_nanos(_get(obj, "startTimeUnixNano"), f"{where}.startTimeUnixNano"),
        end_ns=_nanos(_get(obj, "endTimeUnixNano"), f"{where}.endTimeUnixNano"),
        attributes=_attributes(obj, "attributes", where),
        events=tuple(sorted(events, key=lambda event: event.time_ns)),
        status=status,
        status_message=message,
        resource=resource,
    )


def span_from_json(obj: Any, resource: Mapping[str, Any], where: str) -> Span:
    """One OTLP/JSON span object, emitted by the resource whose attributes are `resource`.

    Raises:
        SpanFormatError: It is malformed (the message starts with `where`).
    """
    return _json_span(obj, resource, where)


def resource_from_json(resource: Any, where: str) -> dict[str, Any]:
    """The attributes of an OTLP/JSON ``resource`` object (None: no attributes)."""
    return _attributes(_object(resource or {}, where), "attributes", where)


def spans_from_json(document: Mapping[str, Any]) -> list[Span]:
    """The spans of one OTLP/JSON ``ExportTraceServiceRequest`` (or ``TracesData``).

    Args:
        document: The parsed JSON object (``{"resourceSpans": [...]}``).

    Returns:
        Its spans, in the order they were written.

    Raises:
        SpanFormatError: It is not such a document, or a span in it is malformed.
    """
    document = _object(document, "the document")
    if _get(document, "resourceSpans") is None and document:
        other = next((key for key in document if key.startswith("resource")), None)
        found = f" (it has `{other}`: not traces)" if other else ""
        raise SpanFormatError(f"no resourceSpans in the document{found}")
    spans: list[Span] = []
    for r, resource_spans in enumerate(_list(document, "resourceSpans", "")):
        where = f"resourceSpans[{r}]"
        resource_spans = _object(resource_spans, where)
        resource = _object(_get(resource_spans, "resource") or {}, f"{where}.resource")
        attributes = _attributes(resource, "attributes", f"{where}.resource")
        scopes = _list(resource_spans, "scopeSpans", where) or _list(
            resource_spans, "instrumentationLibrarySpans", where
        )
        for s, scope in enumerate(scopes):
            at = f"{where}.scopeSpans[{s}]"
            for n, span in enumerate(_list(_object(scope, at), "spans", at)):
                spans.append(_json_span(span, attributes, f"{at}.spans[{n}]"))
    return spans


def _proto_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_proto_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _proto_attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return None if kind is None else getattr(value, kind)


def _proto_attributes(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    pair: KeyValue
    for pair in pairs:
        found[pair.key] = _proto_value(pair.value)
    return found


def _proto_id(raw: bytes, size: int, where: str) -> str | None:
    if not raw or raw == bytes(size):
        return None
    if len(raw) != size:
        raise SpanFormatError(f"{where} is {len(raw)} bytes, not {size}")
    return raw.hex()


def _proto_span(span: ProtoSpan, resource: Mapping[str, Any], where: str) -> Span:
    trace_id = _proto_id(span.trace_id, 16, f"{where}.trace_id")
    span_id = _proto_id(span.span_id, 8, f"{where}.span_id")
    if trace_id is None or span_id is None:
        raise SpanFormatError(f"{where} has no {'trace_id' if trace_id is None else 'span_id'}")
    if span.status.code not in _STATUS:
        raise SpanFormatError(f"{where}.status.code {span.status.code} is not a status code")
    events = (
        SpanEvent(event.name, event.time_unix_nano, _proto_attributes(event.attributes))
        for event in span.events
    )
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_proto_id(span.parent_span_id, 8, f"{where}.parent_span_id"),
        name=span.name,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        attributes=_proto_attributes(span.attributes),
        events=tuple(sorted(events, key=lambda event: event.time_ns)),
        status=_STATUS[span.status.code],
        status_message=span.status.message or None,
        resource=resource,
    )


def spans_from_proto(data: bytes) -> list[Span]:
    """The spans of one binary protobuf ``ExportTraceServiceRequest``.

    Args:
        data: The serialized message.

    Returns:
        Its spans, in the order they were written.

    Raises:
        SpanFormatError: The bytes are not such a message, or a span in it is malformed.
    """
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError (its module ships no types)
        text = str(error).strip().splitlines()[0] if str(error).strip() else "cannot parse"
        raise SpanFormatError(f"not an OTLP ExportTraceServiceRequest: {text}") from None
    spans: list[Span] = []
    for r, resource_spans in enumerate(request.resource_spans):
        resource = _proto_attributes(resource_spans.resource.attributes)
        for s, scope in enumerate(resource_spans.scope_spans):
            for n, span in enumerate(scope.spans):
                where = f"resource_spans[{r}].scope_spans[{s}].spans[{n}]"
                spans.append(_proto_span(span, resource, where))
    return spans
