"""Start-up: the wall time a user waits for each command, against the floor of importing ADK.

Each figure is a fresh process, timed from its start to its exit, as a user
waits for it. The floor is ``python -c "import google.adk.agents,
google.adk.runners"``: what any tool that runs an ADK agent pays before it can
do anything. The commands are measured interleaved with the floor in every
repeat (so a busy machine slows both), and each row is the median of the
repeats and its ratio to the floor's median:

* ``adk-eval --help``, ``adk-eval run --help``, ``adk-eval runs`` (an empty
  runs database) and ``adk-eval compare --help``: commands that should not
  import ADK at all (target: at most 0.25x the floor);
* ``adk-eval run`` of one trivial scripted case (target: at most 1.4x the floor), and
  beside it the same agent run once by a bare ADK script (``InMemoryRunner``, the
  scripted model a ten-line `BaseLlm`): the same ADK work, which imports ADK's
  workflow package on its first run as ``adk-eval run`` does;
* ``adk-eval mock-mcp TOOLS.py --stdio``: from its start to its answer to an MCP
  client's ``initialize`` (what an agent launching it waits for before its first
  tool list), then its stdin closed.

    python bench/startup.py                 # 9 repeats
    python bench/startup.py --repeats 3 --json out.json

Writes ``bench/results/startup.json`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import machine, write_result

CASE = """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

hello = EvalCase(name="hello", agent=LlmAgent(name="a", model=ScriptedLlm(["Hi."])),
                 first_message="hi")
"""

TOOLS = """
from adk_eval import ToolMock


def lookup(order: str) -> dict:
    \"\"\"Looks an order up.\"\"\"


tools = [lookup]
tool_mocks = {"lookup": ToolMock.returning({"status": "shipped"})}
"""

BARE_ADK = """
import asyncio

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types


class Hi(BaseLlm):
    async def generate_content_async(self, llm_request, stream=False):
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Hi.")]))


async def main():
    runner = InMemoryRunner(agent=LlmAgent(name="a", model=Hi(model="hi")), app_name="hello")
    session = await runner.session_service.create_session(app_name="hello", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass


asyncio.run(main())
"""
BARE = "bare ADK script, the same agent run once"

INITIALIZE = (
    '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    '"2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}\n'
)
MOCK_MCP = "adk-eval mock-mcp --stdio (to its first answer)"

FLOOR = [sys.executable, "-c", "import google.adk.agents, google.adk.runners"]


def commands(folder: Path) -> dict[str, list[str]]:
    cli = [sys.executable, "-m", "adk_eval"]
    db = str(folder / "none.db")
    return {
        "adk-eval --help": [*cli, "--help"],
        "adk-eval run --help": [*cli, "run", "--help"],
        "adk-eval runs": [*cli, "runs", "--db", db],
        "adk-eval compare --help": [*cli, "compare", "--help"],
        "adk-eval run (one trivial case)": [*cli, "run", "hello_eval.py", "--no-store"],
        BARE: [sys.executable, "bare_adk.py"],
        MOCK_MCP: [*cli, "mock-mcp", "tools.py", "--stdio"],
    }


def wall(command: list[str], folder: Path) -> float:
    if command[-1] == "--stdio":
        return first_answer(command, folder)
    started = time.perf_counter()
    subprocess.run(command, cwd=folder, capture_output=True, check=False)
    return time.perf_counter() - started


def first_answer(command: list[str], folder: Path) -> float:
    """From the server's start to its answer to ``initialize``; then its stdin is closed."""
    started = time.perf_counter()
    server = subprocess.Popen(
        command,
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(INITIALIZE)
    server.stdin.flush()
    answer = server.stdout.readline()
    took = time.perf_counter() - started
    server.stdin.close()
    server.wait(timeout=30)
    if '"result"' not in answer:
        raise SystemExit(f"mock-mcp did not answer initialize: {answer!r}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default="bench/results/startup.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "hello_eval.py").write_text(CASE)
        (folder / "tools.py").write_text(TOOLS)
        (folder / "bare_adk.py").write_text(BARE_ADK)
        done = subprocess.run(
            [sys.executable, "-m", "adk_eval", "run", "hello_eval.py", "--no-store"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"the trivial case did not pass:\n{done.stdout}{done.stderr}")
        wall(FLOOR, folder)  # the first import fills the bytecode caches
        times: dict[str, list[float]] = {"floor": []}
        for _ in range(args.repeats):
            times["floor"].append(wall(FLOOR, folder))
            for name, command in commands(folder).items():
                times.setdefault(name, []).append(wall(command, folder))
    floor = statistics.median(times["floor"])
    rows = []
    print(f"ADK import floor: {floor:.3f} s (median of {args.repeats})")
    bare = statistics.median(times[BARE])
    for name, samples in times.items():
        if name == "floor":
            continue
        median = statistics.median(samples)
        rows.append({"command": name, "wall_s": median, "ratio_to_floor": median / floor})
        print(f"{name:48} {median:6.3f} s  {median / floor:5.2f}x the floor")
    run = statistics.median(times["adk-eval run (one trivial case)"])
    print(f"adk-eval run / the bare ADK script: {run / bare:.2f}x (the same agent, run once)")
    write_result(
        args.json,
        {
            "machine": machine(),
            "repeats": args.repeats,
            "floor_s": floor,
            "bare_adk_run_s": bare,
            "run_to_bare_adk_run": run / bare,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
