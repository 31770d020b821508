"""Production sessions: score them where ADK keeps them, and shadow-replay a new agent version.

Catalogue:

* `open_sessions`, `SessionFilter`, `SessionSource`: stored sessions from an ADK
  session store (SQLite, PostgreSQL; read-only), exported session JSON, or
  OpenTelemetry traces (OTLP files, ADK's SQLite span file), rebuilt as sessions.
* `Redactor`, `redact_session`, `RedactionCounts`: personal data (e-mails, phone,
  card and id numbers, your own patterns) replaced by typed markers before anything
  reads a stored session; `score_sessions` and `shadow_sessions` redact by default.
* `SpanCollector`: an OTLP/HTTP receiver keeping a running app's spans in a file
  those sources read (``adk-eval collect``).
* `score_sessions`, `StoreScore`: the same metrics as simulated runs, on stored
  sessions, streamed; every session counted, a bounded number of runs listed.
* `shadow_session`, `shadow_sessions`, `ShadowResult`: a new agent version run against a stored
  conversation, safely (its recorded tool responses as mocks, its user turns as a
  scripted user), compared with what was recorded.
* `watch_sessions`, `WatchSummary`: conversations scored as they finish, once,
  judges on a seeded sample within a budget, each verdict handed to consumers.
"""

from __future__ import annotations

from .._errors import ShadowDivergenceError
from .._sources._filter import SessionFilter
from .._sources._redact._redactor import RedactionCounts, Redactor, redact_session
from .._sources._source import SessionSource
from .._sources._spans._collector import SpanCollector
from .._sources._specs import open_sessions
from ._score import score_sessions
from ._shadow import ShadowResult, shadow_session, shadow_sessions
from ._tally import StoreScore
from ._watch._loop import watch_sessions
from ._watch._summary import WatchSummary

__all__ = [
    "RedactionCounts",
    "Redactor",
    "SessionFilter",
    "SessionSource",
    "ShadowDivergenceError",
    "ShadowResult",
    "SpanCollector",
    "StoreScore",
    "WatchSummary",
    "open_sessions",
    "redact_session",
    "score_sessions",
    "shadow_session",
    "shadow_sessions",
    "watch_sessions",
]
