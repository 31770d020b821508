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

A session whose rows cannot be read is handed to the ``unreadable`` callback of
`SessionSource.sessions` and left out; without one, it stops the read with one
line naming it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from google.adk.sessions import Session
from pydantic import ValidationError

from .._errors import EvalSetupError
from ._files import OnUnreadable, Unreadable, first_line, not_a_file, refuse
from ._filter import SessionFilter

__all__ = ["SessionFilter", "SessionSource", "open_sessions"]


class SessionSource(Protocol):
    """Stored sessions, streamed (a store's: the most recently updated first)."""

    description: str
    """Where they come from, for messages (a URL's password is never shown)."""

    async def check(self) -> None:
        """Raises `EvalSetupError` (one line) when the sessions cannot be read at all."""
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


class JsonSource:
    """Sessions exported as JSON: a file of one `Session` or a list, or a folder of them.

    Args:
        path: The file or folder (``*.json`` under it, in name order).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = str(path)

    async def check(self) -> None:
        """Refuses what in the folder would block or never end (a FIFO, a device).

        Raises:
            EvalSetupError: One line naming it.
        """
        self._names()  # plain strings: a Path per file of a big folder would cost megabytes

    def _names(self) -> list[str]:
        """The files to read, in name order, every one a regular file.

        Plain strings: a folder of 10,000 files is 10,000 short strings.
        """
        if not self.path.is_dir():
            found = [str(self.path)]
        else:  # os.walk holds names, not one DirEntry and Path per file of a big folder
            found = sorted(
                os.path.join(root, name)
                for root, _, files in os.walk(self.path)
                for name in files
                if name.endswith(".json")
            )
        for name in found:
            kind = not_a_file(name)  # a Path per file would intern each name for good
            if kind is not None:
                raise EvalSetupError(
                    f"{name} is {kind}, not a file: exported sessions are regular .json "
                    f"files; move it out of {self.path} (nothing was read)"
                )
        return found

    async def sessions(
        self, filters: SessionFilter | None = None, *, unreadable: OnUnreadable | None = None
    ) -> AsyncIterator[Session]:
        """The sessions that pass `filters` (all by default), file by file, in name order.

        A file that is not JSON, or an item that is not a `Session`, is unreadable.

        Raises:
            EvalSetupError: A file that is not a regular file; an unreadable session
                without `unreadable`.
        """
        filters = filters or SessionFilter()
        skip = unreadable or refuse(self.description)
        left = filters.limit
        for name in self._names():
            for session in _sessions_in(name):
                if isinstance(session, Unreadable):
                    skip(session)
                    continue
                if left == 0:
                    return
                if filters.keeps(session):
                    left = None if left is None else left - 1
                    yield session


def _sessions_in(path: str) -> list[Session | Unreadable]:
    """The sessions of one exported file (a file is read whole: one at a time)."""
    try:
        with open(path, encoding="utf-8") as file:
            data = json.loads(file.read())
    except (OSError, ValueError) as error:
        why = f"not exported session JSON (a Session object or a list of them): {first_line(error)}"
        return [Unreadable(str(path), why)]
    items = data if isinstance(data, list) else [data]
    found: list[Session | Unreadable] = []
    for index, item in enumerate(items):
        try:
            found.append(Session.model_validate(item))
        except ValidationError as error:
            where = f"{path}[{index}]" if isinstance(data, list) else str(path)
            found.append(Unreadable(_item_name(item, where), f"not a Session: {first_line(error)}"))
    return found


def _item_name(item: object, where: str) -> str:
    """An exported session's name (``app/user/id``, and where it is), as far as it has one."""
    if isinstance(item, dict):
        key = [item.get(snake, item.get(camel)) for snake, camel in _KEYS]
        if all(isinstance(part, str) for part in key):
            return f"{'/'.join(str(part) for part in key)} ({where})"
    return where


_KEYS = (("app_name", "appName"), ("user_id", "userId"), ("id", "id"))
