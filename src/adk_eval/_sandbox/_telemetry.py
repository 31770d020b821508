"""The user's telemetry gets nothing of a run, unless the case keeps it.

The agent's modules may export spans and logs (ADK's ``maybe_set_otel_providers``,
an OTLP exporter of their own) and log model calls (a litellm ``CustomLogger``).
During an eval those would carry the prompts and the mocked tool results to real
sinks. The rule:

* **Spans and OTel log records** started while a run is current go only to the
  eval's own sinks: processors whose exporter is OpenTelemetry's in-memory one
  (`InMemorySpanExporter`, `InMemoryLogRecordExporter`; what a test sets up to
  look at a run). Every other processor of every SDK provider gets nothing of
  the run, whoever installed it and whenever; other work of the process is
  exported as before. A span belongs to the run it started in. Every span and
  record of a run is tagged ``adk_eval.run`` and ``adk_eval.case``, and with
  ``telemetry="keep"`` every processor gets them.
* **litellm's callbacks** (every list litellm keeps them in) are emptied while a
  run that does not keep telemetry is going, and put back, with what was added
  meanwhile, after litellm's deferred logging has run. litellm has no per-call
  switch that covers every callback, so this is process-wide: a litellm call of
  other code of the process, made while a run is going, is not logged either.

The routing patches the OpenTelemetry SDK's span and log record multi-processors
(the classes every provider dispatches through), once, at the first run that
starts with the SDK imported. A process that never imported the SDK has no
provider to route, so the SDK is not imported for it: an SDK the agent's modules
or an earlier run set up is routed from the next run's start, one first
imported in the middle of a run only from the next run on.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ._scope import CURRENT

__all__ = ["describe", "install", "litellm_held_back", "nobody_listens", "run_config"]

_LITELLM_LISTS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "service_callback",
    "audit_log_callbacks",
    "_async_input_callback",
    "_async_success_callback",
    "_async_failure_callback",
)
_routes: dict[tuple[int, int, int], tuple[Any, ...]] = {}
"""Spans a run started: (multi-processor, trace, span) -> the processors that get them."""
_originals: dict[tuple[type, str], Callable[..., Any]] = {}
_SDK_MODULES = ("opentelemetry.sdk.trace", "opentelemetry.sdk._logs")
"""Where the SDK's providers are: with neither imported, no provider exists."""


def install() -> None:
    """Routes the runs' spans and log records (once per process; nothing without the SDK).

    Called at every run's start; until the SDK is imported, by anyone, it does nothing.
    """
    if _originals or not any(name in sys.modules for name in _SDK_MODULES):
        return
    try:
        from opentelemetry.sdk._logs._internal import (
            ConcurrentMultiLogRecordProcessor,
            SynchronousMultiLogRecordProcessor,
        )
        from opentelemetry.sdk.trace import (
            ConcurrentMultiSpanProcessor,
            SynchronousMultiSpanProcessor,
        )
    except ImportError:  # no OpenTelemetry SDK: nothing exports
        return
    for kind in (SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor):
        for name, routed in (("on_start", _on_start), ("on_end", _on_end)):
            _originals[kind, name] = getattr(kind, name)
            setattr(kind, name, routed)
        if hasattr(kind, "_on_ending"):
            _originals[kind, "_on_ending"] = kind._on_ending
            setattr(kind, "_on_ending", _on_ending)  # noqa: B010 - a private hook of the SDK
    for logs in (SynchronousMultiLogRecordProcessor, ConcurrentMultiLogRecordProcessor):
        _originals[logs, "on_emit"] = logs.on_emit
        setattr(logs, "on_emit", _on_emit)  # noqa: B010


def _key(multi: Any, span: Any) -> tuple[int, int, int]:
    context = span.get_span_context()
    return id(multi), context.trace_id, context.span_id


def _on_start(self: Any, span: Any, parent_context: Any = None) -> None:
    scope = CURRENT.get()
    if scope is None:
        _originals[type(self), "on_start"](self, span, parent_context=parent_context)
        return
    span.set_attribute("adk_eval.run", scope.run_id)
    span.set_attribute("adk_eval.case", scope.case)
    route = tuple(
        processor
        for processor in self._span_processors
        if scope.telemetry == "keep" or is_the_evals(processor)
    )
    _routes[_key(self, span)] = route
    for processor in route:
        processor.on_start(span, parent_context=parent_context)


def _on_ending(self: Any, span: Any) -> None:
    route = _routes.get(_key(self, span))
    if route is None:
        _originals[type(self), "_on_ending"](self, span)
        return
    for processor in route:
        ending = getattr(processor, "_on_ending", None)
        if ending is not None:
            ending(span)


def _on_end(self: Any, span: Any) -> None:
    route = _routes.pop(_key(self, span), None)  # decided when the span started
    if route is None:
        _originals[type(self), "on_end"](self, span)
        return
    for processor in route:
        processor.on_end(span)


def _on_emit(self: Any, record: Any) -> None:
    scope = CURRENT.get()
    if scope is None:
        _originals[type(self), "on_emit"](self, record)
        return
    attributes = getattr(getattr(record, "log_record", record), "attributes", None)
    if attributes is not None:
        attributes["adk_eval.run"] = scope.run_id
        attributes["adk_eval.case"] = scope.case
    for processor in self._log_record_processors:
        if scope.telemetry == "keep" or is_the_evals(processor):
            processor.on_emit(record)


def exporter_of(processor: Any) -> Any:
    """The exporter a span or log record processor hands its items to (None if unknown)."""
    for path in (("span_exporter",), ("_exporter",), ("_batch_processor", "_exporter")):
        found = processor
        for name in path:
            found = getattr(found, name, None)
        if found is not None:
            return found
    return None


def is_the_evals(processor: Any) -> bool:
    """Whether `processor` is the eval's own sink: OpenTelemetry's in-memory exporter."""
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    return isinstance(exporter_of(processor), InMemorySpanExporter | InMemoryLogRecordExporter)


@asynccontextmanager
async def litellm_held_back() -> AsyncIterator[None]:
    """Empties litellm's callbacks while the caller runs (counted: runs may overlap)."""
    litellm = sys.modules.get("litellm")
    if litellm is None:  # not imported: no callbacks to hold back
        yield
        return
    _held[0] += 1
    if _held[0] == 1:
        for name in _LITELLM_LISTS:
            found = getattr(litellm, name, None)
            if isinstance(found, list):
                _saved[name] = list(found)
                found.clear()  # in place: whoever holds the list sees it empty
    try:
        yield
    finally:
        _held[0] -= 1
        if _held[0] == 0:
            await _deferred_logging_done()
            for name, saved in _saved.items():
                current = getattr(litellm, name)
                current[:] = saved + [item for item in current if item not in saved]
            _saved.clear()


_held = [0]
_saved: dict[str, list[Any]] = {}


async def _deferred_logging_done() -> None:
    """Waits for litellm's background logging to run while its callbacks are still empty."""
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    except ImportError:
        return
    queue = getattr(GLOBAL_LOGGING_WORKER, "_queue", None)
    pending = getattr(queue, "_unfinished_tasks", 1) if queue is not None else 0
    if not pending and not getattr(GLOBAL_LOGGING_WORKER, "_overflow_tasks", None):
        return  # nothing deferred (flushing would start litellm's worker for nothing)
    flush = getattr(GLOBAL_LOGGING_WORKER, "flush", None)
    if flush is not None:
        try:
            await flush()
        except Exception:  # the worker's own trouble: the callbacks are put back anyway
            return


def describe(keeping: Sequence[str] = (), total: int = 0) -> list[str]:
    """The user's exporters and litellm callbacks, and what runs do to them (one line each).

    Args:
        keeping: The cases that keep telemetry (``telemetry="keep"``).
        total: How many cases there are.
    """
    if not keeping:
        fate = "gets nothing of the runs"
    elif len(keeping) >= total:
        fate = "gets the runs' telemetry, tagged adk_eval.run and adk_eval.case"
    else:
        fate = "gets the runs of " + ", ".join(f"`{name}`" for name in keeping) + " only, tagged"
    lines = [f"{name}: {fate}" for name in _otel_sinks()]
    lines += [f"{name}: the eval's own, gets the runs' telemetry" for name in _otel_sinks(own=True)]
    litellm = sys.modules.get("litellm")
    for name in _LITELLM_LISTS if litellm is not None else ():
        for callback in getattr(litellm, name, None) or []:
            label = callback if isinstance(callback, str) else _name_of(callback)
            lines.append(f"litellm callback {label}: {fate}")
    return list(dict.fromkeys(lines))


def _name_of(callback: Any) -> str:
    """A function's qualified name, or an object's class's."""
    target = callback if hasattr(callback, "__code__") else type(callback)
    return f"{target.__module__}.{target.__qualname__}"


def _otel_sinks(own: bool = False) -> list[str]:
    try:
        from opentelemetry import trace
        from opentelemetry._logs import get_logger_provider
    except ImportError:
        return []
    found = []
    spans = getattr(trace.get_tracer_provider(), "_active_span_processor", None)
    logs = getattr(get_logger_provider(), "_multi_log_record_processor", None)
    for kind, multi, attribute in (
        ("spans", spans, "_span_processors"),
        ("logs", logs, "_log_record_processors"),
    ):
        for processor in getattr(multi, attribute, ()) or ():
            if is_the_evals(processor) != own:
                continue
            exporter = exporter_of(processor)
            endpoint = getattr(exporter, "_endpoint", None)
            where = f" to {endpoint}" if isinstance(endpoint, str) else ""
            found.append(f"{kind} {type(processor).__name__}({type(exporter).__name__}{where})")
    return found


def nobody_listens() -> bool:
    """Whether no OpenTelemetry SDK provider of spans or logs is set (nothing records them)."""
    try:
        from opentelemetry import _logs, trace
    except ImportError:
        return True
    spans = getattr(trace.get_tracer_provider(), "_active_span_processor", None)
    logs = getattr(_logs.get_logger_provider(), "_multi_log_record_processor", None)
    return spans is None and logs is None


def run_config() -> Any:
    """The `RunConfig` of a run's ADK invocations: None (ADK's default) unless nobody listens.

    With no SDK provider set, ADK's spans and log records go nowhere, so two
    things it would compute for them at every model and tool call are switched
    off through ADK's own per-request setting (``TelemetryConfig``): the message
    content serialized into them (``NO_CONTENT``), and the experimental GenAI
    request attributes, which convert every content of the request whatever
    the capture mode (``"stable"``: ADK's legacy attributes). Neither changes what
    the model sees or the events a session gets. A provider of the user's (an
    exporter, an in-memory one) keeps ADK's telemetry exactly as the
    environment configures it.
    """
    if not nobody_listens():
        return None
    return _quiet_config()


@functools.cache
def _quiet_config() -> Any:
    """The quiet `RunConfig`, made once (ADK reads it; nothing writes to it)."""
    from google.adk.agents.run_config import RunConfig
    from google.adk.telemetry.context import ContentCapturingMode, TelemetryConfig

    quiet = TelemetryConfig(
        capture_message_content=ContentCapturingMode.NO_CONTENT,
        genai_semconv_stability_opt_in="stable",
    )
    return RunConfig(telemetry=quiet)
