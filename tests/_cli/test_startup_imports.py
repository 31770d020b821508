"""What ``adk-eval run`` of one trivial case imports: the list of adk_eval's modules, kept here.

A one-case run imports what that case needs: no other command's code, no executor
it did not choose, no report nobody asked for, no library for a feature the case
does not use. The case is bench/startup.py's (one scripted agent, one message),
run as a user runs it, in a process of its own.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "startup.py"

PROBE = """
import atexit, json, runpy, sys
def dump():
    print("MODULES=" + json.dumps(sorted(sys.modules)), file=sys.stderr)
atexit.register(dump)
sys.argv = ["adk-eval", "run", "hello_eval.py", "--no-store"]
runpy.run_module("adk_eval", run_name="__main__", alter_sys=True)
"""

OURS = [
    "adk_eval",
    "adk_eval._agent_tree",
    "adk_eval._arguments",
    "adk_eval._bridge",
    "adk_eval._callables",
    "adk_eval._case",
    "adk_eval._cli",
    "adk_eval._cli._common",
    "adk_eval._cli._finish",
    "adk_eval._cli._gates",
    "adk_eval._cli._live",
    "adk_eval._cli._main",
    "adk_eval._cli._model_calls",
    "adk_eval._cli._opening",
    "adk_eval._cli._output",
    "adk_eval._cli._robustness",
    "adk_eval._cli._running",
    "adk_eval._cli._selection",
    "adk_eval._cli._table",
    "adk_eval._errors",
    "adk_eval._lazy",
    "adk_eval._model_check",
    "adk_eval._quiet",
    "adk_eval._result",
    "adk_eval._result._attribution",
    "adk_eval._result._status",
    "adk_eval._run",
    "adk_eval._run.contract",
    "adk_eval._run.loop",
    "adk_eval._run.parts",
    "adk_eval._run.scoring",
    "adk_eval._run.sessions",
    "adk_eval._run.system",
    "adk_eval._run.users",
    "adk_eval._sandbox",
    "adk_eval._sandbox._audit",
    "adk_eval._sandbox._channels",
    "adk_eval._sandbox._guard",
    "adk_eval._sandbox._loopback",
    "adk_eval._sandbox._scope",
    "adk_eval._sandbox._telemetry",
    "adk_eval._seeds",
    "adk_eval._session_service",
    "adk_eval._state",
    "adk_eval._statistics",
    "adk_eval._strict_json",
    "adk_eval._suites",
    "adk_eval._suites._discovery",
    "adk_eval._suites._faulted",
    "adk_eval._suites._inventory",
    "adk_eval._suites._jobs",
    "adk_eval._suites._lanes",
    "adk_eval._suites._local",
    "adk_eval._suites._plan",
    "adk_eval._suites._queue",
    "adk_eval._suites._repeats",
    "adk_eval._suites._results",
    "adk_eval._suites._run",
    "adk_eval._termination",
    "adk_eval._tools",
    "adk_eval._tools._a2a",
    "adk_eval._tools._a2a._harness",
    "adk_eval._tools._answers",
    "adk_eval._tools._bodies",
    "adk_eval._tools._clock",
    "adk_eval._tools._context",
    "adk_eval._tools._deployed",
    "adk_eval._tools._direct",
    "adk_eval._tools._faults",
    "adk_eval._tools._injection",
    "adk_eval._tools._mcp",
    "adk_eval._tools._mocks",
    "adk_eval._tools._mtls",
    "adk_eval._tools._plugin",
    "adk_eval._tools._policy",
    "adk_eval._tools._record",
    "adk_eval._tools._recording",
    "adk_eval._tools._rejections",
    "adk_eval._tools._remote",
    "adk_eval._tools._simulated",
    "adk_eval._tools._toolsets",
    "adk_eval._tools._tree",
    "adk_eval._tools._watch",
    "adk_eval._trace",
    "adk_eval._trace._data",
    "adk_eval._trace._items",
    "adk_eval._trace._spool",
    "adk_eval._trace._trace",
    "adk_eval._transcript",
    "adk_eval._turns",
    "adk_eval._user_agents",
    "adk_eval.metrics",
    "adk_eval.metrics._invariants",
    "adk_eval.metrics._scoring",
    "adk_eval.metrics._types",
    "adk_eval.models",
    "adk_eval.models._gateway",
    "adk_eval.models._gateway._answers",
    "adk_eval.models._gateway._ask",
    "adk_eval.models._gateway._gate",
    "adk_eval.models._gateway._pipeline",
    "adk_eval.models._gateway._plugin",
    "adk_eval.models._gateway._provider",
    "adk_eval.models._gateway._requests",
    "adk_eval.models._gateway._settings",
    "adk_eval.models._gateway._stats",
    "adk_eval.models._gateway._usage",
    "adk_eval.models._pacing",
    "adk_eval.models._pacing._failures",
    "adk_eval.models._pacing._limits",
    "adk_eval.models._pacing._pacer",
    "adk_eval.models._roles",
    "adk_eval.models._roles._clients",
    "adk_eval.models._roles._consult",
    "adk_eval.models._roles._roles",
    "adk_eval.models._roles._summarizer",
    "adk_eval.models._roles._vertex",
    "adk_eval.reporting",
    "adk_eval.reporting._db_path",
    "adk_eval.reporting._safety",
    "adk_eval.testing",
]
"""adk_eval's modules a one-case ``adk-eval run`` has imported at its exit (sorted)."""

NOT_IMPORTED = [
    "jsonschema",  # simulated tool answers checked against a schema
    "mongoquery",  # TerminateWhen(state_matches=...)
    "multiprocessing",  # --workers
    "opentelemetry.sdk",  # routing an SDK provider nobody set up
    "xml.etree",  # --junit-xml
    "sqlite3",  # the runs database (--no-store)
    "adk_eval._cli._stored",  # another command (compare)
    "adk_eval._suites._ray",  # --executor ray
    "adk_eval._suites._workers",  # --workers
    "adk_eval.reporting._json_report",  # a report nobody asked for
    "adk_eval.models._gateway._cassette",  # record / replay
    "adk_eval.metrics._contract",  # a UserContract
    "adk_eval._tools._nodes",  # a Workflow's nodes
    "google.adk.evaluation.metric_evaluator_registry",  # ADK's metrics
]
"""Modules (and their packages' submodules) the same run must not import, and why one would."""


def trivial_case() -> str:
    """bench/startup.py's ``CASE``: the eval file the start-up benchmark runs."""
    for node in ast.parse(BENCH.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CASE":
            return str(ast.literal_eval(node.value))
    raise AssertionError(f"no CASE in {BENCH}")


def modules_of_a_one_case_run(folder: Path) -> list[str]:
    (folder / "hello_eval.py").write_text(trivial_case())
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=folder, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "1 passed" in done.stdout
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES="))
    return json.loads(line.removeprefix("MODULES="))


@pytest.mark.slow
def test_a_one_case_run_imports_the_modules_listed_here_and_none_of_the_others(tmp_path):
    modules = modules_of_a_one_case_run(tmp_path)

    ours = [name for name in modules if name.split(".")[0] == "adk_eval"]
    added, gone = sorted(set(ours) - set(OURS)), sorted(set(OURS) - set(ours))
    assert (added, gone) == ([], []), (
        f"a one-case `adk-eval run` now imports {added} and no longer {gone}. Every module it "
        "imports is paid by every run (bench/startup.py --instructions): import a module "
        "where it is used if this run does not need it, or else update OURS in this test "
        "(and say why in the commit)."
    )
    present = [
        name
        for name in NOT_IMPORTED
        if any(module == name or module.startswith(name + ".") for module in modules)
    ]
    assert present == [], f"a one-case run imports {present}; see NOT_IMPORTED for what needs it"
