"""Where stored sessions come from: an ADK session store's URI, or exported session JSON.

`open_sessions(spec)` reads what ``adk-eval score`` and ``adk-eval shadow`` take:

* ``sqlite:///PATH`` and ``sqlite+aiosqlite:///PATH``: an SQLite file written by
  ADK's `DatabaseSessionService` or by its `SqliteSessionService` (``adk web``'s
  ``.adk/session.db``; told apart by their tables);
* ``postgresql://...`` (any driver; read with asyncpg): a `DatabaseSessionService`
  store;
* a ``.json`` file (one exported `Session`, or a list of them) or a folder of them.

Stores are only ever read (see `_database`); ``memory://``, Vertex AI and MySQL
stores are refused with the reason.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from google.adk.sessions import Session

from .._errors import EvalSetupError
from ._filter import SessionFilter

__all__ = ["SessionFilter", "SessionSource", "open_sessions"]


class SessionSource(Protocol):
    """Stored sessions, streamed (a store's: the most recently updated first)."""

    description: str
    """Where they come from, for messages (a URL's password is never shown)."""

    async def check(self) -> None:
        """Raises `EvalSetupError` (one line) when the sessions cannot be read at all."""
        ...

    def sessions(self, filters: SessionFilter | None = None) -> AsyncIterator[Session]:
        """The sessions that pass `filters` (all by default), with events and merged state."""
        ...


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
    return JsonSource(path)


class JsonSource:
    """Sessions exported as JSON: a file of one `Session` or a list, or a folder of them.

    Args:
        path: The file or folder (``*.json`` under it, in name order).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = str(path)

    async def check(self) -> None:
        """Nothing to check before reading: a bad file is named when it is read."""

    async def sessions(self, filters: SessionFilter | None = None) -> AsyncIterator[Session]:
        """The sessions that pass `filters` (all by default), file by file, in name order.

        Raises:
            EvalSetupError: A file that is not JSON of sessions, naming it.
        """
        filters = filters or SessionFilter()
        files = sorted(self.path.rglob("*.json")) if self.path.is_dir() else [self.path]
        left = filters.limit
        for file in files:
            for session in _sessions_in(file):
                if left == 0:
                    return
                if filters.keeps(session):
                    left = None if left is None else left - 1
                    yield session


def _sessions_in(path: Path) -> list[Session]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data if isinstance(data, list) else [data]
        return [Session.model_validate(item) for item in items]
    except (OSError, ValueError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise EvalSetupError(
            f"{path} is not exported session JSON (a Session object or a list of them): {first}"
        ) from None
