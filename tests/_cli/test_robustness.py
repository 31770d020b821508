"""``adk-eval run --faults RATE``: the pass with faults, the robustness report and its gate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import jsonschema
import pytest
from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval.reporting import RunStore, load_report_schema

from ..conftest import default_sigint

BOOKING = """
from google.adk.tools.agent_tool import AgentTool
from adk_eval import ToolMock

def book(flight: str) -> dict:
    '''Books a flight (a real side effect: the case mocks it).'''
    raise AssertionError("the real booking ran")

booker = LlmAgent(name="booker", description="Books flights.",
                  model=ScriptedLlm([tool_call("book", {"flight": "BA1"}), "Booked."]),
                  tools=[book])
desk = LlmAgent(name="desk", model=ScriptedLlm([tool_call("booker", {"request": "BA1"}), "Done."]),
                tools=[AgentTool(booker)])
booked = state_metric("booked", "session", "booked", lambda value: value is True)
books = EvalCase(
    name="books", agent=desk, first_message="book BA1", metrics=[booked],
    tool_mocks={"book": ToolMock(lambda args, ctx: ctx.state.set("booked", True) or {"ok": True})},
)
replied = event_count_metric("replied", "agent_message", assertion=lambda n: n == 1)
greets = EvalCase(name="greets", agent=LlmAgent(name="g", model=ScriptedLlm(["Hello."])),
                  first_message="hi", metrics=[replied])
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_faults_report_each_cases_drop_in_the_terminal_and_the_json_report(write_evals, tmp_path):
    root = write_evals({"booking_eval.py": BOOKING})
    path = tmp_path / "report.json"
    args = ("run", str(root), "--faults", "0.5", "--repeat", "8", "--seed", "5", "--no-store")
    result = invoke(*args, "--json", str(path))
    assert result.exit_code == 0, result.output  # the gates judge the pass without faults
    assert "with faults: 50% of the calls of every mocked or simulated tool fail" in result.output
    assert "robustness under 50% tool faults (pass rates and drops" in result.output
    rows = [line for line in result.output.splitlines() if "greets" in line]
    assert any(row.count("8/8 68%-100%") == 2 for row in rows)  # as the suite table shows rates
    assert "beyond noise" in result.output
    assert "under 50% tool faults, 1 of 2 cases passes less often (1 beyond noise)" in (
        result.output
    )
    assert result.output.rstrip().splitlines()[-2].startswith("16 passed")  # the clean pass
    assert "without faults (the pass the reports and gates judge):" in result.output

    report = json.loads(path.read_text())
    jsonschema.validate(report, load_report_schema())
    assert report["summary"]["passed"] == 16  # the report's runs are the pass without faults
    robust = report["robustness"]
    assert (robust["fault_rate"], robust["seed"], robust["repeat"]) == (0.5, 5, 8)
    cases = {case["name"]: case for case in robust["cases"]}
    assert cases["books"]["beyond_noise"]
    assert cases["books"]["drop"]["low"] > 0
    assert cases["greets"]["drop"]["estimate"] == 0
    assert not cases["greets"]["beyond_noise"]
    assert robust["overall"]["runs"] == robust["overall"]["faulted_runs"] == 16

    again = tmp_path / "again.json"
    assert invoke(*args, "--json", str(again)).exit_code == 0
    assert json.loads(again.read_text())["robustness"] == robust  # the same seed, the same faults


def test_the_robustness_gate_fails_on_a_drop_above_its_points(write_evals):
    root = write_evals({"booking_eval.py": BOOKING})
    args = ("run", str(root), "--faults", "1", "--repeat", "2", "--seed", "1", "--no-store")
    failed = invoke(*args, "--fail-on-robustness-drop", "10")
    assert failed.exit_code == 1, failed.output
    assert "gate --fail-on-robustness-drop 10: FAILED: under 100% tool faults, a drop of 50 " in (
        failed.output
    )
    assert "exit 1: failed gate(s) --fail-on-robustness-drop 10" in failed.output
    passed = invoke(*args, "--fail-on-robustness-drop", "60")
    assert passed.exit_code == 0, passed.output
    assert "exit 0: every gate passed" in passed.output


def test_faults_without_repeat_run_each_case_5_times_each_way(write_evals):
    root = write_evals({"booking_eval.py": BOOKING})
    result = invoke("run", str(root), "-k", "greets", "--faults", "0.2", "--no-store")
    assert result.exit_code == 0, result.output
    assert "1 case(s) x 5 repeats" in result.output
    assert "5/5" in result.output


def test_the_robustness_table_never_cuts_a_case_name_in_80_columns(write_evals):
    renamed = BOOKING.replace('name="books"', 'name="books-a-flight-to-lisbon"')
    root = write_evals({"booking_eval.py": renamed})
    args = ("run", str(root), "--faults", "0.5", "--repeat", "10", "--seed", "5", "--no-store")
    result = CliRunner(env={"COLUMNS": "80"}).invoke(main, list(args), catch_exceptions=False)
    table = result.output.split("robustness under")[1]
    assert "│ books-a-flight-to-lisbon │" in table, table


def test_the_robustness_gate_needs_faults(write_evals):
    root = write_evals({"booking_eval.py": BOOKING})
    result = invoke("run", str(root), "--fail-on-robustness-drop", "5", "--no-store")
    assert result.exit_code == 2
    assert "give --faults RATE too" in result.output
    for rate in ("0", "2", "20%", "nan"):
        bad = invoke("run", str(root), "--faults", rate, "--no-store")
        assert bad.exit_code == 2
        assert f"{rate!r} is not a share of the calls above 0 and at most 1 (0.2 for 20%)" in (
            bad.output
        )


@pytest.mark.slow
def test_workers_give_the_robustness_report_of_one_process(write_evals):
    root = write_evals({"booking_eval.py": BOOKING})
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    reports, outputs = {}, {}
    for workers in ("1", "2"):
        done = subprocess.run(
            [
                *(sys.executable, "-m", "adk_eval", "run", "booking_eval.py"),
                *("--workers", workers, "--faults", "0.5", "--repeat", "6", "--seed", "5"),
                *("--no-store", "--json", f"w{workers}.json"),
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        reports[workers] = json.loads((root / f"w{workers}.json").read_text())
        outputs[workers] = done.stdout
    assert "2 worker process(es)" in outputs["2"]
    assert "processes:" not in outputs["1"]
    robust = reports["1"]["robustness"]
    assert robust["cases"][0]["faulted_passes"] < 6  # the faults did bite, in both
    assert reports["2"]["robustness"] == robust

    def outcomes(report: dict) -> list[tuple[str, int, str]]:
        return sorted((r["name"], r["attempt"], r["outcome"]) for r in report["results"])

    assert outcomes(reports["2"]) == outcomes(reports["1"])


STALLS_WITH_FAULTS = """
import pathlib

import anyio

answered = []


async def answer(request):
    '''Answers the pass without faults at once; in the pass with faults, never.'''
    answered.append(request)
    if len(answered) == 1:
        return "Hello."
    pathlib.Path("stalled").touch()
    await anyio.sleep_forever()


greets = EvalCase(name="greets", agent=LlmAgent(name="g", model=ScriptedLlm(responder=answer)),
                  first_message="hi")
"""


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
@pytest.mark.slow
def test_ctrl_c_or_sigterm_in_the_pass_with_faults_keeps_the_report_of_the_pass_without(
    write_evals, signum, code, said
):
    root = write_evals({"stall_eval.py": STALLS_WITH_FAULTS})
    process = subprocess.Popen(
        [
            *(sys.executable, "-X", "faulthandler", "-m", "adk_eval", "run", "stall_eval.py"),
            *("--faults", "0.5", "--repeat", "1", "--seed", "3"),
            *("--json", "r.json", "--db", "runs.db"),
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        # a terminal's Ctrl-C (a shell's background job would inherit SIGINT ignored)
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not (root / "stalled").exists():  # the pass with faults has begun its run
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the pass with faults never started"
            time.sleep(0.05)
        process.send_signal(signum)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, output
    assert "with faults: 50% of the calls" in output
    assert f"{said}: 0 of 1 runs finished" in output
    assert "Traceback" not in output
    assert "robustness under" not in output  # no comparison with half a pass
    report = json.loads((root / "r.json").read_text())
    jsonschema.validate(report, load_report_schema())
    assert [(r["name"], r["outcome"]) for r in report["results"]] == [("greets", "passed")]
    assert "robustness" not in report
    (stored,) = RunStore(root / "runs.db").runs()
    assert stored.command.endswith("(interrupted)")
    assert (stored.total, stored.passed) == (1, 1)


def test_faults_record_each_pass_into_cassettes_of_its_own_and_replay_both(write_evals, tmp_path):
    root = write_evals({"booking_eval.py": BOOKING})
    tapes = tmp_path / "tapes"
    args = ("run", str(root), "-k", "books", "--faults", "1", "--repeat", "1", "--seed", "1")
    recorded = invoke(*args, "--no-store", "--record-models", str(tapes))
    assert recorded.exit_code == 0, recorded.output
    files = sorted(path.relative_to(tapes).as_posix() for path in tapes.rglob("*.json"))
    assert files == ["_faults-1/books/attempt-0.json", "books/attempt-0.json"]

    replayed = invoke(*args, "--no-store", "--replay-models", str(tapes))
    assert replayed.exit_code == 0, replayed.output  # the pass without faults replays its own
    assert "cassette miss" not in replayed.output
    assert "providers: cassette 4 replayed / 0 recorded" in replayed.output  # the pass judged
