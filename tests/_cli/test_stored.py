"""`adk-eval compare` and `runs` on stored histories: decisions, noise, rates, what fails CI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from adk_eval._cli._main import main
from adk_eval._statistics import wilson
from adk_eval.reporting._store import RunStore

from ..reporting.test_viewer import report
from .run_support import ONLY_GOOD, invoke


def store(tmp_path, *runs: dict[str, list[str]]):
    db = tmp_path / "runs.db"
    for number, outcomes in enumerate(runs, start=1):
        RunStore(db).append(
            report(outcomes, f"2026-11-2{number}T10:00:00"), command=f"run {number}"
        )
    return db


def compare(db, *args: str):
    return CliRunner().invoke(main, ["compare", "--db", str(db), *args])


P, F = "passed", "failed"


def test_fail_on_regression_fails_only_on_a_decided_regression(tmp_path):
    db = store(
        tmp_path,
        {"steady": [P] * 6, "breaks": [P] * 6},
        {"steady": [P, P, P, P, F, P], "breaks": [F] * 6},
    )

    result = compare(db, "--fail-on-regression")

    assert result.exit_code == 1, result.output
    assert "regressed" in result.output
    assert "6/6 -> 0/6" in result.output  # passes of runs
    assert "cases: 1 regressed, 1 no evidence" in result.output
    assert "Fisher's exact test at alpha 0.05" in result.output


def test_a_drop_within_noise_does_not_fail_ci(tmp_path):
    db = store(tmp_path, {"wobbles": [P, P, P, F]}, {"wobbles": [P, F, P, F]})

    result = compare(db, "--fail-on-regression")

    assert result.exit_code == 0, result.output
    assert "no evidence (down)" in result.output
    assert "suite: no evidence" in result.output


def test_the_noise_floor_comes_from_the_cases_stored_history(tmp_path):
    db = store(
        tmp_path,
        {"wobbles": [P, P]},
        {"wobbles": [P, F]},
        {"wobbles": [P, P]},
        {"wobbles": [F, F]},
    )

    result = compare(db)  # runs 3 -> 4: history before run 4 is runs 1 to 3

    assert "±50% (2/2)" in result.output, result.output


def test_a_stricter_alpha_turns_a_decision_into_no_evidence(tmp_path):
    db = store(tmp_path, {"c": [P] * 4}, {"c": [F] * 4})  # p = 1/70 = 0.014

    assert compare(db, "--fail-on-regression").exit_code == 1
    strict = compare(db, "--fail-on-regression", "--alpha", "0.01")
    assert strict.exit_code == 0, strict.output
    assert "alpha 0.01" in strict.output


def test_an_expected_failure_that_becomes_a_real_one_is_called_so(tmp_path):
    db = store(tmp_path, {"gap": ["xfailed"]}, {"gap": ["failed"]})

    result = compare(db)

    assert "expected failure -> real failure" in result.output, result.output


def test_runs_marks_a_run_still_running_and_one_whose_process_ended(tmp_path):
    import subprocess
    import sys

    db = store(tmp_path, {"steady": [P]})
    RunStore(db).begin(report({"steady": [P]}, "2026-11-25T10:00:00"), command="run live")
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    RunStore(db).append(
        {**report({"steady": [P]}, "2026-11-25T11:00:00"), "running": {"pid": int(gone.stdout)}},
        command="run killed",
    )

    listed = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["runs", "--db", str(db)]).output

    assert "run live (running)" in listed
    assert "run killed (ended early: its process stopped)" in listed
    assert "run 1 (" not in listed


def test_compare_says_how_many_runs_can_decide_a_drop_among_its_cases(tmp_path):
    steady = {f"steady{i}": [P] * 4 for i in range(3)}
    db = store(tmp_path, {**steady, "breaks": [P] * 4}, {**steady, "breaks": [F] * 4})

    result = compare(db, "--fail-on-regression")

    # 4/4 -> 0/4 gives p = 1/70 = 0.014: decided alone, not above Holm's 0.05/4 = 0.0125
    assert result.exit_code == 0, result.output
    assert "no evidence (down)" in result.output
    assert "use --repeat 5 or more" in " ".join(result.output.split()), result.output


GAP = """
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
never = state_metric("escalated", "session", "escalation", lambda v: v == "999")
greets = EvalCase(name="greets", agent=agent, first_message="hi")
gap = EvalCase(name="gap", agent=agent, first_message="hi", metrics=[never], xfail="known gap")
"""


def test_the_runs_list_and_the_viewer_count_the_runs_the_report_counts(write_evals, tmp_path):
    root, db, json_path = (
        write_evals({"gap_eval.py": GAP}),
        tmp_path / "runs.db",
        tmp_path / "r.json",
    )
    ran = CliRunner().invoke(
        main, ["run", str(root), "--repeat", "3", "--db", str(db), "--json", str(json_path)]
    )
    assert ran.exit_code == 0, ran.output
    report = json.loads(json_path.read_text())

    listed = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["runs", "--db", str(db)]).output
    assert "3/3 (3 xfailed left out)" in listed, listed
    assert " 100% " in listed
    (point,) = RunStore(db).history()  # what the viewer's runs list and chart draw
    assert point.pass_rate == report["pass_rate"] == 1.0
    assert wilson(point.passes, point.runs).to_dict() == report["intervals"]["pass_rate"]
    assert wilson(point.reliable, point.cases).to_dict() == report["intervals"]["pass_hat_k"]
    (gap,) = RunStore(db).history("gap")  # a case's own history counts all its runs
    assert (gap.runs, gap.passes) == (3, 0)


def test_compare_shows_regressions_between_the_last_two_runs(write_evals, tmp_path):
    db = tmp_path / "runs.db"
    root = write_evals(
        {
            "before_eval.py": ONLY_GOOD,
            "after_eval.py": """
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
never = state_metric("escalated", "session", "escalation", lambda v: v == "999")
good = EvalCase(name="greets", agent=agent, first_message="hi", metrics=[never])
""",
        }
    )
    assert invoke("run", str(root / "before_eval.py"), "--db", str(db)).exit_code == 0
    assert invoke("run", str(root / "after_eval.py"), "--db", str(db)).exit_code == 1

    result = invoke("compare", "--db", str(db))
    assert result.exit_code == 0
    assert "run 1 -> run 2" in result.output
    assert "no evidence (down)" in result.output  # one run a side: a drop, not yet a regression
    assert "passed -> failed" in result.output
    assert "cases: 1 no evidence" in result.output
    assert "use --repeat 4 or more" in result.output
    assert invoke("compare", "--db", str(db), "--fail-on-regression").exit_code == 0
    assert "no evidence (up)" in invoke("compare", "2", "1", "--db", str(db)).output

    commands = [run.command for run in RunStore(db).runs()]
    assert commands == [
        f"adk-eval run {root / 'after_eval.py'}",
        f"adk-eval run {root / 'before_eval.py'}",
    ]
    listed = invoke("runs", "--db", str(db))
    assert listed.exit_code == 0
    assert "1/1" in listed.output
    assert "0/1" in listed.output


def test_compare_errors_are_clear(tmp_path):
    missing = invoke("compare", "--db", str(tmp_path / "none.db"))
    assert missing.exit_code == 2
    assert "no runs stored yet" in missing.output
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_text("this is not a database")
    result = invoke("compare", "--db", str(corrupt))
    assert result.exit_code == 2
    assert "is not an adk-eval runs database" in result.output
    assert corrupt.read_text() == "this is not a database"
