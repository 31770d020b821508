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
    python bench/startup.py --instructions  # counted by callgrind (~4 min a repeat)

With ``--instructions`` the floor, the bare ADK script and ``adk-eval run`` of
the trivial case each run whole under valgrind's callgrind (``PYTHONHASHSEED=0``,
so a count repeats exactly on any load), interleaved in every repeat, with the
load average before each repeat; the modules each has imported at its exit
(all, and ``adk_eval``'s) are read once, outside valgrind. Then, once each,
processes that only import a list of modules (the collector off): the bare
script's, those plus the run's others that are not adk_eval's, the run's; what
the run's extra instructions spend on importing, and on whose modules. The
``.pyc`` files are compiled first, or the counts would include compiling.

Writes ``bench/results/startup.json`` (or ``--json``; ``startup_instructions.json``
with ``--instructions``).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
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


RUN = "adk-eval run (one trivial case)"

MODULES_AT_EXIT = """
import atexit, json, runpy, sys
out, rest = sys.argv[1], sys.argv[2:]
def dump():
    with open(out, "w") as file:
        json.dump(sorted(sys.modules), file)
atexit.register(dump)
sys.argv = rest if rest[0] != "-m" else ["adk-eval", *rest[2:]]
if rest[0] == "-m":
    runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
elif rest[0] == "-c":
    exec(rest[1])
else:
    runpy.run_path(rest[0], run_name="__main__")
"""


def instruction_commands(folder: Path) -> dict[str, list[str]]:
    """The three processes `--instructions` counts: the floor, the bare script, the run."""
    return {
        "floor": FLOOR,
        BARE: [sys.executable, "bare_adk.py"],
        RUN: [sys.executable, "-m", "adk_eval", "run", "hello_eval.py", "--no-store"],
    }


def instructions(command: list[str], folder: Path) -> int:
    """Instructions the whole process executes, counted by callgrind."""
    out = folder / "callgrind.out"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(
        ["valgrind", "--quiet", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        cwd=folder,
        env=env,
        capture_output=True,
        check=True,
    )
    found = re.search(r"^summary: (\d+)", out.read_text(), re.MULTILINE)
    out.unlink()
    if found is None:
        raise SystemExit(f"no instruction count for {command}")
    return int(found.group(1))


def modules_at_exit(command: list[str], folder: Path) -> list[str]:
    """The modules `command` has imported at its exit (sorted)."""
    out = folder / "modules.json"
    probe = [sys.executable, "-c", MODULES_AT_EXIT, str(out), *command[1:]]
    subprocess.run(probe, cwd=folder, capture_output=True, check=True)
    return list(json.loads(out.read_text()))


IMPORT_ONLY = """
import gc, importlib, json, sys
gc.disable()
for name in json.load(open(sys.argv[1])):
    if name not in sys.modules and name not in ("__main__", "hello_eval"):
        try:
            importlib.import_module(name)
        except Exception:  # one only its importer can load: loaded with it, or not at all
            pass
"""


def import_shares(folder: Path, modules: dict[str, list[str]]) -> dict[str, int]:
    """Instructions of processes that only import a list of modules, the collector off.

    The bare script's modules; those plus the modules the run adds that are not
    adk_eval's; the run's modules: how much of the run's extra is importing, and whose.
    """
    bare = set(modules[BARE])
    others = [n for n in modules[RUN] if n not in bare and n.split(".")[0] != "adk_eval"]
    lists = {
        "bare's modules": modules[BARE],
        "bare's and the run's others (not adk_eval's)": [*modules[BARE], *others],
        "the run's modules": modules[RUN],
    }
    counts = {}
    for label, names in lists.items():
        (folder / "import_only.json").write_text(json.dumps(names))
        only = [sys.executable, "-c", IMPORT_ONLY, str(folder / "import_only.json")]
        counts[label] = instructions(only, folder)
        print(f"importing only {label} ({len(names)}): {counts[label] / 1e9:.3f} G instr")
    return counts


def count_instructions(folder: Path, repeats: int, json_path: str) -> None:
    """The `--instructions` mode: callgrind counts, interleaved, and modules at exit."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    for path in sys.path:
        if path and Path(path, "adk_eval").is_dir():
            compileall.compile_dir(Path(path, "adk_eval"), quiet=1)
    counts: dict[str, list[int]] = {}
    loads = []
    for _ in range(repeats):
        loads.append(os.getloadavg()[0])
        for name, command in instruction_commands(folder).items():
            counts.setdefault(name, []).append(instructions(command, folder))
    names = {n: modules_at_exit(c, folder) for n, c in instruction_commands(folder).items()}
    modules = {
        name: {"all": len(found), "adk_eval": sum(n.split(".")[0] == "adk_eval" for n in found)}
        for name, found in names.items()
    }
    medians = {name: statistics.median(values) for name, values in counts.items()}
    for name, values in counts.items():
        print(
            f"{name:48} {medians[name] / 1e9:6.3f} G instr "
            f"(repeats {', '.join(f'{v / 1e9:.3f}' for v in values)}), "
            f"modules {modules[name]['all']}, adk_eval's {modules[name]['adk_eval']}"
        )
    shares = import_shares(folder, names)
    print(f"adk-eval run / the bare ADK script: {medians[RUN] / medians[BARE]:.3f}x instructions")
    print(f"load average before each repeat: {', '.join(f'{load:.2f}' for load in loads)}")
    write_result(
        json_path,
        {
            "machine": machine(),
            "repeats": repeats,
            "load_average": loads,
            "instructions": counts,
            "modules_at_exit": modules,
            "importing_only": shares,
            "run_to_bare_adk_run": medians[RUN] / medians[BARE],
            "run_to_floor": medians[RUN] / medians["floor"],
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=None, help="9 (3 with --instructions)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
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
        if args.instructions:
            json_path = args.json or "bench/results/startup_instructions.json"
            count_instructions(folder, args.repeats or 3, json_path)
            return
        args.repeats = args.repeats or 9
        args.json = args.json or "bench/results/startup.json"
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
    run = statistics.median(times[RUN])
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
