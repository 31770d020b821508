"""A server adk-eval starts stops when told, not at its next tick, and lets a request finish."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from adk_eval._sandbox._serving import PromptServer

HOUR = 3600.0


class _App:
    """A bare ASGI app: ``/slow`` answers after `delay`; lifespan events are recorded."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.entered = threading.Event()
        self.release = asyncio.Event()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                self.events.append(message["type"])
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        if scope["path"] == "/slow":
            self.entered.set()
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": scope["path"].encode()})


@contextlib.contextmanager
def running(app: _App, tick: float) -> Iterator[tuple[PromptServer, threading.Thread, str]]:
    """`app` served by a `PromptServer` whose tick is `tick` seconds, in a thread."""
    server = PromptServer(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=30))
    server.tick_seconds = tick
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        threading.Event().wait(0.01)
    try:
        yield server, thread, url
    finally:
        server.stop()
        thread.join(30)
        sock.close()


def test_a_stop_ends_the_server_without_waiting_for_its_next_tick():
    app = _App()
    with running(app, tick=HOUR) as (server, thread, url):  # uvicorn's own would wait an hour
        with httpx.Client() as client:  # left open: an idle keep-alive connection
            assert client.get(url + "/fast").text == "/fast"
            server.stop()
            thread.join(30)
            assert not thread.is_alive()
        assert app.events == ["lifespan.startup", "lifespan.shutdown"]
        with pytest.raises(httpx.ConnectError):
            httpx.get(url + "/fast")


def test_a_request_in_flight_when_stopped_is_answered_before_the_server_ends():
    app = _App()
    with running(app, tick=HOUR) as (server, thread, url):
        answers: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: answers.append(httpx.get(url + "/slow")))
        asking.start()
        assert app.entered.wait(30)
        server.stop()
        thread.join(0.5)
        assert thread.is_alive()  # waiting for the request, as uvicorn does
        loop = server._loop
        assert loop is not None
        loop.call_soon_threadsafe(app.release.set)
        asking.join(30)
        thread.join(30)
        assert [answer.text for answer in answers] == ["/slow"]
        assert not thread.is_alive()
        assert app.events == ["lifespan.startup", "lifespan.shutdown"]


def test_a_stop_before_the_server_started_serving_still_ends_it():
    server = PromptServer(uvicorn.Config(_App(), log_level="warning"))
    server.tick_seconds = HOUR
    server.stop()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    thread.join(30)
    sock.close()
    assert not thread.is_alive()
