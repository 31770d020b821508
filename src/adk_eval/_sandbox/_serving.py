"""How every uvicorn server adk-eval starts stops: at once when told, gracefully when busy.

uvicorn's server looks at ``should_exit`` once per tick (every 0.1 s), and its
shutdown then pauses 0.1 s for open connections to wind down even when there
is none: about 0.15 s of nothing per stop. A test that starts a fake provider,
a studio or a mock server pays it every time (the project's own tests stopped
132 servers in one run, 13 s of shutdowns). `PromptServer` wakes as soon as
`PromptServer.stop` is called, closes idle keep-alive connections, and skips
the pause when no connection or request is left; with a request in flight, the
shutdown is uvicorn's own (it finishes within the graceful timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import FrameType
from typing import Any

import uvicorn

__all__ = ["PromptServer"]


class PromptServer(uvicorn.Server):
    """A `uvicorn.Server` that stops at once when told (`stop`), from any thread."""

    tick_seconds: float = 0.1
    """How often the date header is renewed (uvicorn also reads its exit flag then)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    def stop(self) -> None:
        """Asks the server to shut down now; safe from any thread, and more than once."""
        self.should_exit = True
        self._wake_up()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Acts on SIGINT and SIGTERM as uvicorn does, but at once."""
        super().handle_exit(sig, frame)
        self._wake_up()

    def _wake_up(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the server's loop has ended
                loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        """Ticks as uvicorn does, but a `stop` ends the wait for the next tick."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        if self.should_exit:  # stopped before the loop existed
            self._wake.set()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.tick_seconds)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stops listening and closes idle connections; waits as uvicorn does only for the rest."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state: Any = self.server_state
        for connection in list(state.connections):
            connection.shutdown()  # an idle keep-alive connection closes now
        for _ in range(3):  # its close is reported a loop iteration or two later
            await asyncio.sleep(0)
        if state.connections or state.tasks:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()
