"""The ``mock-mcp`` command: serve a tools file's mocks as an MCP server (stdio or HTTP).

The server (`adk_eval.mock_mcp`) and the `mcp` SDK are imported when the command
runs, so ``adk-eval --help`` loads neither. Over stdio, stdout is the MCP wire:
everything the command says goes to stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .._seeds import DEFAULT_SEED
from ._common import fail, host_and_port

__all__ = ["mock_mcp"]


def _say(message: str) -> None:
    click.echo(f"adk-eval mock-mcp: {message}", err=True)
    sys.stderr.flush()


@click.command(name="mock-mcp")
@click.argument("tools_file", metavar="TOOLS.py", type=click.Path(path_type=Path))
@click.option("--stdio", is_flag=True, help="Serve one client over stdin/stdout.")
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp (loopback only; port 0: a free one).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="With --http: listen on a non-loopback address (the mocks answer anyone).",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Log every call to this SQLite session store, one session per connection "
    "(adk-eval score sqlite:///PATH).",
)
@click.option(
    "--seed",
    type=int,
    default=DEFAULT_SEED,
    show_default=True,
    help="The seed of the mocks' faults and injections.",
)
def mock_mcp(
    tools_file: Path,
    stdio: bool,
    address: str | None,
    allow_remote: bool,
    log_path: Path | None,
    seed: int,
) -> None:
    """Serve TOOLS.py's mocks as an MCP server, for agents outside this process or ADK.

    TOOLS.py binds `tools` (functions, ADK tools, ToolsetMocks: what tools/list
    shows) and `tool_mocks` ({name: ToolMock}: what answers). A call to any other
    tool is an error result naming it; each call is printed on stderr and, with
    --log, stored for `adk-eval score`.
    """
    import anyio

    from .._errors import AdkEvalError

    if stdio == (address is not None):
        fail("give exactly one transport: --stdio, or --http 127.0.0.1:PORT")
    if allow_remote and address is None:
        fail("--allow-remote goes with --http HOST:PORT")
    from .._sandbox._loopback import refuse_remote
    from ..mock_mcp._server import MockMcpServer, echo_call

    host, port = ("", 0)
    if address is not None:
        host, port = host_and_port(address, "--http", "127.0.0.1:8765")
    try:
        if address is not None:
            refuse_remote(host, allow_remote)
        server = MockMcpServer.from_file(tools_file, log=log_path, seed=seed, on_call=echo_call)
        server.lowlevel()  # the mcp SDK is there, before anything listens
    except AdkEvalError as error:
        fail(str(error))
    served = ", ".join(server.served)
    logged = f"; calls logged to {log_path}" if log_path is not None else ""
    if stdio:
        _say(f"serving {served} over stdio{logged}")
        anyio.run(server.serve_stdio)
        return

    def ready(url: str) -> None:
        _say(f"serving {served} at {url}{logged} (Ctrl-C stops)")

    try:
        anyio.run(lambda: server.serve_http(host, port, allow_remote=allow_remote, ready=ready))
    except OSError as error:
        fail(f"cannot listen on {address}: {error.strerror or error}")
    except KeyboardInterrupt:
        pass
