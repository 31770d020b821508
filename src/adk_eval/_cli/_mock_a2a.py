"""The ``mock-a2a`` command: serve an agents file's remote-agent mocks over A2A (HTTP).

The server (`adk_eval._mock_a2a`), the a2a SDK and uvicorn are imported when the
command runs, so ``adk-eval --help`` loads none of them.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._common import fail, host_and_port

__all__ = ["mock_a2a"]


@click.command(name="mock-a2a")
@click.argument("agents_file", metavar="AGENTS.py", type=click.Path(path_type=Path))
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    required=True,
    help="Serve each mock at http://HOST:PORT/NAME/ (loopback only; port 0: a free one).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Listen on a non-loopback address (the mocks answer anyone).",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Log every exchange to this SQLite session store, one session per A2A context "
    "(adk-eval score sqlite:///PATH --app mock-a2a).",
)
def mock_a2a(agents_file: Path, address: str, allow_remote: bool, log_path: Path | None) -> None:
    """Serve AGENTS.py's remote-agent mocks over A2A, for agents outside this process.

    AGENTS.py binds `remote_mocks` ({name: RemoteMock, a list of replies, a
    function of the request}). Each mock's card is at
    /NAME/.well-known/agent-card.json and its JSON-RPC endpoint at /NAME/; each
    exchange is printed on stderr and, with --log, stored for `adk-eval score`.
    """
    import anyio

    from .._errors import AdkEvalError
    from .._mock_a2a._server import MockA2aServer
    from .._sandbox._loopback import refuse_remote

    host, port = host_and_port(address, "--http", "127.0.0.1:8766")

    def echo(exchange: object) -> None:
        reply = getattr(exchange, "reply", None)
        state = getattr(reply, "state", "")
        click.echo(
            f"adk-eval mock-a2a: {getattr(exchange, 'agent', '')} answered ({state})", err=True
        )

    try:
        refuse_remote(host, allow_remote)
        server = MockA2aServer.from_file(agents_file, log=log_path, on_exchange=echo)
    except AdkEvalError as error:
        fail(str(error))
    logged = f"; exchanges logged to {log_path}" if log_path is not None else ""

    def ready(url: str) -> None:
        served = ", ".join(f"{url}/{name}/" for name in server.mocks)
        click.echo(f"adk-eval mock-a2a: serving {served}{logged} (Ctrl-C stops)", err=True)

    try:
        anyio.run(lambda: server.serve_http(host, port, allow_remote=allow_remote, ready=ready))
    except OSError as error:
        fail(f"cannot listen on {address}: {error.strerror or error}")
    except KeyboardInterrupt:
        pass
