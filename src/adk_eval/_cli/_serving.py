"""What the commands that serve a page share: ``--host``, ``--port``, ``--token``, as `Serving`.

A ``--host`` that is not loopback is refused (one line) unless ``--allow-remote``
is given, before anything is read or started: the rule every server of
adk-eval follows (`adk_eval._sandbox._loopback`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console

from ._common import fail, grouped

__all__ = ["Serving", "server_options"]


@dataclass(frozen=True)
class Serving:
    """Where a command serves its page, as given on its command line.

    Attributes:
        host: The interface to listen on.
        port: The port (0: a free one).
        token: The access token (None: the server's own).
        allow_remote: Whether a `host` that is not loopback may be used.
    """

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    allow_remote: bool = False

    def check(self) -> None:
        """Fails the command with one line for a `host` that is not loopback, unless allowed."""
        from .._errors import EvalSetupError
        from .._sandbox._loopback import refuse_remote

        try:
            refuse_remote(self.host, self.allow_remote)
        except EvalSetupError as error:
            fail(str(error))

    def serve(self, out: Console, start: Callable[..., None]) -> None:
        """Runs ``start(host=..., port=..., token=..., allow_remote=..., announce=...)``.

        `start` is a server that runs until Ctrl-C; `announce` prints its URL. A port
        it cannot bind is one error line.
        """

        def announce(url: str) -> None:
            out.print(f"open {url}")
            sys.stdout.flush()

        try:
            start(
                host=self.host,
                port=self.port,
                token=self.token,
                allow_remote=self.allow_remote,
                announce=announce,
            )
        except OSError as error:
            fail(f"cannot listen on {self.host}:{self.port}: {error}")


def server_options(port: int, token_env: str) -> Callable[[Any], Any]:
    """``--host``, ``--port``, ``--token`` and ``--allow-remote``, handed over as ``serving``."""
    return grouped(
        "serving",
        Serving,
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
    )
