"""Serving one client over stdio, so that every call read before stdin closed is answered.

A client may write its whole conversation and close its end at once
(``printf '...' | adk-eval mock-mcp TOOLS.py --stdio``). The `mcp` SDK's
dispatcher cancels the handlers still running when its read stream ends, so
those calls would be answered by their mocks and logged, and their results
never written. Here the end of stdin reaches the server only once every
request read has had its response (or error) written, or was cancelled by the
client (``notifications/cancelled``): the server then ends as it would have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

__all__ = ["serve_stdio_streams"]

Run = Callable[[Any, Any], Awaitable[None]]
"""Serves one connection over a (read, write) pair of streams: `Server.run` bound to its options."""


class _Pending:
    """The ids of the requests read whose response has not been written yet."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.settled = anyio.Event()

    def read(self, message: Any) -> None:
        method = getattr(message, "method", None)
        request_id = getattr(message, "id", None)
        if method is not None and request_id is not None:  # a request of the client's
            self.ids.add(request_id)
        elif method == "notifications/cancelled":  # it will get no answer
            params = getattr(message, "params", None) or {}
            self._drop(params.get("requestId", params.get("request_id")))

    def written(self, message: Any) -> None:
        if getattr(message, "method", None) is None:  # a response or an error, not a request
            self._drop(getattr(message, "id", None))

    def _drop(self, request_id: Any) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.settled.set()
            self.settled = anyio.Event()

    async def wait(self) -> None:
        while self.ids:
            await self.settled.wait()


async def _relay_in(source: Any, sink: ObjectSendStream[Any], pending: _Pending) -> None:
    """Passes stdin's messages on; at its end, waits for the answers before passing the end on."""
    async with sink:
        async for item in source:
            message = getattr(item, "message", None)
            if message is not None:
                pending.read(message)
            await sink.send(item)
        await pending.wait()


async def _relay_out(source: ObjectReceiveStream[Any], sink: Any, pending: _Pending) -> None:
    """Passes the server's messages on to stdout, noting each request answered."""
    async with sink:
        async for item in source:
            await sink.send(item)
            pending.written(item.message)


async def serve_stdio_streams(run: Run) -> None:
    """Runs `run` over this process's stdin and stdout until stdin closes and all is answered."""
    from mcp.server.stdio import stdio_server

    pending = _Pending()
    to_server, server_reads = anyio.create_memory_object_stream[Any]()
    server_writes, from_server = anyio.create_memory_object_stream[Any]()
    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as group:
        group.start_soon(_relay_in, read_stream, to_server, pending)
        relayed_out = anyio.Event()

        async def relay_out() -> None:
            await _relay_out(from_server, write_stream, pending)
            relayed_out.set()

        group.start_soon(relay_out)
        try:
            await run(server_reads, server_writes)
        finally:
            server_writes.close()  # the server closes it too; closing twice is harmless
        await relayed_out.wait()
        group.cancel_scope.cancel()  # stdin's relay, if the server ended before stdin did
