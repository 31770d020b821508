"""The command group: help and the commands that read stored runs import no heavy library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("google.adk", "google.genai", "litellm", "fastapi", "uvicorn")

PROBE = """
import json, sys
from adk_eval._cli import entry
sys.argv = ["adk-eval", *json.loads(sys.argv[1])]
try:
    entry()
except SystemExit as stop:
    code = stop.code
heavy = sorted({name.split(".")[0] + "." + name.split(".")[1] if name.startswith("google.")
                else name.split(".")[0] for name in sys.modules if name.startswith(%r)})
print("HEAVY=" + json.dumps(heavy), file=sys.stderr)
"""


def imported_by(args: list[str], cwd) -> list[str]:
    """The heavy libraries a process running ``adk-eval ARGS`` imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
    )
    line = next(line for line in done.stderr.splitlines() if line.startswith("HEAVY="))
    return json.loads(line.removeprefix("HEAVY="))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["run", "--help"],
        ["merge", "--help"],
        ["compare", "--help"],
        ["studio", "--help"],
        ["view", "--help"],
        ["runs"],
        ["compare"],
    ],
)
def test_help_and_stored_runs_import_no_adk_litellm_or_web_stack(args, tmp_path):
    assert imported_by(args, tmp_path) == []


@pytest.mark.slow
def test_the_probe_sees_what_a_command_imports(tmp_path):
    (tmp_path / "evals.py").write_text("")
    assert "google.adk" in imported_by(["list", "evals.py"], tmp_path)


@pytest.mark.slow
def test_run_of_a_scripted_case_imports_no_litellm_or_server(tmp_path):
    (tmp_path / "evals.py").write_text(
        "from google.adk.agents import LlmAgent\n"
        "from adk_eval import EvalCase\n"
        "from adk_eval.testing import ScriptedLlm\n"
        "case = EvalCase(name='c', agent=LlmAgent(name='a', model=ScriptedLlm(['hi'])),"
        " first_message='x')\n"
    )
    # ADK itself imports google.genai and, for its auth schemes, fastapi; nothing else heavy
    assert imported_by(["run", "evals.py", "--no-store"], tmp_path) == [
        "fastapi",
        "google.adk",
        "google.genai",
    ]


def test_help_lists_every_command_with_its_own_short_help():
    from click.testing import CliRunner

    from adk_eval._cli._main import COMMANDS, main

    shown = CliRunner().invoke(main, ["--help"], terminal_width=200)
    assert shown.exit_code == 0
    listed = shown.output.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == sorted(COMMANDS)
    ctx = main.make_context("adk-eval", ["--help"], resilient_parsing=True)
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None
        assert command.name == name  # the table names each command as click does
        help_line = next(line for line in listed if line.split()[0] == name)
        assert command.get_short_help_str(limit=150) in help_line


def test_a_command_runs_from_the_table_and_an_unknown_one_is_click_s_usage_error(tmp_path):
    from click.testing import CliRunner

    from adk_eval._cli._main import main

    runs = CliRunner().invoke(main, ["runs", "--db", str(tmp_path / "none.db")])
    assert "no runs stored yet" in runs.output  # `runs` itself ran, imported on demand
    unknown = CliRunner().invoke(main, ["rnu"])
    assert unknown.exit_code == 2
    assert "No such command 'rnu'" in unknown.output
