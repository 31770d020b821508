"""Change notifications: which sessions changed, for the page's event stream.

Every change gets the next version number. The page asks for the changes after
the last version it saw; a session view carries the version it was read at, so
the page knows when to fetch again.
"""

from __future__ import annotations

import asyncio

import anyio

__all__ = ["Notifier"]


class Notifier:
    """Counts changes per session and wakes whoever waits for one."""

    def __init__(self) -> None:
        self._version = 0
        self._versions: dict[str, int] = {}
        self._condition = asyncio.Condition()

    def version(self, session_id: str) -> int:
        """The version of a session's latest change (0 if it never changed)."""
        return self._versions.get(session_id, 0)

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
            if self._version <= since:
                with anyio.move_on_after(patience):
                    await self._condition.wait()
            changed = {sid: version for sid, version in self._versions.items() if version > since}
            return self._version, changed
