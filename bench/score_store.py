"""Scoring a big stored-session database: sessions per second, and peak memory by store size.

One SQLite store of ADK's `DatabaseSessionService` is built once: ``--seed-sessions``
conversations are run for real (a ScriptedLlm agent with a real tool, through
ADK's `Runner`), then their rows are copied under new ids (the same rows ADK
wrote, so reading them costs what reading ADK's rows costs). It grows through
each of the ``--sessions`` sizes in turn (1,000, 10,000 and 100,000 by default),
and at each size, in fresh processes:

* the API: `score_sessions` scores every session with three cheap metrics (two
  event counts and a state check), ``--repeats`` times after a warm-up scoring of
  200 sessions (imports, SQL caches); the figures are sessions per second and
  the process's peak RSS during the scorings (sampled every 50 ms);
* the command (unless ``--no-cli``): ``adk-eval score`` on the store, storing its
  run in a runs database as it does by default; its peak RSS is the kernel's
  (``wait4``), imports included.

"Flat" means the peak at the largest size minus the peak at the smallest: what
grows with the number of sessions.

    python bench/score_store.py                       # 1,000, 10,000 and 100,000 sessions
    python bench/score_store.py --sessions 500 --repeats 1

Writes ``bench/results/score_store.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
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

ROOT = Path(__file__).resolve().parents[1]

WARM_UP = 200
"""Sessions scored before measuring, in the measuring process (imports, SQL caches)."""


def grow(path: Path, target: int) -> int:
    """Copies the store's first sessions and their events under new ids until it holds `target`."""
    db = sqlite3.connect(path)
    sessions = db.execute(
        "SELECT app_name, user_id, id, state, create_time, update_time FROM sessions "
        "ORDER BY rowid LIMIT 100"
    ).fetchall()
    events: dict[tuple[str, str, str], list[tuple]] = {}
    for app, user, sid, *_ in sessions:
        events[(app, user, sid)] = db.execute(
            "SELECT id, app_name, user_id, session_id, invocation_id, timestamp, event_data "
            "FROM events WHERE app_name = ? AND user_id = ? AND session_id = ?",
            (app, user, sid),
        ).fetchall()
    count = db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
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
                    for (_, a, u, _, inv, ts, data) in events[(app, user, sid)]
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


async def score_all(url: str) -> dict[str, float]:
    """One scoring of the whole store: its seconds, sessions, and this process's RSS (MiB)."""
    before = rss_mib()
    started = time.perf_counter()
    with PeakRss() as peak:
        suite = await score_sessions(open_sessions(url), stores.METRICS, filters=SessionFilter())
    seconds = time.perf_counter() - started
    total = suite.summary["total"]
    return {
        "seconds": seconds,
        "sessions": total,
        "listed": len(suite.results),
        "sessions_per_s": total / seconds,
        "rss_before_mib": before,
        "peak_rss_mib": peak.peak,
        "rss_growth_mib": peak.peak - before,
    }


def measure(url: str, repeats: int) -> None:
    """In a fresh process: a warm-up, then `repeats` scorings; prints their figures as JSON."""
    asyncio.run(
        score_sessions(open_sessions(url), stores.METRICS, filters=SessionFilter(limit=WARM_UP))
    )
    runs = [asyncio.run(score_all(url)) for _ in range(repeats)]
    print(json.dumps(runs))


def measure_api(url: str, repeats: int) -> list[dict[str, float]]:
    """`measure` in a fresh process (a peak is a process's: one size per process)."""
    completed = subprocess.run(
        [sys.executable, __file__, "--measure", url, "--repeats", str(repeats)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    runs: list[dict[str, float]] = json.loads(completed.stdout.strip().splitlines()[-1])
    return runs


def measure_cli(url: str, scratch: Path) -> dict[str, float]:
    """``adk-eval score`` on the store (its run stored): its seconds and peak RSS (``wait4``)."""
    metrics = scratch / "store_metrics.py"
    metrics.write_text("from tests.production.stores import METRICS\n")
    command = [sys.executable, "-m", "adk_eval", "score", url, "--metrics", str(metrics)]
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    env = {**os.environ, "PYTHONPATH": path, "ADK_EVAL_DB": str(scratch / "runs.db")}
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, cwd=scratch)
    _, status, usage = os.wait4(process.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 1), f"adk-eval score exited {code}"
    return {"seconds": time.perf_counter() - started, "peak_rss_mib": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--seed-sessions", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-cli", action="store_true", help="Measure the API only.")
    parser.add_argument("--measure", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--json", default="bench/results/score_store.json")
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.repeats)
        return
    sizes = sorted(args.sessions)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "sessions.db"
        url = f"sqlite:///{path}"
        stores.fill(f"sqlite+aiosqlite:///{path}", min(args.seed_sessions, sizes[0]))
        for size in sizes:
            total = grow(path, size)
            store_mib = path.stat().st_size / 2**20
            runs = measure_api(url, args.repeats)
            assert all(run["sessions"] == total for run in runs), (runs, total)
            row = {
                "sessions": total,
                "store_mib": store_mib,
                "runs": runs,
                "sessions_per_s": statistics.median(run["sessions_per_s"] for run in runs),
                "peak_rss_mib": max(run["peak_rss_mib"] for run in runs),
                "cli": None if args.no_cli else measure_cli(url, Path(scratch)),
            }
            rows.append(row)
            cli = (
                ""
                if row["cli"] is None
                else f"; adk-eval score peak {row['cli']['peak_rss_mib']:.0f} MiB"
            )
            print(
                f"{total:>7} sessions ({store_mib:.0f} MiB store): {row['sessions_per_s']:.0f} "
                f"sessions/s, API peak RSS {row['peak_rss_mib']:.0f} MiB{cli}",
                flush=True,
            )
    first, last = rows[0], rows[-1]
    growth = last["peak_rss_mib"] - first["peak_rss_mib"]
    cli_growth = None if args.no_cli else last["cli"]["peak_rss_mib"] - first["cli"]["peak_rss_mib"]
    print(
        f"peak RSS from {first['sessions']} to {last['sessions']} sessions: API {growth:+.1f} MiB"
        + ("" if cli_growth is None else f", adk-eval score {cli_growth:+.1f} MiB")
    )
    write_result(
        args.json,
        {
            "machine": machine(),
            "metrics": [metric.name for metric in stores.METRICS],
            "sizes": rows,
            "peak_rss_growth_mib": growth,
            "cli_peak_rss_growth_mib": cli_growth,
            # the largest size's figures, as before
            "sessions": last["sessions"],
            "sessions_per_s": last["sessions_per_s"],
            "runs": last["runs"],
        },
    )


if __name__ == "__main__":
    main()
