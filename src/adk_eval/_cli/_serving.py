"""What the commands that serve a page share: ``--host``, ``--port``, ``--token``, serving.

A ``--host`` that is not loopback is refused (one line) unless ``--allow-remote``
is given, before anything is read or started: the rule every server of
adk-eval follows (`adk_eval._sandbox._loopback`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
from rich.console import Console

from ._common import fail

__all__ = ["checked_host", "serve", "server_options"]


def server_options(port: int, token_env: str) -> Callable[[Any], Any]:
    """``--host``, ``--port``, ``--token`` and ``--allow-remote`` of a command serving a page."""

    def add(function: Any) -> Any:
        options = [
            click.option(
                "--host", default="127.0.0.1", show_default=True, help="Interface to listen on."
            ),
            click.option(
                "--port",
                type=click.IntRange(0, 65535),
                default=port,
                show_default=True,
                help="0 picks a free port.",
            ),
            click.option("--token", envvar=token_env, help="Access token (random by default)."),
            click.option(
                "--allow-remote",
                is_flag=True,
                help="Listen on a --host that is not loopback (anyone who reaches it and has "
                "the token can use it).",
            ),
        ]
        for option in reversed(options):
            function = option(function)
        return function

    return add


def checked_host(host: str, allow_remote: bool) -> None:
    """Fails the command with one line for a `host` that is not loopback, unless `allow_remote`."""
    from .._errors import EvalSetupError
    from .._sandbox._loopback import refuse_remote

    try:
        refuse_remote(host, allow_remote)
    except EvalSetupError as error:
        fail(str(error))


def serve(
    out: Console, host: str, port: int, start: Callable[[Callable[[str], None]], None]
) -> None:
    """Runs `start(announce)` (a server until Ctrl-C); a port it cannot bind is one error line."""

    def announce(url: str) -> None:
        out.print(f"open {url}")
        sys.stdout.flush()

    try:
        start(announce)
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error}")
