"""A suite within a provider's quota: wall time against the quota-bound ideal, start-up included.

Each figure is one fresh ``adk-eval run`` process, from its start to its exit,
running ``--cases`` cases of three model calls each (two tool calls, then an
answer) at ``--concurrency 32`` through ADK's real `LiteLlm` or `Gemini` client,
against a `FakeProviderServer` in quota mode in this process: at most
``--requests`` requests in any ``--window`` seconds, a 429 with ``Retry-After``
(Gemini: ``RESOURCE_EXHAUSTED`` with ``RetryInfo``) beyond it. Placements: one
process, and ``--workers 2`` (one pacer served to both workers). Modes:

* ``known``: the quota is given as the provider states it (``--rpm
  MODEL=100/10s``), so calls wait for their turn and the provider should refuse
  none;
* ``learned``: nothing is given; the 429s teach the pacing.

The ideal is the quota's own bound, calls / rate (``cases x 3 x window /
requests`` seconds); the ratio is the wall time over it (goal: at most 1.15 for
``known``). The floor is stricter: the first window's calls go at once, so the
last call cannot leave before ``(ceil(calls / requests) - 1) x window`` seconds
(50 s by default), and ``ratio_to_floor`` is the wall time over that. The
server's log gives the most requests admitted in any window
(never above the quota: it refuses the rest) and the requests it refused (429s;
every one of them is adk-eval's to retry: the clients' own retries are off).

    python bench/quota_pacing.py                    # 200 cases, 100 requests / 10 s: ~60 s each
    python bench/quota_pacing.py --cases 40 --clients gemini --placements process

Writes ``bench/results/quota_pacing.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, write_result

from adk_eval.fake_provider import FakeProviderServer, Quota, text_reply, tool_reply

EVALS = """
import os
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from adk_eval import EvalCase, TerminateWhen


def lookup(key: str) -> dict:
    '''Looks a key up.'''
    return {"value": key}


if os.environ["BENCH_CLIENT"] == "litellm":
    model = LiteLlm(model="openai/fake-model", api_base=os.environ["BENCH_OPENAI"],
                    api_key="k", _skip_mcp_handler=True)
else:
    model = Gemini(model="gemini-2.5-flash", base_url=os.environ["BENCH_GEMINI"],
                   client_kwargs={"api_key": "k"})
agent = LlmAgent(name="looker", model=model, tools=[lookup])
CASES = [
    EvalCase(name=f"case-{i}", agent=agent, tool_mocks={"lookup": lookup},
             first_message="Look it up.", terminate_when=TerminateWhen(max_turns=1))
    for i in range(int(os.environ["BENCH_CASES"]))
]
"""

MODELS = {"litellm": "openai/fake-model", "gemini": "gemini-2.5-flash"}
SCRIPT = [
    tool_reply("lookup", {"key": "a"}),
    tool_reply("lookup", {"key": "b"}),
    text_reply("Done."),
]


def one(
    args: argparse.Namespace, folder: Path, client: str, placement: str, mode: str
) -> dict[str, Any]:
    """One fresh ``adk-eval run``: its wall time, statuses, and what the server saw."""
    quota = Quota(requests=args.requests, window=args.window)
    report = folder / f"{client}-{placement}-{mode}.json"
    with FakeProviderServer(SCRIPT, quota=quota) as server:
        env = {
            **os.environ,
            "BENCH_CLIENT": client,
            "BENCH_OPENAI": server.openai_base,
            "BENCH_GEMINI": server.gemini_base,
            "BENCH_CASES": str(args.cases),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        command = [
            sys.executable,
            "-m",
            "adk_eval",
            "run",
            str(folder / "evals.py"),
            "--concurrency",
            "32",
            "--no-store",
            "--json",
            str(report),
        ]
        if placement == "workers":
            command += ["--workers", "2"]
        if mode == "known":
            command += ["--rpm", f"{MODELS[client]}={args.requests}/{args.window:g}s"]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=folder)
        wall = time.perf_counter() - started
        admitted = server.max_admitted_in_any_window(args.window)
        refused = server.rejections
        sent = len(server.requests)
    if not report.exists():
        raise SystemExit(f"adk-eval run failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    runs = json.loads(report.read_text())["results"]
    statuses: dict[str, int] = {}
    for run in runs:
        statuses[run["status"]] = statuses.get(run["status"], 0) + 1
    calls = args.cases * 3
    ideal = calls * args.window / args.requests
    floor = (math.ceil(calls / args.requests) - 1) * args.window
    row = {
        "client": client,
        "placement": placement,
        "mode": mode,
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "ratio": round(wall / ideal, 3),
        "floor_s": round(floor, 2),
        "ratio_to_floor": round(wall / floor, 3) if floor else None,
        "statuses": statuses,
        "requests_sent": sent,
        "refused_429": refused,
        "max_admitted_in_a_window": admitted,
        "quota": args.requests,
    }
    print(
        f"{client:8} {placement:8} {mode:8} wall {wall:6.1f} s  ideal {ideal:6.1f} s  "
        f"ratio {wall / ideal:5.3f}  to floor {wall / floor if floor else math.inf:5.3f}  "
        f"{statuses}  sent {sent}  refused {refused}  "
        f"max/window {admitted}/{args.requests}",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--requests", type=int, default=100, help="the quota per window")
    parser.add_argument("--window", type=float, default=10.0, help="seconds")
    parser.add_argument("--clients", nargs="+", default=["litellm", "gemini"])
    parser.add_argument("--placements", nargs="+", default=["process", "workers"])
    parser.add_argument("--modes", nargs="+", default=["known", "learned"])
    parser.add_argument("--json", "--out", dest="out", default="bench/results/quota_pacing.json")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "evals.py").write_text(EVALS)
        for mode in args.modes:
            for client in args.clients:
                for placement in args.placements:
                    rows.append(one(args, folder, client, placement, mode))
    write_result(
        args.out,
        {
            "machine": machine(),
            "work": f"{args.cases} cases x 3 model calls, --concurrency 32, a quota of "
            f"{args.requests} requests per {args.window:g} s; wall time of a fresh "
            "`adk-eval run` process, start-up included",
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
