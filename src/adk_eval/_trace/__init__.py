"""What metrics read: a run's (or a stored session's) events, as a trace with typed items.

The modules, from the bottom up:

* `_items`: the typed items (tool calls and responses, messages, state
  changes, errors), nested events and token usage.
* `_trace`: `EvalTrace`, the ledger metrics score.
* `_data`: a trace as JSON data and back, and `TraceView`, its fields as
  read-only properties of a class that holds one (`EvalResult`).
"""

from ._data import TRACE_KEYS, TraceView, trace_from_data, trace_to_data
from ._items import (
    ErrorEntry,
    Message,
    NestedEvent,
    StateChange,
    TokenUsage,
    ToolCall,
    ToolResponse,
    TraceEventType,
    TraceItem,
)
from ._trace import NOT_MADE, EvalTrace

__all__ = [
    "NOT_MADE",
    "TRACE_KEYS",
    "ErrorEntry",
    "EvalTrace",
    "Message",
    "NestedEvent",
    "StateChange",
    "TokenUsage",
    "ToolCall",
    "ToolResponse",
    "TraceEventType",
    "TraceItem",
    "TraceView",
    "trace_from_data",
    "trace_to_data",
]
