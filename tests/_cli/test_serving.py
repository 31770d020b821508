"""Every command that serves refuses a host that is not loopback with the same one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

TOOLS_FILE = str(Path(__file__).parents[1] / "mock_mcp" / "shop_tools.py")
REFUSAL = (
    "adk-eval: error: 0.0.0.0 is not a loopback address, and anyone who can reach it could use "
    "this server; listen on 127.0.0.1 (or ::1), or pass --allow-remote to listen on it\n"
)


@pytest.mark.parametrize(
    "command",
    [
        ["view", "--host", "0.0.0.0", "--port", "0"],
        ["studio", "no_such_agent.py:root", "--host", "0.0.0.0", "--port", "0"],
        ["mock-mcp", TOOLS_FILE, "--http", "0.0.0.0:0"],
        ["collect", "--otlp", "0.0.0.0:0"],
    ],
    ids=["view", "studio", "mock-mcp", "collect"],
)
def test_a_remote_host_is_refused_the_same_way_by_every_server(command, tmp_path):
    files = ["--db", str(tmp_path / "x.db")] if command[0] in ("view", "studio") else []
    if command[0] == "collect":
        files = ["--out", str(tmp_path / "spans.db")]
    result = CliRunner().invoke(main, [*command, *files])
    assert result.exit_code == 2, result.output
    assert result.stderr == REFUSAL
    assert list(tmp_path.iterdir()) == []  # nothing read, created or kept
