"""Scoring a big stored-session database: sessions per second and memory, streamed.

An SQLite store of ADK's `DatabaseSessionService` is built: ``--seed-sessions``
conversations are run for real (a ScriptedLlm agent with a real tool, through
ADK's `Runner`), then their rows are copied under new ids until the store holds
``--sessions`` sessions (the same rows ADK wrote, so reading them costs what
reading ADK's rows costs). Then `score_sessions` scores every session with three
cheap metrics (two event counts and a state check), ``--repeats`` times, and the
figures are:

* sessions per second over the whole call (reading, parsing, scoring, the suite);
* the RSS growth of this process: its peak during the call (sampled every 50 ms)
  minus its RSS just before the call, after one warm-up scoring (imports, SQL
  caches), and its growth from the first 10 % of the sessions to the end.

    python bench/score_store.py                      # 10,000 sessions, 3 repeats
    python bench/score_store.py --sessions 500 --repeats 1

Writes ``bench/results/score_store.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from _common import machine, rss_mib, write_result

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.production.stores

from tests.production import stores

from adk_eval.production import SessionFilter, open_sessions
from adk_eval.production._score import score_sessions


def grow(path: Path, target: int) -> int:
    """Copies the store's sessions (and their events) under new ids until it holds `target`."""
    db = sqlite3.connect(path)
    sessions = db.execute(
        "SELECT app_name, user_id, id, state, create_time, update_time FROM sessions"
    ).fetchall()
    events = {}
    for row in db.execute(
        "SELECT id, app_name, user_id, session_id, invocation_id, timestamp, event_data FROM events"
    ):
        events.setdefault((row[1], row[2], row[3]), []).append(row)
    count = len(sessions)
    while count < target:
        for app, user, sid, state, created, updated in sessions:
            if count >= target:
                break
            new = str(uuid.uuid4())
            db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                (app, user, new, state, created, updated),
            )
            db.executemany(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (str(uuid.uuid4()), a, u, new, inv, ts, data)
                    for (_, a, u, _, inv, ts, data) in events.get((app, user, sid), [])
                ],
            )
            count += 1
    db.commit()
    total = db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    db.close()
    return total


class PeakRss:
    """The peak RSS of this process while it is entered, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self.peak = rss_mib()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, rss_mib())


async def score_all(url: str, total: int) -> dict[str, float]:
    """One scoring of the whole store: its seconds, sessions, and RSS growths (MiB).

    ``rss_growth_mib``: the peak during the call over the RSS just before it;
    ``rss_growth_after_10pct_mib``: the RSS at the end over the RSS once 10 % of
    the sessions were scored (what grows with the number of sessions).
    """
    source = open_sessions(url)
    before = rss_mib()
    at_tenth: list[float] = []
    scored = 0

    def count(result: object, session: object) -> None:
        nonlocal scored
        scored += 1
        if scored == max(total // 10, 1):
            at_tenth.append(rss_mib())

    started = time.perf_counter()
    with PeakRss() as peak:
        suite = await score_sessions(
            source, stores.METRICS, filters=SessionFilter(), on_result=count
        )
        end = rss_mib()
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "sessions": len(suite.results),
        "sessions_per_s": len(suite.results) / seconds,
        "rss_growth_mib": peak.peak - before,
        "rss_growth_after_10pct_mib": end - at_tenth[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--seed-sessions", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default="bench/results/score_store.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "sessions.db"
        stores.fill(f"sqlite+aiosqlite:///{path}", min(args.seed_sessions, args.sessions))
        total = grow(path, args.sessions)
        size = path.stat().st_size / 2**20
        print(f"store: {total} sessions, {size:.1f} MiB", flush=True)
        runs = []
        cold = asyncio.run(score_all(f"sqlite:///{path}", total))  # imports, SQL caches
        print(
            f"cold: {cold['sessions_per_s']:.0f} sessions/s, RSS growth "
            f"{cold['rss_growth_mib']:.1f} MiB (imports and caches included)",
            flush=True,
        )
        for index in range(args.repeats):
            run = asyncio.run(score_all(f"sqlite:///{path}", total))
            assert run["sessions"] == total, (run, total)
            runs.append(run)
            print(
                f"repeat {index + 1}/{args.repeats}: {total} sessions in {run['seconds']:.1f} s, "
                f"{run['sessions_per_s']:.0f} sessions/s, RSS growth {run['rss_growth_mib']:.1f} "
                f"MiB ({run['rss_growth_after_10pct_mib']:.1f} MiB after the first 10 %)",
                flush=True,
            )
    rate = statistics.median(run["sessions_per_s"] for run in runs)
    growth = max(run["rss_growth_mib"] for run in runs)
    print(f"median {rate:.0f} sessions/s; largest RSS growth {growth:.1f} MiB (after a warm-up)")
    write_result(
        args.json,
        {
            "machine": machine(),
            "sessions": total,
            "store_mib": size,
            "metrics": [metric.name for metric in stores.METRICS],
            "cold_run": cold,
            "runs": runs,
            "sessions_per_s": rate,
            "rss_growth_mib": growth,
        },
    )


if __name__ == "__main__":
    main()
