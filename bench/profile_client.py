"""Where the client CPU of a suite goes: cProfile of `bench/throughput.py`'s cases, by package.

Runs `--cases` cases (3 LiteLlm calls each) at `--concurrency` against a fake
provider with no delay, under cProfile, and prints the share of CPU time spent
in each package's own code (self time, grouped by the file's package; the
self time of stdlib and builtin functions is charged to the packages calling them).

    python bench/profile_client.py --cases 200 --concurrency 64

Writes ``bench/results/profile_client.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import re
from collections import defaultdict

from _common import machine, start_provider, write_result
from throughput import make_cases

from adk_eval import run_eval_suite

GROUPS = [
    ("adk_eval (this project)", re.compile(r"/adk_eval/|/bench/")),
    ("google.adk", re.compile(r"/google/adk/")),
    ("google.genai", re.compile(r"/google/genai/")),
    ("litellm", re.compile(r"/litellm/")),
    ("openai SDK", re.compile(r"/openai/")),
    ("httpx / httpcore / h11", re.compile(r"/(httpx|httpcore|h11|anyio)/")),
    ("pydantic", re.compile(r"/pydantic(_core)?/|pydantic_core")),
    ("opentelemetry", re.compile(r"/opentelemetry/")),
    ("asyncio / event loop", re.compile(r"/asyncio/|select|_run_once|epoll")),
]


OTHER = "other (stdlib, C builtins)"


def group_of(filename: str, function: str) -> str:
    text = f"{filename} {function}"
    for name, pattern in GROUPS:
        if pattern.search(text):
            return name
    return OTHER


async def profile(cases: int, concurrency: int) -> pstats.Stats:
    process, url = start_provider(0.0)
    try:
        await run_eval_suite(make_cases(url, 16), max_concurrency=16)  # warm-up
        profiler = cProfile.Profile()
        profiler.enable()
        await run_eval_suite(make_cases(url, cases), max_concurrency=concurrency)
        profiler.disable()
        return pstats.Stats(profiler)
    finally:
        process.terminate()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--json", default="bench/results/profile_client.json")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    stats = asyncio.run(profile(args.cases, args.concurrency))
    shares: dict[str, float] = defaultdict(float)
    total = 0.0
    rows = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, function), row in rows.items():
        self_time, callers = row[2], row[4]
        total += self_time
        group = group_of(filename, function)
        if group != OTHER or not callers:
            shares[group] += self_time
            continue
        # A stdlib or builtin function (copy.deepcopy, json, ...): its self time goes to
        # the packages that called it, in proportion to the time spent in each call site.
        spent = sum(caller[2] for caller in callers.values()) or 1.0
        for (caller_file, _, caller_function), caller in callers.items():
            shares[group_of(caller_file, caller_function)] += self_time * caller[2] / spent
    print(f"{args.cases} cases at concurrency {args.concurrency}, self time by package:")
    percent = {name: value / total * 100 for name, value in shares.items()}
    for name, value in sorted(percent.items(), key=lambda item: -item[1]):
        print(f"  {name:<28} {value:5.1f} %")
    write_result(
        args.json,
        {
            "bench": "profile_client",
            "machine": machine(),
            "cases": args.cases,
            "concurrency": args.concurrency,
            "self_time_percent": percent,
        },
    )


if __name__ == "__main__":
    main()
