"""watch_sessions at scale: 1,000 conversations of a real ADK app, two watches restarted halfway.

The app runs on ADK's `DatabaseSessionService` on PostgreSQL and exports its spans
through the OpenTelemetry SDK (its `BatchSpanProcessor` and OTLP/HTTP exporter) to
``adk-eval collect`` running on 127.0.0.1 in a process of its own. One watch reads
the store, one the collector's span file, while the app serves four conversations
at a time; each watch is stopped halfway and started again on its state file.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from adk_eval._sources._source import SessionSource
from adk_eval.production import open_sessions, watch_sessions
from adk_eval.production._watch._summary import WatchSummary
from tests._sources._spans.conftest import capture_spans  # noqa: F401  (the fixture)
from tests.production._watch.watching import CHEAP, stopped_halfway, write

COUNT = 1000
IDLE = 3.0  # well above the exporter's batch delay and the app's pause between two turns
BOUND = 180.0  # seconds a watch runs at most: a conversation lost fails the test, never hangs it


class Batched(SpanExporter):
    """The SDK's `BatchSpanProcessor` in front of `exporter`, as an app exports its spans."""

    def __init__(self, exporter: SpanExporter) -> None:
        self.batch = BatchSpanProcessor(exporter, schedule_delay_millis=100)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            self.batch.on_end(span)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.batch.shutdown()


class Collect:
    """``adk-eval collect --out OUT`` in a process of its own, stopped as a service is (SIGTERM).

    Attributes:
        endpoint: Its traces endpoint (once started).
        said: Its last line, once stopped (what it kept).
    """

    def __init__(self, out: Path) -> None:
        command = [sys.executable, "-m", "adk_eval", "collect", "--otlp", "127.0.0.1:0"]
        self.process = subprocess.Popen(
            [*command, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.endpoint, self.said = "", ""

    def __enter__(self) -> Collect:
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"OTLP_TRACES_ENDPOINT=(http://127\.0\.0\.1:\d+/v1/traces) ", first)
        if found is None:
            self.process.kill()
            raise AssertionError(first + self.process.communicate()[1])
        self.endpoint = found.group(1)
        return self

    def __exit__(self, kind: type | None, error: object, trace: TracebackType | None) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.said = self.process.communicate(timeout=30)[0].strip()
        finally:
            self.process.kill()


async def restarted(
    source: SessionSource, state: Path
) -> tuple[list[str], list[str], WatchSummary]:
    """A watch of `COUNT` conversations stopped halfway and started again on `state`.

    Returns the conversations the first run scored, those the second did, and the
    second's summary.
    """
    second: list[str] = []
    settings = {"idle": IDLE, "poll": 1.0, "state": state, "max_concurrency": 2, "duration": BOUND}
    first = await stopped_halfway(source, COUNT, **settings)
    summary = await watch_sessions(
        source,
        CHEAP,
        until=COUNT - len(first),
        on_verdict=lambda v: second.append(v.conversation),
        **settings,
    )
    return first, second, summary


@pytest.mark.slow
def test_a_thousand_conversations_on_postgresql_and_otlp_each_scored_once_across_a_restart(
    postgres,
    tmp_path: Path,
    capture_spans,  # noqa: F811  (the fixture)
) -> None:
    postgres.create_database("thousand")
    url = postgres.url("thousand")
    store = open_sessions(url.replace("postgresql+asyncpg", "postgresql"))
    dumps: list[str] = []

    async def main() -> tuple[list[str], tuple, tuple]:
        names = await write(url, 1)  # the store's tables, before anyone reads them
        # the app on a loop of its own, as a service is: its pauses are not the watches'
        serving = write(url, COUNT - 1, pause=0.02, at_once=4)
        app = asyncio.create_task(asyncio.to_thread(asyncio.run, serving))
        spans = open_sessions(f"adk-spans:{tmp_path / 'spans.db'}")

        async def written() -> list[str]:
            done = await app
            dumps.append(await asyncio.to_thread(postgres.dump_checksum, "thousand"))
            return done

        watched = await asyncio.gather(
            written(),
            restarted(store, tmp_path / "store-watch.db"),
            restarted(spans, tmp_path / "spans-watch.db"),
        )
        return names + watched[0], watched[1], watched[2]

    with Collect(tmp_path / "spans.db") as collector:
        exporter = Batched(OTLPSpanExporter(endpoint=collector.endpoint))
        capture_spans.add(exporter)
        names, on_store, on_spans = asyncio.run(main())
        exporter.shutdown()  # every span sent before the collector stops
    assert "; none refused" in collector.said, collector.said
    ids = sorted(name.rsplit("/", 1)[-1] for name in names)
    assert len(set(ids)) == COUNT
    for side, (first, second, summary) in {"store": on_store, "spans": on_spans}.items():
        scored = sorted(name.rsplit("/", 1)[-1] for name in first + second)
        twice, lost = len(scored) - len(set(scored)), len(set(ids) - set(scored))
        said = f"{side}: {len(first)} + {len(second)} scored, {twice} twice, {lost} lost"
        assert COUNT // 2 <= len(first) < COUNT, said  # stopped halfway
        assert not set(first) & set(second), said  # nothing repeated across the restart
        assert scored == ids, said  # each once (one scored between its two turns: twice)
        assert summary.rescored == 0, said
    again = asyncio.run(watch_sessions(store, CHEAP, idle=0.0, poll=0.01, until=COUNT))
    assert again.scored == COUNT  # a fresh state: every conversation scored again
    assert postgres.dump_checksum("thousand") == dumps[0]  # the watches wrote nothing
