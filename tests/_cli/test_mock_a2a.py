"""adk-eval mock-a2a: the refusals it makes before serving, each one line on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

AGENTS = str(Path(__file__).parents[1] / "_mock_a2a" / "agents_file.py")


def refusal(*args: str) -> str:
    result = CliRunner().invoke(main, ["mock-a2a", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((AGENTS, "--http", "0.0.0.0:8766"), "0.0.0.0 is not a loopback address"),
        ((AGENTS, "--http", "localhost"), "is not HOST:PORT"),
        (("absent_agents.py", "--http", "127.0.0.1:0"), "absent_agents.py is not a file"),
    ],
)
def test_a_command_it_cannot_serve_is_one_line(args, error):
    assert error in refusal(*args)


def test_a_log_that_is_not_a_mock_a2a_log_is_refused_and_left_alone(tmp_path):
    other = tmp_path / "store.db"
    other.write_bytes(b"not a log, and not ours")
    error = refusal(AGENTS, "--http", "127.0.0.1:0", "--log", str(other))

    assert "is not a mock A2A exchange log; nothing was written to it" in error
    assert other.read_bytes() == b"not a log, and not ours"
