"""One `Pacer` for a suite's processes: served by the parent, asked by its workers.

A suite on worker processes paces its model calls with one pacer, the parent's
(the `Workers` executor's), so that the processes together stay within a
provider's quota and a 429 that one of them meets blocks the key for all of them:

* `serve_pacer(pacer)` serves it on a Unix socket in a private folder (mode
  0700, removed by `SharedPacer.close`), from an event loop of its own in a
  daemon thread: the parent's own loop may be busy, or not running yet. The
  parent hands the socket's address to its workers in their environment
  (`PACER_ENV`), the one thing about model calls that crosses that way.
* `PacerClient(address)`, a worker's side, is a `Pacer` over that socket, with
  an event loop of its own in a daemon thread: any event loop of the worker may
  wait on it, and `release` never blocks its caller.
* On Ray, `PacerActor` holds the suite's pacer and `RayPacerClient` asks it
  (`_ray`); `_wire` is what both ways share.

The protocol is newline-delimited JSON, one object a line; each request carries
the client's ``id``:

* ``{"op": "acquire", "id": 7, "key": "...", "limit": {"rpm": 300, "tpm": null,
  "window": 1.0} or null, "tokens": 0}`` is answered ``{"id": 7, "waited": 0.4}``
  once the call may go (the server waits in `Pacer.acquire`, in order);
* ``{"op": "cancel", "id": 7}``: the client gave up (also when a grant reaches it
  after it did); the wait ends, or the grant is released;
* ``{"op": "release", "id": 7, "tokens": 812 or null, "failure": {"kind":
  "rate_limit", "retry_after": 2.0, "status": 429} or null}``: not answered;
* ``{"op": "state", "id": 8, "key": "..."}`` is answered ``{"id": 8, "state":
  {"concurrency": null (unlimited), "in_flight": 0, "blocked_for": 0.0,
  "rate_limited": 0}}``.

A connection that closes gives up its waits and releases its grants. A client
whose server is gone (refused, or closed) paces on a `LocalPacer` of its own
from then on and says so once, when it first needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Hashable
from typing import Any

from ._limits import RateLimit
from ._pacer import Grant, KeyState, LocalPacer, Pacer
from ._wire import UNKNOWN_STATE, Ledger, RemoteGrant, RemotePacer, limit_data, state_of

__all__ = ["PACER_ENV", "PacerClient", "SharedPacer", "handed_pacer", "serve_pacer"]

PACER_ENV = "ADK_EVAL_PACER"
"""The address of the pacer a worker process shares with its parent (set by the parent)."""

_CONNECT_SECONDS = 5.0
"""How long a client waits to connect, or for an answer to `state`."""

Message = dict[str, Any]


class SharedPacer:
    """A pacer served to other processes of this machine (see `serve_pacer`).

    Args:
        pacer: The pacer to serve.

    Attributes:
        pacer: The pacer served.
        address: The path of its Unix socket.
    """

    def __init__(self, pacer: Pacer) -> None:
        self.pacer = pacer
        self._folder = tempfile.mkdtemp(prefix="adk-eval-pacer-")
        os.chmod(self._folder, 0o700)
        self.address = os.path.join(self._folder, "pacer.sock")
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: OSError | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._run, name="adk-eval-pacer", daemon=True)

    def start(self) -> SharedPacer:
        """Starts serving; returns self.

        Raises:
            OSError: The socket cannot be served (no Unix sockets here).
        """
        self._thread.start()
        self._ready.wait(_CONNECT_SECONDS)
        if self._error is not None or not self._ready.is_set():
            self.close()
            raise self._error or OSError(f"the pacer could not be served at {self.address}")
        return self

    def close(self) -> None:
        """Stops serving (clients still connected go on alone) and removes the socket's folder."""
        stop = self._stop
        if stop is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # its loop ended already
                self._loop.call_soon_threadsafe(stop.set)
            self._thread.join(_CONNECT_SECONDS)
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> SharedPacer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._ready.set()
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        try:
            server = await asyncio.start_unix_server(self._connection, path=self.address)
        except (OSError, NotImplementedError) as error:
            self._error = OSError(f"the pacer could not be served at {self.address}: {error}")
            return
        self._ready.set()
        await self._stop.wait()
        server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client: its requests, until it closes (then its waits and grants end)."""
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        ledger = Ledger(self.pacer)
        answering: set[asyncio.Task[None]] = set()

        def send(message: Message) -> None:
            if not writer.is_closing():
                writer.write(json.dumps(message).encode() + b"\n")

        try:
            while line := await reader.readline():
                ledger.handle(json.loads(line), send, answering)
        except (OSError, ValueError, asyncio.CancelledError):
            pass  # a client gone, a request cut short, or the server closing: the same end
        finally:
            ledger.close()
            for waiting in answering:
                waiting.cancel()
            writer.close()
            self._connections.discard(task)


def serve_pacer(pacer: Pacer) -> SharedPacer:
    """Serves `pacer` to this machine's other processes until `SharedPacer.close`.

    Raises:
        OSError: The socket cannot be served (no Unix sockets here).
    """
    return SharedPacer(pacer).start()


def handed_pacer() -> Pacer:
    """The pacer this process's parent hands it (a client of its `PACER_ENV`), else its own.

    A worker process asks once, as it sets up: the address is the one thing
    about model calls that crosses into a worker through its environment.
    """
    address = os.environ.get(PACER_ENV)
    return PacerClient(address) if address else LocalPacer()


class PacerClient(RemotePacer):
    """A worker's side of a shared pacer: a `Pacer` over its socket (see the module doc).

    Args:
        address: The socket's path (`SharedPacer.address`).

    Attributes:
        address: The socket's path.
    """

    def __init__(self, address: str) -> None:
        super().__init__()
        self.address = address
        self.sharing = f"the pacer this suite's processes share ({address})"
        self._ids = itertools.count(1)
        self._waiting: dict[int, Callable[[Message | None], None]] = {}
        self._lost = False
        self._writer: asyncio.StreamWriter | None = None
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        sock: socket.socket | None = None
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(_CONNECT_SECONDS)
            sock.connect(address)
            sock.setblocking(False)
        except (OSError, AttributeError):  # the parent is gone, or no Unix sockets here
            if sock is not None:
                sock.close()
            self._lost = True
            self._loop.close()
            return
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(sock, ready), name="adk-eval-pacer", daemon=True
        )
        self._thread.start()
        if not ready.wait(_CONNECT_SECONDS):
            self._lose()

    def state(self, key: str) -> KeyState:
        """What the shared pacer learned of `key` (nothing known: an unlimited key)."""
        if self._lost:
            return self.alone().state(key) if self.is_alone else UNKNOWN_STATE
        if threading.current_thread() is self._thread:
            return UNKNOWN_STATE
        done = threading.Event()
        answers: list[Message | None] = []

        def answer(message: Message | None) -> None:
            answers.append(message)
            done.set()

        ident = next(self._ids)
        if not self._register(ident, answer):
            return UNKNOWN_STATE
        self._post({"op": "state", "id": ident, "key": key})
        if not done.wait(_CONNECT_SECONDS):
            with self._lock:
                self._waiting.pop(ident, None)
            return UNKNOWN_STATE
        message = answers[0]
        return state_of(message["state"]) if message is not None else UNKNOWN_STATE

    async def acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant:
        """Waits until the server says a call on `key` may go; cancelling gives up its turn."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Message | None] = loop.create_future()
        ident = next(self._ids)

        def settle(message: Message | None) -> None:  # on the caller's loop
            if not future.done():
                future.set_result(message)
            elif message is not None:  # the caller gave up meanwhile
                self._post({"op": "cancel", "id": ident})

        def answer(message: Message | None) -> None:  # on this client's thread
            try:
                loop.call_soon_threadsafe(settle, message)
            except RuntimeError:  # the caller's loop is closed: nobody waits any more
                if message is not None:
                    self._post({"op": "cancel", "id": ident})

        if not self._register(ident, answer):
            return await self.alone().acquire(key, limit, tokens)
        request = {"key": key, "limit": limit_data(limit), "tokens": tokens}
        self._post({"op": "acquire", "id": ident, **request})
        try:
            message = await future
        except BaseException:
            self._give_up(ident, future)
            raise
        if message is None:  # the server is gone
            return await self.alone().acquire(key, limit, tokens)
        return RemoteGrant(key, [math.inf, tokens], float(message["waited"]), ident)

    def send_release(
        self, ident: Hashable, tokens: float | None, failure: dict[str, Any] | None
    ) -> None:
        """Sends the release from this client's thread (see `RemotePacer.release`)."""
        self._post({"op": "release", "id": ident, "tokens": tokens, "failure": failure})

    def _give_up(self, ident: int, future: asyncio.Future[Message | None]) -> None:
        """The caller stopped waiting: the server ends the wait, or releases what it granted."""
        with self._lock:
            waiting = self._waiting.pop(ident, None) is not None
        granted = future.done() and not future.cancelled() and future.result() is not None
        if waiting or granted:
            self._post({"op": "cancel", "id": ident})

    def _register(self, ident: int, answer: Callable[[Message | None], None]) -> bool:
        with self._lock:
            if self._lost:
                return False
            self._waiting[ident] = answer
            return True

    def _post(self, message: Message) -> None:
        """Sends `message` from this client's thread (nothing when the server is gone)."""
        if self._lost:
            return
        line = json.dumps(message).encode() + b"\n"
        with contextlib.suppress(RuntimeError):  # its loop is closed: the server is gone
            self._loop.call_soon_threadsafe(self._write, line)

    def _write(self, line: bytes) -> None:
        writer = self._writer
        if writer is not None and not writer.is_closing():
            writer.write(line)

    def _run(self, sock: socket.socket, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._read(sock, ready))
        finally:
            self._lose()
            ready.set()
            self._loop.close()

    async def _read(self, sock: socket.socket, ready: threading.Event) -> None:
        """Hands each answer to whoever waits for it, until the server is gone."""
        try:
            reader, self._writer = await asyncio.open_unix_connection(sock=sock)
            ready.set()
            while line := await reader.readline():
                message = json.loads(line)
                with self._lock:
                    answer = self._waiting.pop(message.get("id"), None)
                if answer is not None:  # else a wait given up: the cancel releases it
                    answer(message)
        except (OSError, ValueError):
            pass  # the server closed, or said something cut short: the same end
        finally:
            if self._writer is not None:
                self._writer.close()

    def _lose(self) -> None:
        """The server is gone: every waiter hears it (and then paces alone)."""
        with self._lock:
            self._lost = True
            waiting, self._waiting = self._waiting, {}
        for answer in waiting.values():
            answer(None)
