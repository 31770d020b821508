"""Reading OTLP traces: peak memory by trace size, which should stay flat.

One OTLP JSON-lines file of ``--spans`` spans is written (conversations of 20
spans: an invocation, its agent, model calls and tool calls, each line one
export request of one conversation, the attributes ADK sets). Then, in a fresh
process for each size (10,000 and the full count by default: the first lines of
the same file), ``open_spans("otlp:FILE")`` spools it and every conversation is
read (`conversations()`, then `spans_of()` of each). The figures: the process's
peak RSS growth over its RSS before opening (imports excluded), the wall time,
and spans per second.

"Flat" means the peak growth at the largest size minus the growth at the smallest.

    python bench/trace_memory.py                    # 10,000 and 100,000 spans
    python bench/trace_memory.py --spans 2000 --json out.json

Writes ``bench/results/trace_memory.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, rss_mib, write_result

PER_CONVERSATION = 20
NAMES = ["invocation", "invoke_agent desk"] + [
    "call_llm" if n % 2 else "execute_tool lookup" for n in range(PER_CONVERSATION - 2)
]


def _value(value: object) -> dict[str, object]:
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def conversation(index: int, start: int) -> str:
    """One export request (one JSON line) of one conversation's spans."""
    trace = f"{index + 1:032x}"
    root = f"{index + 1:08x}00000000"
    spans = []
    for n, name in enumerate(NAMES):
        attributes = {
            "gcp.vertex.agent.session_id": f"session-{index}",
            "gcp.vertex.agent.invocation_id": f"e-{index}",
            "gcp.vertex.agent.llm_request": "x" * 300,
            "turn": n,
        }
        span = {
            "traceId": trace,
            "spanId": f"{index + 1:08x}{n:08x}",
            "name": name,
            "startTimeUnixNano": str(start + n * 1000),
            "endTimeUnixNano": str(start + n * 1000 + 500),
            "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
            "status": {"code": 1},
        }
        if n:
            span["parentSpanId"] = root
        spans.append(span)
    resource_attributes = [{"key": "service.name", "value": {"stringValue": "desk"}}]
    request = {
        "resourceSpans": [
            {"resource": {"attributes": resource_attributes}, "scopeSpans": [{"spans": spans}]}
        ]
    }
    return json.dumps(request)


def write_file(path: Path, spans: int) -> None:
    """Writes `spans` spans (rounded up to whole conversations) as OTLP JSON lines."""
    with path.open("w") as file:
        for index in range(-(-spans // PER_CONVERSATION)):
            file.write(conversation(index, 1_700_000_000_000_000_000 + index * 10**9) + "\n")


def measure(path: Path) -> dict[str, float]:
    """In this process: open the file, read every conversation; memory and time."""
    from adk_eval._sources._spans._read import open_spans

    before = rss_mib()
    started = time.perf_counter()
    spans = 0
    with open_spans(f"otlp:{path}") as store:
        keys = store.conversations()
        for key in keys:
            spans += len(store.spans_of(key))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "spans": spans,
        "conversations": len(keys),
        "seconds": round(seconds, 3),
        "spans_per_second": round(spans / seconds),
        "rss_before_mib": round(before, 1),
        "peak_growth_mib": round(peak - before, 1),
    }


def run_size(source: Path, spans: int, folder: Path) -> dict[str, float]:
    """Measures the first `spans` spans of the file in a fresh process."""
    lines = -(-spans // PER_CONVERSATION)
    path = folder / f"spans-{spans}.jsonl"
    with source.open() as read, path.open("w") as write:
        for _, line in zip(range(lines), read, strict=False):
            write.write(line)
    output = subprocess.run(
        [sys.executable, __file__, "--measure", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
    ).stdout
    row: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    row["file_mib"] = round(path.stat().st_size / 2**20, 1)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--measure", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--json", default="bench/results/trace_memory.json")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure))))
        return
    sizes = sorted({min(10_000, args.spans // 10 or 1), args.spans})
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "spans.jsonl"
        write_file(source, args.spans)
        for size in sizes:
            rows.append({"size": size, **run_size(source, size, Path(folder))})
    print(f"{'spans':>8} {'convs':>6} {'seconds':>8} {'spans/s':>8} {'peak growth MiB':>16}")
    for row in rows:
        print(
            f"{row['spans']:>8} {row['conversations']:>6} {row['seconds']:>8} "
            f"{row['spans_per_second']:>8} {row['peak_growth_mib']:>16}"
        )
    flat = round(rows[-1]["peak_growth_mib"] - rows[0]["peak_growth_mib"], 1)
    print(f"flat: {flat} MiB more at {rows[-1]['spans']} spans than at {rows[0]['spans']}")
    write_result(args.json, {"machine": machine(), "sizes": rows, "flat_mib": flat})


if __name__ == "__main__":
    main()
