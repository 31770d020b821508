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

Every source reads its sessions once, in `SessionSource.read`, each with what the
source does not carry of it (its ``lacks``: a trace's ``state``, say); `sessions`
is the same without them. A session whose rows cannot be read is handed to the
``unreadable`` callback and left out; without one, `sessions` stops the read with
one line naming it. What every reader gets is built from `read` by the stream of
stored conversations (`_stored`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from google.adk.sessions import Session

from .._errors import EvalSetupError
from ._files import OnUnreadable, not_a_file, refuse
from ._filter import SessionFilter

__all__ = ["GivenSessions", "SessionSource", "open_sessions"]


class SessionSource(Protocol):
    """Stored sessions, streamed (a store's: the most recently updated first)."""

    description: str
    """Where they come from, for messages (a URL's password is never shown)."""

    @property
    def notes(self) -> Sequence[str]:
        """What the source left out or does not carry, one line each (once read)."""
        ...

    async def check(self) -> None:
        """Raises `EvalSetupError` (one line) when the sessions cannot be read at all."""
        ...

    def read(
        self, filters: SessionFilter, unreadable: OnUnreadable
    ) -> AsyncIterator[tuple[Session, frozenset[str]]]:
        """The sessions that pass `filters`, each with what this source does not carry of it.

        A session whose rows cannot be read goes to `unreadable` and is left out.
        """
        ...

    def sessions(
        self, filters: SessionFilter | None = None, *, unreadable: OnUnreadable | None = None
    ) -> AsyncIterator[Session]:
        """The sessions that pass `filters` (all by default), with events and merged state.

        A session whose rows cannot be read goes to `unreadable` and is left out;
        without it, the read stops there (`EvalSetupError`, one line naming it).
        """
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


class GivenSessions:
    """Sessions handed over in memory, read as a source is (they lack nothing).

    Args:
        sessions: The sessions, in the order they are read.
        description: What they are, for messages.
    """

    notes: tuple[str, ...] = ()

    def __init__(self, sessions: Iterable[Session], description: str = "the sessions given"):
        self._sessions, self.description = sessions, description

    async def check(self) -> None:
        """Nothing to check: they are at hand."""

    async def sessions(
        self, filters: SessionFilter | None = None, *, unreadable: OnUnreadable | None = None
    ) -> AsyncIterator[Session]:
        """The sessions that pass `filters` (all by default), in the order given."""
        read = self.read(filters or SessionFilter(), unreadable or refuse(self.description))
        async for session, _ in read:
            yield session

    async def read(
        self, filters: SessionFilter, unreadable: OnUnreadable
    ) -> AsyncIterator[tuple[Session, frozenset[str]]]:
        """The sessions that pass `filters`, in the order given (none is unreadable)."""
        left = filters.limit
        for session in self._sessions:
            if left == 0:
                return
            if filters.keeps(session):
                left = None if left is None else left - 1
                yield session, frozenset()
