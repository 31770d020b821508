"""adk-eval mock-mcp: the refusals it makes before serving, each one line on stderr."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

TOOLS_FILE = str(Path(__file__).parents[1] / "mock_mcp" / "shop_tools.py")


def refusal(*args: str) -> str:
    result = CliRunner().invoke(main, ["mock-mcp", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_a_non_loopback_http_host_is_refused_with_one_clear_line():
    error = refusal(TOOLS_FILE, "--http", "0.0.0.0:8765")
    assert "0.0.0.0 is not a loopback address" in error
    assert "--allow-remote" in error


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((TOOLS_FILE,), "give exactly one transport: --stdio, or --http"),
        ((TOOLS_FILE, "--stdio", "--http", "127.0.0.1:1"), "give exactly one transport"),
        ((TOOLS_FILE, "--http", "localhost"), "is not HOST:PORT"),
        ((TOOLS_FILE, "--stdio", "--allow-remote"), "--allow-remote goes with --http"),
        (("absent_tools.py", "--stdio"), "absent_tools.py is not a file"),
    ],
)
def test_a_command_it_cannot_serve_is_one_line(args, error):
    assert error in refusal(*args)


def test_a_tools_file_that_does_not_match_its_mocks_is_one_line(tmp_path):
    tools = tmp_path / "mismatched_mock_tools.py"
    tools.write_text(
        "from adk_eval import ToolMock\n"
        "def lookup(q: str) -> str:\n    '''Looks up.'''\n"
        "tools = [lookup]\ntool_mocks = {'search': ToolMock.returning('x')}\n"
    )
    error = refusal(str(tools), "--stdio")
    assert "declared with no mock in `tool_mocks`: lookup" in error
    assert "mocked but not declared in `tools`: search" in error


def test_a_tools_file_that_raises_at_import_is_one_line(tmp_path):
    tools = tmp_path / "raising_mock_tools.py"
    tools.write_text("raise RuntimeError('no database here')\n")
    error = refusal(str(tools), "--stdio")
    assert "RuntimeError: no database here" in error
    assert "Traceback" not in error


def test_a_log_that_is_not_a_mock_mcp_log_is_refused_and_left_alone(tmp_path):
    store = tmp_path / "session.db"
    with sqlite3.connect(store) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT)")
    connection.close()
    before = store.read_bytes()
    error = refusal(TOOLS_FILE, "--stdio", "--log", str(store))
    assert "session.db exists and is not a mock MCP call log" in error
    assert store.read_bytes() == before


def test_a_log_through_a_dangling_symlink_is_one_line_and_creates_nothing(tmp_path):
    target = tmp_path / "elsewhere.db"
    link = tmp_path / "calls.db"
    link.symlink_to(target)
    error = refusal(TOOLS_FILE, "--stdio", "--log", str(link))
    assert f"--log {link} is a symbolic link to {target}, which does not exist" in error
    assert not target.exists()
