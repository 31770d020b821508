"""The tool runner: a session's tools run timed and cancellable, their errors become responses.

ADK would run a plain tool itself; the studio runs it instead (from a plugin's
``before_tool_callback``) so the page can show it running and the person can
cancel it. The response is what ADK would have made of it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from .._errors import StudioNotFoundError
from .._tools._mocks import normalize_response
from .._turns import tool_error_response
from ._notify import Notifier

__all__ = ["RunningTool", "ToolRunner"]


@dataclass
class RunningTool:
    """A tool call in progress.

    Attributes:
        call_id: The function call id.
        name: The tool.
        args: The call's arguments.
        started_at: When it started (epoch seconds).
        task: What runs it.
        cancel_requested: The person asked to cancel it.
    """

    call_id: str
    name: str
    args: dict[str, Any]
    started_at: float
    task: asyncio.Future[Any]
    cancel_requested: bool = False


class ToolRunner:
    """Runs tools for the sessions and keeps what is running, per session."""

    def __init__(self, notifier: Notifier) -> None:
        self._notifier = notifier
        self._running: dict[str, dict[str, RunningTool]] = {}

    async def run(
        self, session_id: str, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any]:
        """Runs a tool the way ADK would, timed and cancellable; errors become responses."""
        call_id = tool_context.function_call_id or uuid.uuid4().hex
        task = asyncio.ensure_future(tool.run_async(args=args, tool_context=tool_context))
        running = RunningTool(call_id, tool.name, dict(args), time.time(), task)
        self._running.setdefault(session_id, {})[call_id] = running
        await self._notifier.changed(session_id)
        try:
            return normalize_response(await task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if running.cancel_requested and not (current and current.cancelling()):
                elapsed = time.time() - running.started_at
                return tool_error_response(
                    f"cancelled by the person after {elapsed:.1f}s", "ToolCancelled"
                )
            raise
        except Exception as error:
            return tool_error_response(error)
        finally:
            self._running.get(session_id, {}).pop(call_id, None)
            await self._notifier.changed(session_id)

    def cancel(self, session_id: str, call_id: str) -> None:
        """Cancels a running tool call (it answers with a ``ToolCancelled`` error).

        Raises:
            StudioError: No such call is running in the session (404).
        """
        running = self._running.get(session_id, {}).get(call_id)
        if running is None:
            raise StudioNotFoundError(f"no running tool call {call_id} in session {session_id}")
        running.cancel_requested = True
        running.task.cancel()

    def running(self, session_id: str) -> list[dict[str, Any]]:
        """The session's running tool calls, as the page shows them."""
        return [
            {"call_id": r.call_id, "name": r.name, "args": r.args, "started_at": r.started_at}
            for r in self._running.get(session_id, {}).values()
        ]
