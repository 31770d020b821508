"""Cassettes in whole runs: a miss is one line, recording is quiet, faulted passes kept apart."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, ToolMock, run_eval_suite
from adk_eval.fake_provider import FakeProviderServer
from adk_eval.models import ModelCalls
from adk_eval.models._gateway._cassette import cassette_path
from adk_eval.testing import ScriptedLlm, tool_call

from .test_cassette import HELPFUL, UNREACHABLE, Urls, adds, respond

CAREFUL = HELPFUL.replace("helpful", "careful")


def adk_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    """ADK's records with a traceback or at ERROR and above."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.name.startswith("google_adk")
        and (record.exc_info or record.levelno >= logging.ERROR)
    ]


@pytest.fixture
def tapes(tmp_path):
    """A cassette folder holding the recording of case `adds` (HELPFUL)."""
    folder = tmp_path / "tapes"

    async def record() -> None:
        with FakeProviderServer(responder=respond) as server:
            suite = await run_eval_suite(
                [adds(Urls.of(server))], model_calls=ModelCalls(record=folder)
            )
        assert suite.results[0].status == "passed", suite.results[0].explain()

    return folder, record


async def test_misses_over_several_cases_leave_adk_nothing_to_log(tapes, caplog):
    folder, record = tapes
    await record()
    stale = [
        adds(UNREACHABLE, CAREFUL),
        adds(UNREACHABLE, name="new-1"),
        adds(UNREACHABLE, name="new-2"),
    ]
    with caplog.at_level(logging.DEBUG):
        replay = await run_eval_suite(stale, model_calls=ModelCalls(replay=folder))
    assert [r.error.type if r.error else r.status for r in replay.results] == [
        "CassetteMissError"
    ] * 3
    assert adk_logged(caplog) == []  # each run's result says it, in one line


async def test_recording_writes_no_sandbox_warning_of_the_harness_own_files(tapes, tmp_path):
    folder, _ = tapes
    with FakeProviderServer(responder=respond) as server:
        calls = ModelCalls(record=folder)
        suite = await run_eval_suite([adds(Urls.of(server))], model_calls=calls, sandbox="strict")
    result = suite.results[0]
    assert result.status == "passed", result.explain()
    assert cassette_path(folder, "adds", 0).is_file()
    assert [w for w in result.warnings if "sandbox" in w] == []


# -- a pass with faults ------------------------------------------------------------------------


def looks_up(model) -> EvalCase:
    agent = LlmAgent(name="a", model=model, tools=[lookup])
    return EvalCase(
        name="looks-up",
        agent=agent,
        first_message="what is k?",
        tool_mocks={"lookup": ToolMock.returning({"value": 1})},
    )


def lookup(key: str) -> dict:
    """Looks a key up."""
    raise AssertionError("the real lookup ran")


def script() -> ScriptedLlm:
    return ScriptedLlm([tool_call("lookup", {"key": "k"}), "It is 1."])


async def test_a_pass_with_faults_records_beside_the_pass_without_not_over_it(tmp_path):
    record = ModelCalls(record=tmp_path)
    clean = await run_eval_suite([looks_up(script())], model_calls=record, seed=3)
    faulted = await run_eval_suite([looks_up(script())], model_calls=record, seed=3, faults=1.0)
    assert [clean.results[0].status, faulted.results[0].status] == ["passed", "passed"]
    plain = cassette_path(tmp_path, "looks-up", 0)
    with_faults = cassette_path(tmp_path / "_faults-1", "looks-up", 0)
    assert plain.is_file()
    assert with_faults.is_file()
    assert plain.read_text() != with_faults.read_text()  # the second request saw the fault

    replay = ModelCalls(replay=tmp_path)
    gone = ScriptedLlm([])  # any call that reaches it raises: the recordings must answer
    again = await run_eval_suite([looks_up(gone)], model_calls=replay, seed=3)
    faulted_again = await run_eval_suite([looks_up(gone)], model_calls=replay, seed=3, faults=1.0)
    for suite in (again, faulted_again):
        result = suite.results[0]
        assert result.status == "passed", result.explain()
        assert result.provider.replayed == 2


# -- through the command -----------------------------------------------------------------------

STALE_EVAL = """
import os
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from adk_eval import EvalCase, TerminateWhen

def case(number):
    model = LiteLlm(model="openai/calc", api_base=os.environ["FAKE_BASE"], api_key="k",
                    _skip_mcp_handler=True)
    agent = LlmAgent(name="a", model=model, instruction=os.environ["INSTRUCTION"])
    return EvalCase(name=f"c{number}", agent=agent, first_message="hi",
                    terminate_when=TerminateWhen(max_turns=1))

CASES = [case(number) for number in range(4)]
"""


def adk_eval_run(folder, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adk_eval", "run", "stale_eval.py", "--no-store", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )


@pytest.mark.slow  # two processes of the command
def test_a_stale_replay_through_the_command_is_one_line_per_case_and_nothing_on_stderr(tmp_path):
    (tmp_path / "stale_eval.py").write_text(textwrap.dedent(STALE_EVAL))
    with FakeProviderServer(["Hello."] * 4) as server:
        recorded = adk_eval_run(
            tmp_path,
            "--record-models",
            "tapes",
            FAKE_BASE=server.openai_base,
            INSTRUCTION="You are helpful.",
        )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "sandbox:" not in recorded.stdout.replace("sandbox: warn", "")

    replayed = adk_eval_run(
        tmp_path,
        "--replay-models",
        "tapes",
        FAKE_BASE=UNREACHABLE.openai_base,
        INSTRUCTION="You are careful.",
    )
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert replayed.stderr == ""  # was 154 lines of ADK's tracebacks per case
    misses = [line for line in replayed.stdout.splitlines() if line.startswith("  cassette miss:")]
    assert len(misses) == 4
    assert all(
        line.endswith("(re-record with --record-models DIR, or --on-miss call)") for line in misses
    )
    assert "Traceback" not in replayed.stdout
