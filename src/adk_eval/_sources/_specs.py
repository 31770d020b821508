"""Where stored sessions come from: an ADK session store's URI, or exported session JSON.

`open_sessions(spec)` reads what ``adk-eval score`` and ``adk-eval shadow`` take:

* ``sqlite:///PATH`` and ``sqlite+aiosqlite:///PATH``: an SQLite file written by
  ADK's `DatabaseSessionService` or by its `SqliteSessionService` (``adk web``'s
  ``.adk/session.db``; told apart by their tables);
* ``postgresql://...`` (any driver; read with asyncpg): a `DatabaseSessionService`
  store;
* a ``.json`` file (one exported `Session`, or a list of them) or a folder of them;
* OpenTelemetry traces: ``otlp:PATH``, ``adk-spans:PATH``, or a plain PATH holding
  spans (see `_traces`): each conversation rebuilt as a session.

Stores are only ever read (see `_database`); ``memory://``, Vertex AI and MySQL
stores are refused with the reason, and so is a path that is not a regular file
or a folder (a FIFO, a device: see `_files`).
"""

from __future__ import annotations

from pathlib import Path

from .._errors import EvalSetupError
from ._files import not_a_file
from ._source import SessionSource

__all__ = ["open_sessions"]


_REFUSED = {
    "memory": "an in-memory session store lives only in the process that ran the agent; "
    "nothing outside it can read its sessions (store them with DatabaseSessionService, "
    "`--session_service_uri sqlite:///...`)",
    "agentengine": "Vertex AI Agent Engine sessions are read over the network, which "
    "adk-eval does not reach for scoring; export them to JSON first",
    "vertexai": "Vertex AI sessions are read over the network, which adk-eval does not "
    "reach for scoring; export them to JSON first",
    "mysql": "MySQL stores are not supported yet (SQLite and PostgreSQL are); export "
    "the sessions to JSON first",
}


def open_sessions(spec: str) -> SessionSource:
    """The stored sessions `spec` names (see the module doc).

    Raises:
        EvalSetupError: An unknown scheme, a refused store, or a path that does not
            exist: one line naming it and what is accepted.
    """
    from ._database import DatabaseSource
    from ._json import JsonSource
    from ._traces import TRACE_SCHEMES, TraceSource, holds_spans, trace_path

    if spec.split(":", 1)[0].lower() in TRACE_SCHEMES and "://" not in spec:
        trace_path(spec)
        return TraceSource(spec)
    scheme = spec.split("://", 1)[0].split("+", 1)[0].lower() if "://" in spec else ""
    if scheme in _REFUSED:
        raise EvalSetupError(f"cannot read sessions from `{scheme}://`: {_REFUSED[scheme]}")
    if scheme in ("sqlite", "postgresql", "postgres"):
        return DatabaseSource(spec)
    if scheme:
        raise EvalSetupError(
            f"unknown session store `{scheme}://`; give sqlite:///PATH, "
            "postgresql://USER:PASSWORD@HOST:PORT/DB, or a file or folder of session JSON"
        )
    path = Path(spec)
    if not path.exists():
        raise EvalSetupError(
            f"no such file or folder: {spec} (give an ADK session store URI such as "
            "sqlite:///PATH, or a file or folder of exported session JSON)"
        )
    kind = not_a_file(path)
    if kind is not None and kind != "a folder":
        raise EvalSetupError(
            f"{spec} is {kind}, not a file: give a file or folder of exported session JSON, "
            "or an ADK session store URI such as sqlite:///PATH (nothing was read)"
        )
    if holds_spans(path):
        return TraceSource(spec)
    return JsonSource(path)
