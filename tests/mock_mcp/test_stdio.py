"""Serving over stdio: calls piped in before stdin closes are each answered on stdout."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS_FILE = Path(__file__).with_name("shop_tools.py")


def piped(calls: int) -> str:
    """An MCP client's whole conversation, written at once: the handshake, then `calls` calls."""
    messages: list[dict] = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "pipe", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for n in range(1, calls + 1):
        arguments = {"order_id": f"A{n}"}
        params = {"name": "get_order", "arguments": arguments}
        messages.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
    return "".join(json.dumps(message) + "\n" for message in messages)


@pytest.mark.slow
def test_calls_piped_in_then_stdin_closed_are_all_answered_and_logged(tmp_path):
    log = tmp_path / "calls.db"
    command = [sys.executable, "-m", "adk_eval", "mock-mcp", str(TOOLS_FILE), "--stdio"]
    done = subprocess.run(
        [*command, "--log", str(log)],
        input=piped(5),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = {message["id"]: message for message in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [0, 1, 2, 3, 4, 5], done.stdout
    for n in range(1, 6):
        assert answers[n]["result"]["structuredContent"] == {
            "order_id": f"A{n}",
            "status": "shipped",
        }
    assert done.stderr.count("-> answered") == 5
    assert "Traceback" not in done.stderr
    with sqlite3.connect(log) as connection:
        logged = connection.execute("SELECT count(*) FROM events").fetchone()[0]
    assert logged == 5 * 2 + 1  # each call and its answer, then the connection's end
