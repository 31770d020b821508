"""``python -m adk_eval.fake_provider``: serve text replies until interrupted."""

from __future__ import annotations

import argparse
import socket
from collections.abc import Sequence

from .._errors import EvalSetupError
from . import __doc__ as documentation
from ._quota import Quota
from ._replies import FakeReply, tool_reply
from ._server import FakeProviderServer


def parser() -> argparse.ArgumentParser:
    """The command line's options."""
    options = argparse.ArgumentParser(
        prog="python -m adk_eval.fake_provider",
        description=(documentation or "").splitlines()[0],
    )
    options.add_argument("--port", type=int, default=0)
    options.add_argument("--delay", type=float, default=0.0, help="seconds per answer")
    options.add_argument(
        "--jitter", type=float, default=0.0, help="spread of the delay: 0.5 is delay x [0.5, 1.5]"
    )
    options.add_argument("--calls", type=int, default=1, help="tool calls before the text answer")
    options.add_argument("--rpm", type=int, help="requests per window and model (default: none)")
    options.add_argument("--tpm", type=int, help="tokens per window and model (default: none)")
    options.add_argument(
        "--window", type=float, default=60.0, help="seconds of the quota's window (default: 60)"
    )
    options.add_argument(
        "--error-rate", type=float, default=0.0, help="fraction of requests failed with a 503"
    )
    options.add_argument("--seed", type=int, default=0, help="seed of the jitter and the errors")
    return options


def server_of(argv: Sequence[str] | None = None) -> tuple[FakeProviderServer, int]:
    """The server the command line describes, and the port to serve it on."""
    options = parser()
    args = options.parse_args(argv)
    script: list[FakeReply | str] = [
        tool_reply("lookup", {"key": f"k{i}"}) for i in range(args.calls)
    ] + ["done"]
    try:
        quota = None
        if args.rpm is not None or args.tpm is not None:
            quota = Quota(requests=args.rpm, tokens=args.tpm, window=args.window)
        server = FakeProviderServer(
            script,
            delay=args.delay,
            jitter=args.jitter,
            quota=quota,
            error_rate=args.error_rate,
            seed=args.seed,
        )
    except EvalSetupError as error:
        options.error(str(error))
    return server, args.port


def main(argv: Sequence[str] | None = None) -> None:
    """Serves until interrupted, after printing the server's URL."""
    import uvicorn

    server, port = server_of(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", port))
    sock.listen(4096)  # connections wait in the backlog, not refused, until uvicorn serves
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(
        uvicorn.Config(server.app(), log_level="warning", access_log=False, backlog=4096)
    ).run(sockets=[sock])


if __name__ == "__main__":
    main()
