"""What a source of stored sessions is: `SessionSource`, and what every source shares.

Every source reads its sessions once, in `SessionSource.read`, each with what the
source does not carry of it (its ``lacks``: a trace's ``state``, say); `sessions`
is the same without them (`SourceBase` gives it to every source). A session whose
rows cannot be read is handed to the ``unreadable`` callback and left out;
without one, `sessions` stops the read with one line naming it. What every
reader gets is built from `read` by the stream of stored conversations
(`_stored`). `GivenSessions` is a source of sessions already at hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Protocol

from google.adk.sessions import Session

from ._files import OnUnreadable, refuse
from ._filter import SessionFilter

__all__ = ["GivenSessions", "SessionSource", "SourceBase", "close_read"]


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

    def trace_of(self, key: str) -> str | None:
        """The OpenTelemetry trace id of the session `key` read last, if the source has one."""
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


class SourceBase:
    """What every source shares: `sessions` is `read` without the lacks; nothing to note.

    A source defines `description`, `check` and `read`.
    """

    description: str

    @property
    def notes(self) -> Sequence[str]:
        """What the source left out or does not carry: nothing, unless it says otherwise."""
        return ()

    def read(
        self, filters: SessionFilter, unreadable: OnUnreadable
    ) -> AsyncIterator[tuple[Session, frozenset[str]]]:
        """The sessions that pass `filters`, each with what this source does not carry of it."""
        raise NotImplementedError

    def trace_of(self, key: str) -> str | None:
        """None: a session store keeps no trace id (ADK's sessions carry none)."""
        return None

    async def sessions(
        self, filters: SessionFilter | None = None, *, unreadable: OnUnreadable | None = None
    ) -> AsyncIterator[Session]:
        """The sessions that pass `filters` (all by default), with events and merged state.

        A session whose rows cannot be read goes to `unreadable` and is left out;
        without it, the read stops there (`EvalSetupError`, one line naming it).
        """
        read = self.read(filters or SessionFilter(), unreadable or refuse(self.description))
        try:
            async for session, _ in read:
                yield session
        finally:
            await close_read(read)


async def close_read(read: AsyncIterator[object]) -> None:
    """Closes a source's read now, not when it is collected (a store's connections with it).

    A read left early (a break, a cancelled task) would otherwise hold its
    connections open until the garbage collector finalizes it, on whatever loop
    and in whatever test runs then.
    """
    aclose = getattr(read, "aclose", None)
    if aclose is not None:
        await aclose()


class GivenSessions(SourceBase):
    """Sessions handed over in memory, read as a source is (they lack nothing).

    Args:
        sessions: The sessions, in the order they are read.
        description: What they are, for messages.
    """

    def __init__(self, sessions: Iterable[Session], description: str = "the sessions given"):
        self._sessions, self.description = sessions, description

    async def check(self) -> None:
        """Nothing to check: they are at hand."""

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
