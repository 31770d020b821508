"""Production sessions: score them where ADK keeps them, and shadow-replay a new agent version.

Catalogue:

* `open_sessions`, `SessionFilter`, `SessionSource`: stored sessions from an ADK
  session store (SQLite, PostgreSQL; read-only) or exported session JSON.
"""

from __future__ import annotations

from ._sources import SessionFilter, SessionSource, open_sessions

__all__ = ["SessionFilter", "SessionSource", "open_sessions"]
