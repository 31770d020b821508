"""Scale-out: the throughput bench's CPU-bound suite on 1 and N worker processes.

The suite is the throughput bench's (3 LiteLlm calls to a `FakeProviderServer`,
one mocked tool), run at ``--concurrency`` runs in flight per process, with a
zero and a 200 ms provider delay. For each worker count (1 runs in this process,
as ``adk-eval run`` does by default; more are spawned processes fed case
references), the throughput is cases per second of wall time, start-up of the
workers included. Worker counts alternate their order between repeats; the
figures are medians.

Also measured:

* per-worker start-up: spawn until the worker is ready (its imports), for one
  worker alone and for N at once;
* Ray: the same suite through ``--executor ray`` on a local Ray of N CPUs started
  by this script (``ray.init``), and the Ray path's overhead per case: a Ray of
  one CPU against this process, ``1 / rate_ray1 - 1 / rate_here`` (``--ray``);
* memory: each worker's RSS sampled through a ``--memory-cases`` run (1,000 by
  default); growth is the RSS at the end against the RSS after the first 10%.

    python bench/scale.py                        # 600 cases, c=64, workers 1 2, 5 repeats
    python bench/scale.py --cases 200 --repeats 3 --workers 1 2 --memory-cases 0

Writes ``bench/results/scale.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from _common import machine, rss_mib, start_provider, write_result

from adk_eval import InProcess, Ray, Workers, run_eval_suite
from adk_eval._suites._jobs import WorkerSetup
from adk_eval._suites._workers._process import WorkerProcess


def process_rss_mib(pid: int) -> float:
    """Resident memory of process `pid`, in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def startup_seconds(count: int) -> list[float]:
    """Spawn `count` workers at once; seconds until each is ready."""
    pool = [WorkerProcess(WorkerSetup()) for _ in range(count)]
    try:
        while any(worker.ready_after is None for worker in pool):
            for worker in pool:
                worker.receive()  # notes when the worker is ready
            time.sleep(0.005)
        return [worker.ready_after or 0.0 for worker in pool]
    finally:
        for worker in pool:
            worker.stop(kill=False)


async def run_suite(cases: list, workers: int, concurrency: int) -> tuple[float, float]:
    """Wall seconds (start-up included) and steady cases/s (after the first 10% finished)."""
    started = time.perf_counter()
    done: list[float] = []
    suite = await run_eval_suite(
        cases,
        executor=Workers(workers) if workers > 1 else InProcess(),
        max_concurrency=concurrency,
        on_result=lambda result: done.append(time.perf_counter()),
    )
    wall = time.perf_counter() - started
    bad = [r for r in suite.results if r.status != "passed"]
    assert not bad, bad[0].explain() if bad else ""
    assert not suite.not_run, suite.not_run
    return wall, steady_rate(done)


def steady_rate(done: list[float]) -> float:
    """Cases per second from the 10% mark to the end (start-up and warm-up left out)."""
    first = len(done) // 10
    return (len(done) - 1 - first) / (done[-1] - done[first])


def independent_rate(label: str, processes: int, concurrency: int) -> float:
    """The machine's ceiling: `processes` separate one-process suites at once, summed."""
    command = [sys.executable, __file__, "--solo", label, "--concurrency", str(concurrency)]
    running = [
        subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(processes)
    ]
    return sum(float(process.communicate()[0].split()[-1]) for process in running)


async def solo(label: str, concurrency: int) -> None:
    """One process running the whole suite in itself; prints its steady rate last."""
    import scale_cases

    await run_suite(scale_cases.FAST[:32], 1, 16)  # warm-up
    _, rate = await run_suite(getattr(scale_cases, label.upper()), 1, concurrency)
    print(rate)


class RssSampler:
    """Samples the RSS of this process's worker children while a suite runs."""

    def __init__(self) -> None:
        self.samples: dict[int, list[tuple[int, float]]] = {}
        self.done = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import multiprocessing

        while not self._stop.wait(0.25):
            for child in multiprocessing.active_children():
                try:
                    rss = process_rss_mib(child.pid or 0)
                except OSError:
                    continue
                self.samples.setdefault(child.pid or 0, []).append((self.done, rss))


async def ray_rate(cases: list, cpus: int, concurrency: int) -> tuple[float, float, float]:
    """Through a local Ray of `cpus` CPUs: (start-up s, wall s, steady cases/s)."""
    import ray

    from adk_eval._suites._ray._shipping import FORWARDED_ENV_PREFIXES

    began = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV_PREFIXES)}
    ray.init(
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="WARNING",
        runtime_env={"env_vars": env, "working_dir": str(Path(__file__).parent)},
    )
    startup = time.perf_counter() - began
    started = time.perf_counter()
    done: list[float] = []
    suite = await run_eval_suite(  # connects to the Ray just started, and shuts it down
        cases,
        executor=Ray(),
        max_concurrency=concurrency,
        on_result=lambda result: done.append(time.perf_counter()),
    )
    wall = time.perf_counter() - started
    assert suite.summary["passed"] == len(cases), suite.explain()[:2000]
    return startup, wall, steady_rate(done)


async def memory_run(cases: list, workers: int, concurrency: int) -> dict[str, Any]:
    with RssSampler() as sampler:

        def finished(result: Any) -> None:
            sampler.done += 1

        await run_eval_suite(
            cases,
            executor=Workers(workers) if workers > 1 else InProcess(),
            max_concurrency=concurrency,
            on_result=finished,
        )
    total = len(cases)
    per_worker = []
    for pid, samples in sampler.samples.items():
        early = [rss for done, rss in samples if done >= total // 10]
        if not early:
            continue
        per_worker.append(
            {
                "pid": pid,
                "rss_after_10pct_mib": early[0],
                "rss_end_mib": samples[-1][1],
                "rss_peak_mib": max(rss for _, rss in samples),
                "growth_mib": samples[-1][1] - early[0],
            }
        )
    return {"cases": total, "workers": per_worker}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    import scale_cases

    results: dict[str, Any] = {"concurrency": args.concurrency, "cases": args.cases}
    await run_suite(scale_cases.FAST[:32], 1, 16)  # warm-up: imports, connection pools
    for label, cases in (("fast", scale_cases.FAST), ("slow", scale_cases.SLOW)):
        if args.only_ray:
            break
        if label not in args.labels:
            continue
        walls: dict[int, list[float]] = {w: [] for w in args.workers}
        rates: dict[int, list[float]] = {w: [] for w in args.workers}
        ceilings: list[float] = []
        for index in range(args.repeats):
            order = args.workers if index % 2 == 0 else list(reversed(args.workers))
            for workers in order:
                wall, rate = await run_suite(cases, workers, args.concurrency)
                walls[workers].append(wall)
                rates[workers].append(rate)
                print(
                    f"{label} repeat {index + 1}/{args.repeats} workers={workers}: "
                    f"{wall:6.2f}s with start-up, {rate:6.1f} cases/s steady",
                    flush=True,
                )
            ceilings.append(independent_rate(label, max(args.workers), args.concurrency))
            print(f"{label} {max(args.workers)} independent processes: {ceilings[-1]:.1f} cases/s")
        one = statistics.median(rates[1])
        rows = []
        for workers in args.workers:
            rate = statistics.median(rates[workers])
            rows.append(
                {
                    "workers": workers,
                    "wall_s": statistics.median(walls[workers]),
                    "walls_s": walls[workers],
                    "cases_per_s": rate,
                    "rates": rates[workers],
                    "speedup": rate / one,
                    "speedup_with_startup": statistics.median(walls[1])
                    / statistics.median(walls[workers]),
                }
            )
            print(f"{label} workers={workers}: {rate:.1f} cases/s, x{rate / one:.2f}", flush=True)
        ceiling = statistics.median(ceilings)
        results[label] = {
            "rows": rows,
            "independent_processes_cases_per_s": ceiling,
            "independent_runs": ceilings,
            "machine_ceiling_speedup": ceiling / one,
        }
        print(f"{label}: the machine's ceiling (independent processes) x{ceiling / one:.2f}")
    if args.ray or args.only_ray:
        rows = []
        for index in range(args.repeats):
            here = (await run_suite(scale_cases.FAST, 1, args.concurrency))[1]
            startup, wall, rate = await ray_rate(
                scale_cases.FAST, max(args.workers), args.concurrency
            )
            _, _, rate1 = await ray_rate(scale_cases.FAST, 1, args.concurrency)
            rows.append(
                {
                    "here_cases_per_s": here,
                    "ray_cases_per_s": rate,
                    "ray_wall_s": wall,
                    "ray_startup_s": startup,
                    "ray1_cases_per_s": rate1,
                    "speedup": rate / here,
                    "overhead_ms_per_case": (1 / rate1 - 1 / here) * 1000,
                }
            )
            print(
                f"ray repeat {index + 1}/{args.repeats}: here {here:.1f} cases/s, Ray "
                f"{max(args.workers)} CPUs {rate:.1f} cases/s (x{rate / here:.2f}, start-up "
                f"{startup:.1f}s), Ray 1 CPU {rate1:.1f} cases/s: overhead "
                f"{rows[-1]['overhead_ms_per_case']:.1f} ms/case",
                flush=True,
            )
        results["ray"] = {
            "runs": rows,
            "speedup": statistics.median(row["speedup"] for row in rows),
            "overhead_ms_per_case": statistics.median(row["overhead_ms_per_case"] for row in rows),
            "startup_s": statistics.median(row["ray_startup_s"] for row in rows),
        }
    results["startup_s"] = {
        str(count): [startup_seconds(count) for _ in range(args.repeats)]
        for count in sorted({1, max(args.workers)})
    }
    for count, tries in results["startup_s"].items():
        print(f"start-up of {count} worker(s) at once: {[[round(s, 2) for s in t] for t in tries]}")
    if args.memory_cases:
        results["memory"] = await memory_run(
            scale_cases.MEMORY, max(args.workers), args.concurrency
        )
        for row in results["memory"]["workers"]:
            print(
                f"worker {row['pid']}: RSS {row['rss_after_10pct_mib']:.0f} MiB after 10% -> "
                f"{row['rss_end_mib']:.0f} MiB at the end (peak {row['rss_peak_mib']:.0f})"
            )
    results["parent_rss_mib"] = rss_mib()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument(
        "--labels", nargs="+", default=["fast", "slow"], help="fast: no delay; slow: --delay"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory-cases", type=int, default=1000)
    parser.add_argument("--ray", action="store_true", help="also measure --executor ray")
    parser.add_argument("--only-ray", action="store_true", help="measure only --executor ray")
    parser.add_argument("--json", default="bench/results/scale.json")
    parser.add_argument("--solo", help=argparse.SUPPRESS)  # one independent process
    args = parser.parse_args()
    if args.solo:
        sys.path.insert(0, str(Path(__file__).parent))
        anyio.run(solo, args.solo, args.concurrency)
        return
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    fast, fast_url = start_provider(0.0)
    slow, slow_url = start_provider(args.delay)
    os.environ.update(
        ADK_EVAL_BENCH_FAST_URL=fast_url,
        ADK_EVAL_BENCH_SLOW_URL=slow_url,
        ADK_EVAL_BENCH_CASES=str(args.cases),
        ADK_EVAL_BENCH_MEMORY_CASES=str(args.memory_cases),
    )
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        result = anyio.run(measure, args)
    finally:
        for process in (fast, slow):
            process.terminate()
            process.wait(10)
    write_result(args.json, {"bench": "scale", "machine": machine(), **result})


if __name__ == "__main__":
    main()
