"""Watching a store: conversations scored per second against `score`, and memory by store size.

One SQLite store of ADK's `DatabaseSessionService` is seeded as
``bench/score_store.py`` seeds it (``--seed-sessions`` conversations run for real
through ADK's `Runner`, their rows copied under new ids). Every conversation in it
is old, so all are finished (``idle=0``) and nothing is open.

* Throughput (a store of ``--sessions`` conversations): in one process, after a
  warm-up of each, ``--repeats`` rounds of `score_sessions` on the store and of
  `watch_sessions` on the same store (a fresh state file each round, stopped by
  ``until`` once it scored every conversation; each side first in every other
  round), both with the same three cheap
  metrics, the same redaction and the same concurrency; so both read, redact and
  score every conversation once, and the watch also records each one in its
  state file and hands its verdicts on. The figures are the medians of
  conversations per second and their ratio, watch over score (goal: >= 1), and
  the median ratio of CPU seconds, score's over watch's (the same rate in CPU,
  less moved by other work on the machine; each round records the load).
* Memory (``--memory-sizes``, 10,000 and 100,000 by default): the store grows to
  each size and, in a fresh process per size, a watch scores every conversation
  with its state file on disk; the figure is the process's peak RSS (sampled
  every 50 ms) minus its RSS before the watch. "Flat" means the growth at the
  largest size minus the growth at the smallest.

    python bench/watch_throughput.py
    python bench/watch_throughput.py --sessions 300 --memory-sizes 200 400 --repeats 1

Writes ``bench/results/watch_throughput.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, rss_mib, write_result
from score_store import PeakRss, grow

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.production.stores

from tests.production import stores

from adk_eval.production import SessionFilter, open_sessions
from adk_eval.production._score import score_sessions
from adk_eval.production._watch._loop import watch_sessions

WARM_UP = 200
"""Conversations each side scores before measuring (imports, SQL caches)."""


async def score_once(url: str, limit: int | None = None) -> tuple[int, float, float]:
    """`score_sessions` over the store: conversations scored, seconds and CPU seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    suite = await score_sessions(
        open_sessions(url), stores.METRICS, filters=SessionFilter(limit=limit)
    )
    return suite.summary["total"], time.perf_counter() - started, time.process_time() - cpu


async def watch_once(url: str, state: Path, until: int) -> tuple[int, float, float]:
    """`watch_sessions` over the store until `until` conversations: scored, seconds, CPU."""
    started, cpu = time.perf_counter(), time.process_time()
    summary = await watch_sessions(
        open_sessions(url), stores.METRICS, idle=0, state=state, until=until, poll=0.01
    )
    return summary.scored, time.perf_counter() - started, time.process_time() - cpu


def throughput(url: str, total: int, repeats: int, scratch: Path) -> dict:
    """Warm-ups, then `repeats` rounds of score and watch on the same store, in turn first."""
    asyncio.run(score_once(url, WARM_UP))
    asyncio.run(watch_once(url, scratch / "warm.db", min(WARM_UP, total)))
    rounds = []
    for index in range(repeats):
        # each side goes first in every other round (the caches, the other work on the machine)
        state = scratch / f"state{index}.db"
        sides = [score_once(url), watch_once(url, state, total)]
        done = [asyncio.run(side) for side in (sides if index % 2 == 0 else sides[::-1])]
        (scored, score_s, score_cpu), (watched, watch_s, watch_cpu) = (
            done if index % 2 == 0 else done[::-1]
        )
        assert scored == watched == total, (scored, watched, total)
        rounds.append(
            {"score_per_s": total / score_s, "watch_per_s": total / watch_s,
             "score_s": score_s, "watch_s": watch_s, "score_cpu_s": score_cpu,
             "watch_cpu_s": watch_cpu, "load": os.getloadavg()[0]}
        )  # fmt: skip
    score_rate = statistics.median(r["score_per_s"] for r in rounds)
    watch_rate = statistics.median(r["watch_per_s"] for r in rounds)
    cpu_ratio = statistics.median(r["score_cpu_s"] / r["watch_cpu_s"] for r in rounds)
    return {
        "conversations": total,
        "rounds": rounds,
        "score_per_s": score_rate,
        "watch_per_s": watch_rate,
        "ratio_watch_over_score": watch_rate / score_rate,
        "cpu_ratio_watch_over_score": cpu_ratio,
    }


def measure_memory(url: str, total: int, state: str) -> None:
    """In a fresh process: one watch over the whole store; prints its figures as JSON."""

    async def run() -> int:
        summary = await watch_sessions(
            open_sessions(url), stores.METRICS, idle=0, state=state, until=total, poll=0.01
        )
        return summary.scored

    before = rss_mib()
    started = time.perf_counter()
    with PeakRss() as peak:
        scored = asyncio.run(run())
    seconds = time.perf_counter() - started
    print(json.dumps({
        "conversations": scored, "seconds": seconds, "per_s": scored / seconds,
        "rss_before_mib": before, "peak_rss_mib": peak.peak, "rss_growth_mib": peak.peak - before,
    }))  # fmt: skip


def memory(url: str, total: int, state: Path) -> dict:
    """`measure_memory` in a fresh process (a peak is a process's)."""
    completed = subprocess.run(
        [sys.executable, __file__, "--measure", url, str(total), str(state)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    row: dict = json.loads(completed.stdout.strip().splitlines()[-1])
    assert row["conversations"] == total, (row, total)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--memory-sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--seed-sessions", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--measure", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--json", default="bench/results/watch_throughput.json")
    args = parser.parse_args()
    if args.measure:
        measure_memory(args.measure[0], int(args.measure[1]), args.measure[2])
        return
    sizes = sorted(args.memory_sizes)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "sessions.db"
        url = f"sqlite:///{path}"
        stores.fill(f"sqlite+aiosqlite:///{path}", min(args.seed_sessions, args.sessions))
        total = grow(path, args.sessions)
        rate = throughput(url, total, args.repeats, Path(scratch))
        print(
            f"{total} conversations, {args.repeats} round(s): score {rate['score_per_s']:.0f}/s, "
            f"watch {rate['watch_per_s']:.0f}/s (median), watch/score "
            f"{rate['ratio_watch_over_score']:.2f} (in CPU per conversation, score/watch: "
            f"{rate['cpu_ratio_watch_over_score']:.2f})",
            flush=True,
        )
        rows = []
        for size in sizes:
            grown = grow(path, size)
            rows.append(memory(url, grown, Path(scratch) / f"memory{size}.db"))
            print(
                f"watch over {grown} conversations: {rows[-1]['per_s']:.0f}/s, RSS growth "
                f"{rows[-1]['rss_growth_mib']:.1f} MiB (peak {rows[-1]['peak_rss_mib']:.0f} MiB)",
                flush=True,
            )
    growth = rows[-1]["rss_growth_mib"] - rows[0]["rss_growth_mib"]
    print(
        f"RSS growth from {rows[0]['conversations']} to {rows[-1]['conversations']} "
        f"conversations: {growth:+.1f} MiB"
    )
    write_result(
        args.json,
        {
            "machine": machine(),
            "metrics": [metric.name for metric in stores.METRICS],
            "same_work": "both read, redact and score every conversation once with the same "
            "metrics and concurrency; the watch also records each in its state file",
            "throughput": rate,
            "memory": rows,
            "rss_growth_difference_mib": growth,
        },
    )


if __name__ == "__main__":
    main()
