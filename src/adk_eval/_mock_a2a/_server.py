"""A mock A2A server: the remote-agent mocks of a file, served over HTTP on loopback.

An AGENTS.py file binds ``remote_mocks = {name: mock}`` at module level, as
``EvalCase(remote_mocks=...)`` does: a `RemoteMock`, a `RemoteReply`, a list
of replies or a function of the request's text. Each mock is served at its own
path, ``http://HOST:PORT/NAME/`` (its card at ``/NAME/.well-known/agent-card.json``),
by the same a2a-sdk application a case runs in process (`adk_eval._tools._a2a`),
so an agent outside this process gets the answers a case would. A request to
any other path is a 404: nothing answers for an agent the file does not mock.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from .._errors import EvalSetupError
from .._sandbox._loopback import refuse_remote
from .._suites._discovery import import_file, put_project_on_path
from .._tools._a2a import RemoteMock, remote_mock
from .._tools._a2a._served import Exchange, mock_routes
from ._log import ExchangeLog

__all__ = ["MockA2aServer", "load_mocks"]


def load_mocks(path: str | Path) -> dict[str, RemoteMock]:
    """The mocks an AGENTS.py file serves: its module-level `remote_mocks`.

    Raises:
        EvalSetupError: The file does not exist or import, lacks `remote_mocks`,
            or a value is no mock.
    """
    file = Path(path)
    if not file.is_file():
        raise EvalSetupError(f"{file} is not a file; give the Python file defining remote_mocks")
    put_project_on_path()
    module = import_file(file)
    declared = getattr(module, "remote_mocks", None)
    if not isinstance(declared, Mapping) or not declared:
        raise EvalSetupError(
            f"{file} defines no `remote_mocks`; a mock A2A agents file binds "
            "`remote_mocks = {name: RemoteMock...}` at module level"
        )
    mocks = {}
    for name, value in declared.items():
        mock = remote_mock(str(name), value)
        if not isinstance(name, str) or not name.isidentifier() or mock is None:
            raise EvalSetupError(
                f"{file}: remote_mocks[{name!r}] must be named by an identifier and be a "
                f"RemoteMock, a RemoteReply, a list of replies or a function; got {value!r}"
            )
        mocks[name] = mock
    return mocks


class MockA2aServer:
    """Serves remote-agent mocks over A2A, one per path (see the module doc).

    Args:
        mocks: The mocks, by remote agent name.
        log: The exchange log's path (None: not logged).
        on_exchange: Called with each exchange as it is answered.
    """

    def __init__(
        self,
        mocks: Mapping[str, RemoteMock],
        *,
        log: str | Path | None = None,
        on_exchange: Callable[[Exchange], None] | None = None,
    ):
        self.mocks = dict(mocks)
        self.exchanges: list[Exchange] = []
        """Every exchange answered so far, in order."""
        self._log = ExchangeLog(Path(log)) if log is not None else None
        self._on_exchange = on_exchange

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> MockA2aServer:
        """The server of an AGENTS.py file's `remote_mocks`."""
        return cls(load_mocks(path), **kwargs)

    async def _exchanged(self, exchange: Exchange) -> None:
        self.exchanges.append(exchange)
        if self._on_exchange is not None:
            self._on_exchange(exchange)
        if self._log is not None:
            await self._log.write(exchange)

    def app(self, base_url: str) -> Any:
        """The Starlette application, each mock's card advertising ``BASE_URL/NAME/``."""
        from starlette.applications import Starlette

        routes = [
            route
            for name, mock in self.mocks.items()
            for route in mock_routes(
                name, mock, f"{base_url.rstrip('/')}/{name}/", f"/{name}", self._exchanged
            )
        ]
        return Starlette(routes=routes)

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        allow_remote: bool = False,
        ready: Callable[[str], None] | None = None,
    ) -> None:
        """Serves the mocks at ``http://HOST:PORT/NAME/`` until cancelled or signalled.

        Raises:
            EvalSetupError: A non-loopback `host` without `allow_remote`.
            OSError: The port cannot be bound.
        """
        import socket

        import uvicorn

        from .._sandbox._serving import PromptServer

        refuse_remote(host, allow_remote)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            sock.close()
            raise OSError(errno.EADDRINUSE, f"{host}:{port}: {error.strerror}") from None
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound}"
        config = uvicorn.Config(self.app(url), log_level="warning", lifespan="off")
        closing = self.close

        class Server(PromptServer):  # on SIGTERM uvicorn re-raises before any ``finally``
            async def shutdown(self, sockets: Any = None) -> None:
                try:
                    await super().shutdown(sockets)
                finally:
                    await closing()

        server = Server(config)

        async def announce() -> None:
            while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, not an event
                await anyio.sleep(0.05)
            if ready is not None:
                ready(url)

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(announce)
                await server.serve(sockets=[sock])
                group.cancel_scope.cancel()
        finally:
            sock.close()
            await self.close()

    async def close(self) -> None:
        """Closes the exchange log (its sessions count as closed)."""
        if self._log is not None:
            await self._log.close()
