"""A span as adk-eval reads it, whatever it came from, and the SQLite table spans live in.

Every trace source (OTLP JSON or protobuf files, ADK's `SqliteSpanExporter` file,
the file ``adk-eval collect`` writes) is read into `Span` records. Files are
spooled into a private SQLite file of `SPANS_TABLE`'s shape so that a
conversation's spans can be read one conversation at a time (memory stays flat);
ADK's own span file already has that shape (its columns are the first nine), and
``adk-eval collect`` writes it too, with the extra columns filled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SPANS_TABLE", "EXTRA_COLUMNS", "Span", "SpanEvent", "conversation_of"]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event recorded on a span (OpenTelemetry's span event)."""

    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Span:
    """One span.

    Attributes:
        trace_id: 32 lowercase hex digits.
        span_id: 16 lowercase hex digits.
        parent_id: The parent's span id, or None for a root.
        name: The span's name (ADK: ``invocation``, ``invoke_agent NAME``,
            ``call_llm``, ``execute_tool NAME``, ...).
        start_ns: Start, nanoseconds since the epoch (0 when unknown).
        end_ns: End, nanoseconds since the epoch (0 when unknown).
        attributes: Its attributes as JSON values (str, int, float, bool, lists).
        events: Its span events, in time order.
        status: ``"ok"``, ``"error"`` or None (unset or unknown).
        status_message: The status's description, if any.
        resource: The attributes of the resource that emitted it (``service.name``...).
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    status: str | None = None
    status_message: str | None = None
    resource: Mapping[str, Any] = field(default_factory=dict)


def conversation_of(span: Span) -> str | None:
    """The conversation (session id) a span names itself, as ADK's exporter reads it."""
    for key in ("gcp.vertex.agent.session_id", "gen_ai.conversation.id", "session.id"):
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


SPANS_TABLE = """
CREATE TABLE IF NOT EXISTS spans (
  span_id TEXT PRIMARY KEY,
  trace_id TEXT NOT NULL,
  parent_span_id TEXT,
  name TEXT NOT NULL,
  start_time_unix_nano INTEGER,
  end_time_unix_nano INTEGER,
  session_id TEXT,
  invocation_id TEXT,
  attributes_json TEXT,
  status_code TEXT,
  status_message TEXT,
  events_json TEXT,
  resource_json TEXT
)
"""
"""ADK's `SqliteSpanExporter` table (its nine columns, in its order) with four more.

``session_id`` is `conversation_of` the span (ADK fills it the same way),
``invocation_id`` the ``gcp.vertex.agent.invocation_id`` attribute. The extra
columns are NULL in a file ADK wrote: ``status_code`` (``ok``/``error``),
``events_json`` (a JSON list of ``{"name", "time_unix_nano", "attributes"}``),
``resource_json`` (a JSON object).
"""

EXTRA_COLUMNS = ("status_code", "status_message", "events_json", "resource_json")
"""The columns ADK's own file does not have (a reader selects them only if present)."""
