"""A real ADK agent served over A2A (ADK's ``to_a2a``) on 127.0.0.1, its requests recorded."""

from __future__ import annotations

import json
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent


@dataclass
class Served:
    """An ADK agent served over A2A on 127.0.0.1: its base URL and each JSON-RPC request."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    stop: Callable[[], None] = lambda: None

    def contexts(self) -> list[str | None]:
        """The A2A context id of each message sent to it, in order."""
        return [r["params"]["message"].get("contextId") for r in self.requests]

    def parts(self) -> list[dict[str, Any]]:
        """The parts of each message sent to it, in order (first part of each)."""
        return [r["params"]["message"]["parts"][0] for r in self.requests]


@contextmanager
def served(agent: LlmAgent) -> Iterator[Served]:
    """`agent` served with ADK's `to_a2a` on a free port of 127.0.0.1, its requests recorded."""
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        app = to_a2a(agent, host="127.0.0.1", port=port)
    found = Served(f"http://127.0.0.1:{port}")

    async def recorded(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        messages, body = [], b""
        while not messages or messages[-1].get("more_body"):
            messages.append(await receive())
            body += messages[-1].get("body", b"")
        found.requests.append(json.loads(body))

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await app(scope, replay, send)

    server = uvicorn.Server(
        uvicorn.Config(recorded, log_level="warning", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()

    def stop() -> None:
        server.should_exit = True
        thread.join(30)

    found.stop = stop
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the A2A server did not start")
        time.sleep(0.02)
    try:
        yield found
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
