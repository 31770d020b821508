"""The ``collect`` command: receive an ADK app's spans over OTLP/HTTP into a SQLite file.

The collector (`adk_eval._sources._spans._collector`) is imported when the
command runs, so ``adk-eval --help`` does not load it.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from ._common import fail, host_and_port

__all__ = ["collect"]


@click.command()
@click.option(
    "--otlp",
    "address",
    default="127.0.0.1:4318",
    show_default=True,
    metavar="HOST:PORT",
    help="Where to receive OTLP/HTTP (POST /v1/traces, protobuf or JSON, gzip or not); "
    "port 0 picks a free one.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The spans file (SQLite, WAL): created if absent, appended to if it is a spans "
    "file (this command's or ADK's SqliteSpanExporter's); any other file is refused.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Listen on a non-loopback address (spans carry prompts, replies, tool arguments).",
)
@click.option(
    "--max-body",
    "max_body_mib",
    type=click.IntRange(1, 1024),
    default=16,
    show_default=True,
    help="The largest request body in MiB, compressed and decompressed (larger: 413).",
)
def collect(address: str, out: Path, allow_remote: bool, max_body_mib: int) -> None:
    """Keep the spans an ADK app exports over OTLP/HTTP, for `score` and `shadow`.

    Start it, then run the app with
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set to the URL it prints (the OpenTelemetry
    SDK's OTLP HTTP span exporter; given OTEL_EXPORTER_OTLP_ENDPOINT, the URL without
    /v1/traces, the app sends its logs and metrics too, which are dropped). Spans are
    written as they arrive, so `adk-eval score` can read the file meanwhile. Ctrl-C
    or SIGTERM stops it and prints what was kept.
    """
    from .._errors import EvalSetupError
    from .._sources._spans._collector import SpanCollector

    host, port = host_and_port(address, "--otlp", "127.0.0.1:4318")
    collector = SpanCollector(
        out, host=host, port=port, allow_remote=allow_remote, max_body=max_body_mib << 20
    )
    try:
        collector.start()
    except EvalSetupError as error:  # a refused host, or a refused file (CollectorError)
        fail(str(error))
    except OSError as error:
        fail(f"cannot listen on {address}: {error.strerror or error}")
    click.echo(
        f"adk-eval collect: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={collector.endpoint}/v1/traces "
        f"(spans go to {out}; Ctrl-C stops)"
    )
    sys.stdout.flush()
    try:
        _wait_for_a_signal()
    finally:
        stats = collector.stop()
        click.echo(f"adk-eval collect: stopped; {out}: {stats.summary()}")


def _wait_for_a_signal() -> None:
    """Returns on Ctrl-C or SIGTERM."""
    stopping = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        stopping.set()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, stop) if in_main else None
    try:
        while not stopping.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
