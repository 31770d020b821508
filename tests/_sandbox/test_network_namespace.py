"""Outside connections in warn mode, tried for real in a loopback-only network namespace.

The case runs in a child process under ``unshare -n`` (a network namespace with
only loopback, brought up), so nothing it tries can leave the machine. Needs root
(or user namespaces); skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("netns_case.py")
ROOT = Path(__file__).parents[2]


def in_namespace(mode: str, how: str = "itself") -> dict:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs `unshare` and `ip` (util-linux, iproute2)")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.strip()}")
    command = f"ip link set lo up && exec {sys.executable} {SCRIPT} {mode} {how}"
    done = subprocess.run(
        ["unshare", "-n", "--", "sh", "-c", command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_warn_lets_the_tool_try_and_lists_its_lookup_and_connection_not_the_models():
    seen = in_namespace("warn")

    assert seen["status"] == "passed", seen
    assert seen["tool"] == {"lookup": "gaierror", "connect": "OSError"}  # tried, went nowhere
    assert seen["warnings"] == [
        "sandbox: name lookup of warehouse.example, by tool `notify` of agent `shop`",
        "sandbox: connection to 203.0.113.5:80, by tool `notify` of agent `shop`",
    ]


@pytest.mark.slow
def test_warn_lists_a_connection_a_library_makes_in_a_thread_the_tool_started():
    seen = in_namespace("warn", "thread")

    assert seen["status"] == "passed", seen
    assert seen["warnings"] == [
        "sandbox: connection to 203.0.113.5:80, by a thread started by tool "
        "`notify_in_a_thread` of agent `shop`",
    ]


@pytest.mark.slow  # a few seconds of processes: make test runs it
def test_strict_refuses_the_lookup_first_and_ends_the_run():
    seen = in_namespace("strict")

    assert seen["status"] == "error", seen
    assert seen["error"] == (
        "sandbox: name lookup of warehouse.example, by tool `notify` of agent `shop` "
        "(refused: strict sandbox)"
    )
