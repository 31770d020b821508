"""Mining and the realism report as a session store grows: peak memory and sessions per second.

N conversations (1,000 and 10,000 by default) of a support desk are built, each
6 to 12 events: the user's goal (an e-mail address in some), the agent asking
for a phone number, the user's answer (the number, or a dodge), a tool call and
its response, the agent's reply, and in some a second round (a follow-up, a
correction with a new e-mail address, another question, another tool call).
They are written as a folder of exported session JSON files
(``Session.model_dump_json()``, one session per file); with ``--sqlite``, the
smallest size is also written to an SQLite store by inserting every session and
event through ADK's `DatabaseSessionService`.

For each size and each task, in a fresh process:

* mine: ``mine_sessions(open_sessions(FOLDER), OUT)``: each session read,
  redacted (the built-in patterns), mined and written to the scenarios files;
* report: ``realism_report(open_sessions(FOLDER), SIMULATED, resamples=R)``:
  each session read, redacted and measured, then the ten features compared.
  ``SIMULATED`` is a list of 1,000 ``(events, passed)`` pairs built the same way,
  held in memory at every size and built before the RSS is taken, so what
  differs between sizes is the real side, streamed from the folder.

Before measuring, the process runs the same task once on 20 other sessions of
the same kind of source (imports, lazy imports, caches), then resets the
kernel's peak RSS (``5`` into ``/proc/self/clear_refs``), so the warm-up's peak
does not hide a smaller one. The figures: the process's peak RSS
(``ru_maxrss``) over its RSS just before the task, the task's wall time, and
sessions per second. "Flat" means the peak growth at the largest size minus
the growth at the smallest, per task.

``--resamples`` (200 by default, the report's own default is 2,000) sets the
report's bootstrap resamples and permutations per feature: with 11,000 values
per feature they would otherwise be most of the report's time, and they cost
the same at every real size apart from the values' count.

    python bench/realism_memory.py                         # 1,000 and 10,000 sessions
    python bench/realism_memory.py --sizes 200 400 --sqlite --json out.json

Writes ``bench/results/realism_memory.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, rss_mib, write_result
from google.adk.events import Event
from google.adk.sessions import Session

from adk_eval.testing import function_response_event, text_event, tool_call_event, user_event

ROOT = Path(__file__).resolve().parents[1]
SIMULATED = 1_000
WARM_UP = 20
GOALS = (
    "I need to change the delivery address on my order",
    "My invoice shows the wrong amount, can you fix it?",
    "I want to cancel my subscription before it renews",
    "Where is my parcel? It was due on Monday",
    "I was charged twice for the same order",
)
DODGES = ("why do you need that?", "I'd rather not say", "not sure, is it needed?")
FOLLOW_UPS = (
    "Actually, use my work e-mail instead: {name}.work@example.org",
    "Can you also send me the receipt?",
    "Sorry, I meant the order before that one",
)
NAMES = ("ann", "bob", "cyd", "dee", "eli", "fay")


def conversation(index: int, start: float = 1_750_000_000.0) -> Session:
    """One desk conversation of 6 to 12 events, the same for the same `index`."""
    rng = random.Random(index)
    name = NAMES[index % len(NAMES)]
    goal = rng.choice(GOALS)
    if rng.random() < 0.5:
        goal += f"; my e-mail is {name}{index}@example.com"
    phone = f"+44 20 7946 {index % 10_000:04d}"
    invocation = f"e-{index}"
    order = f"A{index:06d}"
    events: list[Event] = [
        user_event(goal, invocation_id=invocation),
        text_event(
            "desk", "I can help. What phone number is on the account?", invocation_id=invocation
        ),
        user_event(
            f"It's {phone}" if rng.random() < 0.75 else rng.choice(DODGES),
            invocation_id=invocation,
        ),
        tool_call_event(
            "desk",
            "lookup_order",
            {"order": order},
            call_id=f"c{index}-1",
            invocation_id=invocation,
        ),
        function_response_event(
            "desk",
            "lookup_order",
            {"status": "shipped", "order": order},
            call_id=f"c{index}-1",
            invocation_id=invocation,
        ),
        text_event("desk", f"Order {order} has shipped. Anything else?", invocation_id=invocation),
    ]
    more = rng.choice((0, 2, 3, 6))
    second: list[Event] = [
        user_event(rng.choice(FOLLOW_UPS).format(name=name), invocation_id=invocation),
        text_event("desk", "Which order number do you mean?", invocation_id=invocation),
        user_event(f"The one for {phone}, order {order}", invocation_id=invocation),
        tool_call_event(
            "desk",
            "update_order",
            {"order": order},
            call_id=f"c{index}-2",
            invocation_id=invocation,
        ),
        function_response_event(
            "desk", "update_order", {"ok": True}, call_id=f"c{index}-2", invocation_id=invocation
        ),
        text_event("desk", "Done, you will get an e-mail shortly.", invocation_id=invocation),
    ]
    events += second[:more]
    for n, event in enumerate(events):
        event.timestamp = start + index + n * 0.01
    return Session(
        id=f"s{index:06d}",
        app_name="desk",
        user_id=name,
        events=events,
        state={"tier": rng.choice(("free", "pro"))},
        last_update_time=events[-1].timestamp,
    )


def simulated_runs(count: int) -> list[tuple[list[Event], bool]]:
    """`count` simulated runs as ``(events, passed)`` pairs, shaped like the real ones."""
    runs = []
    for index in range(count):
        session = conversation(1_000_000 + index)
        runs.append((session.events, index % 4 != 0))
    return runs


def write_folder(folder: Path, first: int, count: int) -> None:
    """Writes sessions `first` to `first + count` as one JSON file each."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(first, first + count):
        (folder / f"s{index:06d}.json").write_text(conversation(index).model_dump_json())


async def write_store(path: Path, first: int, count: int) -> None:
    """Inserts sessions `first` to `first + count`, event by event, through ADK's service."""
    from google.adk.sessions import DatabaseSessionService

    service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")
    try:
        for index in range(first, first + count):
            built = conversation(index)
            session = await service.create_session(
                app_name=built.app_name,
                user_id=built.user_id,
                session_id=built.id,
                state=built.state,
            )
            for event in built.events:
                await service.append_event(session, event)
    finally:
        await service.close()


async def run_task(task: str, spec: str, out: Path, simulated: list, resamples: int) -> int:
    """One mining or one report of the source `spec`; the sessions it read."""
    from adk_eval.production import open_sessions
    from adk_eval.realism import mine_sessions, realism_report

    if task == "mine":
        summary = await mine_sessions(open_sessions(spec), out)
        return summary.mined + summary.skipped
    report = await realism_report(open_sessions(spec), simulated, resamples=resamples)
    return report.real


def reset_peak() -> None:
    """Resets the kernel's peak RSS to the current RSS (Linux), so the warm-up's does not count."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def measure(task: str, spec: str, warm: str, out: Path, resamples: int) -> dict[str, float]:
    """In this process: a warm-up run on `warm`, then the task on `spec`; memory and time."""
    simulated = simulated_runs(SIMULATED) if task == "report" else []
    asyncio.run(run_task(task, warm, out / "warm", simulated, resamples))
    reset_peak()
    before = rss_mib()
    started = time.perf_counter()
    sessions = asyncio.run(run_task(task, spec, out / "measured", simulated, resamples))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "sessions": sessions,
        "seconds": round(seconds, 3),
        "sessions_per_second": round(sessions / seconds),
        "rss_before_mib": round(before, 1),
        "peak_growth_mib": round(peak - before, 1),
    }


def run_fresh(task: str, spec: str, warm: str, out: Path, resamples: int) -> dict[str, float]:
    """`measure` in a fresh process."""
    output = subprocess.run(
        [
            sys.executable,
            __file__,
            "--measure",
            task,
            spec,
            warm,
            str(out),
            "--resamples",
            str(resamples),
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    ).stdout
    row: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument(
        "--sqlite", action="store_true", help="also an ADK SQLite store of the smallest size"
    )
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--json", default="bench/results/realism_memory.json")
    args = parser.parse_args()
    if args.measure:
        task, spec, warm, out = args.measure
        print(json.dumps(measure(task, spec, warm, Path(out), args.resamples)))
        return
    sizes = sorted(set(args.sizes))
    rows = []
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        warm = folder / "warm"
        write_folder(warm, 2_000_000, WARM_UP)
        warm_store = folder / "warm.db"
        sources: list[tuple[int, str, str, float]] = []
        for size in sizes:
            started = time.perf_counter()
            write_folder(folder / f"json-{size}", 0, size)
            sources.append(
                (size, "json", str(folder / f"json-{size}"), time.perf_counter() - started)
            )
        if args.sqlite:
            store = folder / f"store-{sizes[0]}.db"
            started = time.perf_counter()
            asyncio.run(write_store(store, 0, sizes[0]))
            asyncio.run(write_store(warm_store, 2_000_000, WARM_UP))
            sources.append(
                (sizes[0], "sqlite", f"sqlite:///{store}", time.perf_counter() - started)
            )
        for size, kind, spec, built in sources:
            warm_spec = str(warm) if kind == "json" else f"sqlite:///{warm_store}"
            for task in ("mine", "report"):
                out = folder / f"out-{kind}-{size}-{task}"
                row = run_fresh(task, spec, warm_spec, out, args.resamples)
                rows.append(
                    {
                        "size": size,
                        "source": kind,
                        "task": task,
                        "build_seconds": round(built, 1),
                        **row,
                    }
                )
    print(
        f"{'source':>6} {'task':>6} {'sessions':>8} {'seconds':>8} {'sessions/s':>10} "
        f"{'peak growth MiB':>16}"
    )
    for row in rows:
        print(
            f"{row['source']:>6} {row['task']:>6} {row['sessions']:>8} {row['seconds']:>8} "
            f"{row['sessions_per_second']:>10} {row['peak_growth_mib']:>16}"
        )
    flat = {}
    for task in ("mine", "report"):
        json_rows = [r for r in rows if r["source"] == "json" and r["task"] == task]
        flat[task] = round(json_rows[-1]["peak_growth_mib"] - json_rows[0]["peak_growth_mib"], 1)
        print(
            f"flat ({task}): {flat[task]} MiB more at {json_rows[-1]['sessions']} sessions "
            f"than at {json_rows[0]['sessions']}"
        )
    write_result(
        args.json,
        {
            "machine": machine(),
            "simulated": SIMULATED,
            "resamples": args.resamples,
            "warm_up_sessions": WARM_UP,
            "rows": rows,
            "flat_mib": flat,
        },
    )


if __name__ == "__main__":
    main()
