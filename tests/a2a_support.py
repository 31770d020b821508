"""A mock A2A server (`MockA2aServer`) on a free port of 127.0.0.1, for tests that call it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from adk_eval._mock_a2a import MockA2aServer


@dataclass
class Served:
    """A served mock server: its base URL and every request it got, ``(method, path)``."""

    url: str
    server: MockA2aServer
    requests: list[tuple[str, str]] = field(default_factory=list)

    def card_url(self, name: str) -> str:
        return f"{self.url}/{name}/.well-known/agent-card.json"


@contextmanager
def served(server: MockA2aServer) -> Iterator[Served]:
    """`server`'s application under uvicorn on 127.0.0.1 (a thread), stopped on exit."""
    import uvicorn

    from adk_eval._sandbox._serving import PromptServer

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    found = Served(url, server)
    app = server.app(url)

    async def counted(scope, receive, send):
        if scope["type"] == "http":
            found.requests.append((scope["method"], scope["path"]))
        await app(scope, receive, send)

    config = uvicorn.Config(counted, log_level="warning", lifespan="off")
    running = PromptServer(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the mock A2A server did not start")
        time.sleep(0.02)
    try:
        yield found
    finally:
        running.stop()
        thread.join(30)
        sock.close()
