"""How fast the watch's drop monitor sees a real drop, and how often it cries wolf.

Seeded streams of one metric's verdicts go through a `DropMonitor`:

* **delay**: ``--runs`` streams at a true pass rate of 90 % for ``--change``
  conversations, then 75 % for up to ``--after`` more; the conversations after
  the change until the alert, median and 90th percentile (a run with no alert by
  the end counts as later than any, and is counted as missed; an alert before
  the change counts as a false alarm).
* **false alarms**: ``--quiet-runs`` streams at 90 % throughout, ``--length``
  conversations each; the share that alerted, with its Wilson interval.

Both for a baseline given (90 %, known exactly) and one learned from the first
``--learn`` conversations, at ``--alpha``.

    python bench/watch_drop.py
    python bench/watch_drop.py --runs 1000 --quiet-runs 1000

Writes ``bench/results/watch_drop.json``.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

from _common import machine, write_result

from adk_eval._statistics import wilson
from adk_eval.production._watch._drop import Baseline, DropMonitor
from adk_eval.production._watch._verdict import WatchVerdict

BEFORE, AFTER = 0.90, 0.75


def first_alert(seed: int, monitor: DropMonitor, rates: list[tuple[int, float]]) -> int | None:
    """The index of the verdict that fired the first alert on a seeded stream, or None."""
    rng = random.Random(seed)
    index = 0
    for count, rate in rates:
        for _ in range(count):
            passed = rng.random() < rate
            verdict = WatchVerdict(f"c{index}", "m", passed, party=None if passed else "agent")
            if monitor.observe(verdict) is not None:
                return index
            index += 1
    return None


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``inf`` for a missed alert sorts last)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def mode(args: argparse.Namespace, baseline: Baseline | None) -> dict[str, Any]:
    """Delay and false alarms for one way of setting the baseline."""

    def monitor() -> DropMonitor:
        return DropMonitor(baseline, learn=args.learn, alpha=args.alpha)

    delays: list[float] = []
    early = 0
    for seed in range(args.runs):
        fired = first_alert(seed, monitor(), [(args.change, BEFORE), (args.after, AFTER)])
        if fired is not None and fired < args.change:
            early += 1
        else:
            delays.append(math.inf if fired is None else fired - args.change + 1)
    alarms = sum(
        first_alert(10**6 + seed, monitor(), [(args.length, BEFORE)]) is not None
        for seed in range(args.quiet_runs)
    )
    interval = wilson(alarms, args.quiet_runs)
    return {
        "baseline": "given 90%" if baseline is not None else f"learned (first {args.learn})",
        "delay_median": percentile(delays, 0.5) if delays else None,
        "delay_p90": percentile(delays, 0.9) if delays else None,
        "missed": sum(d == math.inf for d in delays),
        "alerted_before_the_change": early,
        "false_alarms": alarms,
        "quiet_runs": args.quiet_runs,
        "false_alarm_rate": interval.estimate,
        "false_alarm_interval": [interval.low, interval.high],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--quiet-runs", type=int, default=100)
    parser.add_argument("--change", type=int, default=500)
    parser.add_argument("--after", type=int, default=2000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--learn", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--json", default="bench/results/watch_drop.json")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = [mode(args, Baseline(BEFORE)), mode(args, None)]
    for row in rows:
        low, high = row["false_alarm_interval"]
        print(
            f"{row['baseline']:>22}: delay median {row['delay_median']}, "
            f"90th percentile {row['delay_p90']} ({row['missed']} missed, "
            f"{row['alerted_before_the_change']} before the change); false alarms "
            f"{row['false_alarms']}/{row['quiet_runs']} [{low:.3f}, {high:.3f}]",
            flush=True,
        )
    seconds = round(time.perf_counter() - started, 2)
    settings = {k: v for k, v in vars(args).items() if k != "json"}
    write_result(
        args.json,
        {"bench": "watch_drop", "machine": machine(), "settings": settings, "seconds": seconds}
        | {"percentiles": "nearest rank", "rows": rows},
    )


if __name__ == "__main__":
    main()
