"""``run``'s model-call options: passed down to the suite, never put in the environment."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

GREETS = """
greets = EvalCase(name="greets", agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
                  first_message="hi")
"""


def test_run_passes_its_settings_down_and_writes_no_variable(write_evals, tmp_path, monkeypatch):
    root = write_evals({"greets_eval.py": GREETS})
    tapes = tmp_path / "tapes"
    monkeypatch.chdir(tmp_path)
    before = dict(os.environ)
    recorded = CliRunner().invoke(
        main, ["run", str(root), "--no-store", "--record-models", str(tapes)]
    )
    assert recorded.exit_code == 0, recorded.output
    assert (tapes / "greets" / "attempt-0.json").is_file()
    replayed = CliRunner().invoke(
        main, ["run", str(root), "--no-store", "--replay-models", str(tapes)]
    )
    assert replayed.exit_code == 0, replayed.output
    assert "cassette 1 replayed / 0 recorded" in replayed.output
    assert dict(os.environ) == before  # settings are passed down, never put in the environment

    both = ["--record-models", str(tapes), "--replay-models", str(tapes)]
    refused = CliRunner().invoke(main, ["run", str(root), "--no-store", *both])
    assert refused.exit_code == 2
    assert "--record-models and --replay-models: record or replay, not both" in refused.output


# -- limits ------------------------------------------------------------------------------


@pytest.fixture
def clean_settings(monkeypatch, tmp_path):
    """No project pyproject: the settings are the command line's alone."""
    monkeypatch.chdir(tmp_path)


def run(*args: str):
    return CliRunner().invoke(main, ["run", *args, "--no-store"], catch_exceptions=False)


@pytest.mark.usefixtures("clean_settings")
def test_the_banner_states_requests_per_window(write_evals):
    root = write_evals({"greets_eval.py": GREETS})
    result = run(
        str(root), "--rpm", "20/10s", "--rpm", "gemini-*=10/1m", "--tpm", "gemini-*=250000/1m"
    )
    assert result.exit_code == 0, result.output
    quotas = [line for line in result.output.splitlines() if line.startswith("quotas: ")]
    assert quotas == [
        "quotas: * 20 requests in any 10 s; gemini-* 10 requests and 250,000 tokens in any 1 min"
    ]


@pytest.mark.usefixtures("clean_settings")
def test_a_window_that_contradicts_the_old_quota_window_is_one_line(write_evals):
    root = write_evals({"greets_eval.py": GREETS})
    result = run(str(root), "--rpm", "20/10s", "--quota-window", "60")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [
        "adk-eval: error: --quota-window 60: rpm '20/10s' is counted over 10 s, but the window "
        "says 1 min: drop the window, the limit says it"
    ]


@pytest.mark.usefixtures("clean_settings")
def test_a_limit_without_its_unit_is_one_line_with_the_form(write_evals):
    root = write_evals({"greets_eval.py": GREETS})
    result = run(str(root), "--rpm", "gemini-2.5-flash=20/10")
    assert result.exit_code == 2
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert line.startswith("adk-eval: error: --rpm gemini-2.5-flash=20/10 is not a limit: ")
    assert "--rpm 20/10s (20 in any 10 s, every model)" in line


def test_help_shows_the_window_form_and_hides_quota_window():
    result = CliRunner().invoke(main, ["run", "--help"], terminal_width=200)
    assert "--rpm [MODEL=]N/WINDOW" in result.output
    assert "20/10s is 20 in any 10 s" in result.output
    assert "--quota-window" not in result.output
