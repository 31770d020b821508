"""Change notifications: which sessions changed, for the page's event stream.

Every change gets the next version number. The page asks for the changes after
the last version it saw; a session view carries the version it was read at, so
the page knows when to fetch again.

Versions only grow, across restarts too: a studio starts counting at the time it
started, in microseconds (above every version an earlier run reached, unless it
made more than a million changes a second), and a session it has not changed
yet is at that starting version. So a page still open on a session from before a
restart never waits for a version the new studio will not reach. The starting
version is also the studio's `boot`: the page forgets what it knew of an
earlier one when it sees a new one.
"""

from __future__ import annotations

import asyncio
import time

import anyio

__all__ = ["Notifier"]


class Notifier:
    """Counts changes per session and wakes whoever waits for one."""

    def __init__(self) -> None:
        self.boot = time.time_ns() // 1_000
        """The version this studio started at (identifies this run of it)."""
        self._version = self.boot
        self._versions: dict[str, int] = {}
        self._condition = asyncio.Condition()

    def version(self, session_id: str) -> int:
        """The version of a session's latest change (`boot` if it has not changed since)."""
        return self._versions.get(session_id, self.boot)

    async def changed(self, session_id: str) -> None:
        """Tells listeners that a session changed."""
        async with self._condition:
            self._version += 1
            self._versions[session_id] = self._version
            self._condition.notify_all()

    async def wait_for_change(self, since: int, patience: float) -> tuple[int, dict[str, int]]:
        """Waits until something changed after version `since` (or `patience` seconds).

        Returns:
            The current version, and each session changed since `since` with
            the version of its latest change.
        """
        async with self._condition:
            if since > self._version:  # a page from before a restart: all it may have missed
                since = 0
            if self._version <= since:
                with anyio.move_on_after(patience):
                    await self._condition.wait()
            changed = {sid: version for sid, version in self._versions.items() if version > since}
            return self._version, changed
