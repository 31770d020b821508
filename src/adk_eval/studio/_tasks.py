"""Each session's background run, and which session the running code belongs to.

A session's ADK run (or `run_eval`) runs in its own task. The task knows its
session through a context variable, so the studio's plugins, called by ADK deep
inside the run, know whose model call or tool run they are handling.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable

__all__ = ["SessionTasks", "current_session"]

_CURRENT_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "adk_eval_studio_session", default=None
)


def current_session() -> str | None:
    """The studio session whose task is running this code (None outside the studio's runs)."""
    return _CURRENT_SESSION.get()


class SessionTasks:
    """At most one running task per session.

    Args:
        finished: Called with the session id when a task ends, however it ends.
    """

    def __init__(self, finished: Callable[[str], Awaitable[None]]) -> None:
        self._finished = finished
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def busy(self, session_id: str) -> bool:
        """Whether the session has a task running."""
        return session_id in self._tasks

    def spawn(self, session_id: str, coroutine: Awaitable[None]) -> None:
        """Runs `coroutine` as the session's task."""

        async def run() -> None:
            _CURRENT_SESSION.set(session_id)
            try:
                await coroutine
            finally:
                self._tasks.pop(session_id, None)
                await self._finished(session_id)

        self._tasks[session_id] = asyncio.ensure_future(run())

    def cancel_all(self) -> list[asyncio.Task[None]]:
        """Cancels every running task; returns them, to be awaited with `settle`."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        return tasks

    @staticmethod
    async def settle(tasks: list[asyncio.Task[None]]) -> None:
        """Waits for cancelled tasks to end (their errors are of no interest any more)."""
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
