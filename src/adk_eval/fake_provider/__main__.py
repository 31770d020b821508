"""``python -m adk_eval.fake_provider``: serve text replies until interrupted.

``--rpm 20/10s`` is a quota of 20 requests in any 10 seconds, said the way
``adk-eval run --rpm`` says it (a bare ``--rpm 20`` is per ``--window``, 60 s by
default); ``--log FILE`` appends each request and the status it was answered
with to FILE as a JSON line, for whoever runs the server in its own process.
"""

from __future__ import annotations

import argparse
import re
import socket
from collections.abc import Sequence
from pathlib import Path

from .._errors import EvalSetupError
from .._seeds import DEFAULT_SEED
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
    options.add_argument(
        "--rpm", help="requests per window and model: 20/10s is 20 in any 10 s (default: none)"
    )
    options.add_argument("--tpm", help="tokens per window and model, as --rpm (default: none)")
    options.add_argument(
        "--window", type=float, help="seconds of the window of a bare --rpm or --tpm (default: 60)"
    )
    options.add_argument(
        "--error-rate", type=float, default=0.0, help="fraction of requests failed with a 503"
    )
    options.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="seed of the jitter and the errors"
    )
    options.add_argument(
        "--log", type=Path, metavar="FILE", help="append each request and its answer's status"
    )
    return options


_AMOUNT = re.compile(r"^\s*(\d+)\s*(?:/\s*(\d+(?:\.\d+)?)?\s*(s|m|min|h)\s*)?$")
_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def _quota(rpm: str | None, tpm: str | None, window: float | None) -> Quota | None:
    """The quota of ``--rpm``, ``--tpm`` and ``--window`` (None: no limit)."""
    amounts: dict[str, int] = {}
    windows = {window} if window is not None else set()
    for name, value in (("requests", rpm), ("tokens", tpm)):
        if value is None:
            continue
        found = _AMOUNT.match(value)
        if found is None:
            raise EvalSetupError(f"--{name[0]}pm {value!r}: give N or N/WINDOW, like 20/10s")
        amounts[name] = int(found[1])
        if found[3]:
            windows.add(float(found[2] or 1) * _UNITS[found[3]])
    if not amounts:
        return None
    if len(windows) > 1:
        said = " and ".join(f"{seconds:g} s" for seconds in sorted(windows))
        raise EvalSetupError(f"--rpm, --tpm and --window give different windows: {said}")
    window = windows.pop() if windows else 60.0
    return Quota(amounts.get("requests"), amounts.get("tokens"), window=window)


def server_of(argv: Sequence[str] | None = None) -> tuple[FakeProviderServer, int]:
    """The server the command line describes, and the port to serve it on."""
    options = parser()
    args = options.parse_args(argv)
    script: list[FakeReply | str] = [
        tool_reply("lookup", {"key": f"k{i}"}) for i in range(args.calls)
    ] + ["done"]
    try:
        server = FakeProviderServer(
            script,
            delay=args.delay,
            jitter=args.jitter,
            quota=_quota(args.rpm, args.tpm, args.window),
            error_rate=args.error_rate,
            seed=args.seed,
            log=args.log,
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
    try:
        uvicorn.Server(
            uvicorn.Config(server.app(), log_level="warning", access_log=False, backlog=4096)
        ).run(sockets=[sock])
    finally:
        server.close_log()


if __name__ == "__main__":
    main()
