"""`EvalSessionService`: the sessions of a simulated conversation, without re-copying events.

ADK's `InMemorySessionService` deep-copies a whole session, every event, on every
`get_session`, and a runner fetches the session at the start of every invocation,
so each turn of a conversation costs more than the one before. This service gives
the same guarantee for less:

* what is stored is what was appended (as in ADK: an event appended during an
  invocation is the runner's own object until the invocation ends);
* a session handed out holds a *copy* of each stored event, made the first time
  the event is handed out and handed out again while it still equals the stored
  event. An agent that edits an event of an earlier turn in place (a redaction)
  edits that copy only: the stored event, the events metrics score and the next
  invocation's view keep the original, as with ADK's service. The check costs an
  equality test per event (about a third of a deep copy) and allocates nothing;
* its state is a deep copy, as ADK's service gives.

Everything else is `InMemorySessionService`'s behaviour, as ADK 2.13 defines it:
state deltas by prefix (``app:`` shared by the sessions of an app, ``user:`` by
those of a user, both merged into every copy handed out; ``temp:`` kept only in the
copy of the invocation that set it), an equal event appended twice kept once,
``last_update_time`` from the last event, `GetSessionConfig`'s
``num_recent_events`` and ``after_timestamp``, sessions listed without events,
`AlreadyExistsError` and `SessionNotFoundError`. ADK's in-memory service has no
stale-session check, and neither has this one. One instance serves one case, so
``app:`` and ``user:`` state is never shared between cases.

Code that is handed a session and is not the harness (a custom bridge transform,
a `ScriptedUserAgent` step function) gets `detached(session)`, a deep copy made
then, so it cannot change the conversation through a shared event.

A case's memory (`EvalCase.memory`: past sessions and remembered text) is
turned into the events ADK's memory service stores by `memory_events`, in the
service `new_memory_service` makes (`EvalCase.memory_service`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Literal

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event
from google.adk.memory import BaseMemoryService, InMemoryMemoryService
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.state import State
from google.genai import types

from ._errors import EvalSetupError

__all__ = ["MEMORY_SERVICES", "EvalSessionService", "MemoryItem", "MemoryServiceKind"]
__all__ += ["detached", "memory_events", "new_memory_service"]


MemoryItem = str | Session | Sequence[Event]
"""A remembered fact (text), a past ADK session, or the events of one."""


def memory_events(item: Any, index: int) -> tuple[str, list[Event]]:
    """The session id and events ADK's memory service stores for one memory item.

    Text becomes one event authored ``memory``; a session keeps its id and events;
    a list of events is a past session of its own.

    Raises:
        EvalSetupError: `item` is none of those.
    """
    if isinstance(item, str):
        content = types.Content(role="user", parts=[types.Part(text=item)])
        event = Event(author="memory", invocation_id=f"memory-{index}", content=content)
        return f"memory-{index}", [event]
    if isinstance(item, Session):
        return item.id, list(item.events)
    if isinstance(item, list | tuple) and all(isinstance(event, Event) for event in item):
        return f"memory-{index}", list(item)
    raise EvalSetupError(
        "a memory item is text, an ADK Session or a list of its Events, got "
        f"{type(item).__name__}: {item!r}"[:300]
    )


MemoryServiceKind = Literal["in_memory", "sqlite"]
"""ADK's memory service of a run: ``InMemoryMemoryService`` or ``SqliteMemoryService``."""

MEMORY_SERVICES: tuple[MemoryServiceKind, ...] = ("in_memory", "sqlite")


def new_memory_service(kind: MemoryServiceKind = "in_memory") -> BaseMemoryService:
    """A fresh, empty memory service of `kind` for one run.

    ``"sqlite"`` is ADK's `SqliteMemoryService` on a private in-memory database
    (nothing is written to disk, nothing is shared between runs); close it after
    the run.
    """
    if kind == "sqlite":
        from google.adk.memory import SqliteMemoryService  # imports aiosqlite

        return SqliteMemoryService(":memory:")
    return InMemoryMemoryService()


def detached(session: Session) -> Session:
    """A deep copy of `session`, for code that must not reach the live events."""
    return copy.deepcopy(session)


def _split(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(app, user, session)`` parts of a state delta, prefixes removed; ``temp:`` dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for key, value in state.items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            own[key] = value
    return app, user, own


class EvalSessionService(BaseSessionService):
    """In-memory sessions handed out as light copies (see the module doc).

    `run_eval` uses it for the main and the user-agent sessions of every case;
    it is a `BaseSessionService`, so a `Runner` of your own can use it too.
    """

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], dict[str, Session]] = {}
        self._app_state: dict[str, dict[str, Any]] = {}
        self._user_state: dict[tuple[str, str], dict[str, Any]] = {}
        self._event_ids: dict[int, dict[str, list[Event]]] = {}
        self._handed: dict[int, dict[int, Event]] = {}
        """Per stored session: id of a stored event -> the copy last handed out."""

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Stores a new session (its ``app:``/``user:`` state goes to the shared scopes)."""
        session_id = session_id.strip() if session_id else None
        sessions = self._sessions.setdefault((app_name, user_id), {})
        if session_id and session_id in sessions:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.")
        app, user, own = _split(state or {})
        if app:
            self._app_state.setdefault(app_name, {}).update(app)
        if user:
            self._user_state.setdefault((app_name, user_id), {}).update(user)
        session_id = session_id or platform_uuid.new_uuid()
        stored = Session(
            app_name=app_name,
            user_id=user_id,
            id=session_id,
            state=own,
            last_update_time=platform_time.get_time(),
        )
        sessions[session_id] = stored
        self._event_ids[id(stored)] = {}
        self._handed[id(stored)] = {}
        return self._copy(stored, stored.events)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """A light copy of the session (None when there is none)."""
        session_id = session_id.strip() if session_id else session_id
        stored = self._sessions.get((app_name, user_id), {}).get(session_id)
        if stored is None:
            return None
        events = stored.events
        if config is not None:
            if config.num_recent_events is not None:
                events = events[-config.num_recent_events :] if config.num_recent_events else []
            if config.after_timestamp is not None:
                index = len(events) - 1
                while index >= 0 and events[index].timestamp >= config.after_timestamp:
                    index -= 1
                events = events[index + 1 :]
        return self._copy(stored, events)

    def final(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> tuple[list[Event], dict[str, Any]]:
        """A session's stored events and a copy of its state, once its run is over.

        The events are the stored ones, not copies: nothing runs on the session
        any more, and the trace that gets them is the run's record of it.

        Raises:
            SessionNotFoundError: No such session is stored.
        """
        stored = self._sessions.get((app_name, user_id), {}).get(session_id)
        if stored is None:
            raise SessionNotFoundError(f"Session {session_id} not found.")
        return list(stored.events), self._copy(stored, []).state

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """The sessions of an app (of one user), without events, oldest update first."""
        found = [
            self._copy(stored, [])
            for (app, user), sessions in self._sessions.items()
            if app == app_name and user_id in (None, user)
            for stored in sessions.values()
        ]
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Forgets a session (nothing happens when there is none)."""
        stored = self._sessions.get((app_name, user_id), {}).pop(session_id.strip(), None)
        if stored is not None:
            self._event_ids.pop(id(stored), None)
            self._handed.pop(id(stored), None)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """A copy of the ``user:`` state of a user (prefixes removed)."""
        return copy.deepcopy(self._user_state.get((app_name, user_id), {}))

    async def append_event(self, session: Session, event: Event) -> Event:
        """Appends `event` to `session` (a copy handed out) and to the stored session.

        Raises:
            SessionNotFoundError: No such session is stored.
        """
        if event.partial:
            return event
        stored = self._sessions.get((session.app_name, session.user_id), {}).get(session.id)
        if stored is None:
            raise SessionNotFoundError(f"Session {session.id} not found.")
        same_id = self._event_ids[id(stored)].setdefault(event.id, [])
        if any(known == event for known in same_id):  # an equal re-delivery is kept once
            return event
        await super().append_event(session=session, event=event)
        session.last_update_time = event.timestamp
        same_id.append(event)
        if stored is not session:
            stored.events.append(event)
            stored.last_update_time = event.timestamp
        if event.actions and event.actions.state_delta:
            app, user, own = _split(event.actions.state_delta)
            if app:
                self._app_state.setdefault(stored.app_name, {}).update(app)
            if user:
                self._user_state.setdefault((stored.app_name, stored.user_id), {}).update(user)
            if own:
                stored.state.update(own)
        return event

    def _copy(self, stored: Session, events: list[Event]) -> Session:
        state = copy.deepcopy(stored.state) if stored.state else {}
        app = self._app_state.get(stored.app_name)
        for key, value in (copy.deepcopy(app) if app else {}).items():
            state[State.APP_PREFIX + key] = value
        shared = self._user_state.get((stored.app_name, stored.user_id))
        for key, value in (copy.deepcopy(shared) if shared else {}).items():
            state[State.USER_PREFIX + key] = value
        return stored.model_copy(
            update={"events": self._handed_out(stored, events), "state": state}
        )

    def _handed_out(self, stored: Session, events: list[Event]) -> list[Event]:
        """Copies of `events` for a session handed out (see the module doc)."""
        handed = self._handed.get(id(stored))
        if handed is None:  # a session listed without events
            return []
        copies = []
        for event in events:
            known = handed.get(id(event))
            if known is None or known != event:  # first handed out, or edited in place
                known = handed[id(event)] = event.model_copy(deep=True)
            copies.append(known)
        return copies
