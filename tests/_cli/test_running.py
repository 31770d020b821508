"""``adk-eval run``, ``list`` and ``report`` in process: exit codes, tables, reports, repeats.

What a run prints and writes (its table, its JSON and JUnit reports, its stored run), how
cases are selected (``-k``) and repeated (``--repeat N``, ``auto``), what discovery refuses,
and a folder of every agent shape ending in one report.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval.reporting import RunStore, load_report_schema

from .run_support import MIXED, ONLY_GOOD, invoke


def test_all_passing_exits_0_prints_a_table_and_stores_the_run(write_evals, tmp_path):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    db = tmp_path / "runs.db"
    result = invoke("run", str(root / "good_eval.py"), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert "1 case(s)" in result.output
    assert "greets" in result.output
    assert "PASSED" in result.output
    assert "1 passed in" in result.output
    assert f"stored as run 1 in {db}" in result.output
    assert [run.passed for run in RunStore(db).runs()] == [1]


def test_a_failing_suite_exits_1_and_explains_the_failure(write_evals, tmp_path):
    root = write_evals({"mixed_eval.py": MIXED})
    result = invoke("run", str(root), "--db", str(tmp_path / "r.db"))
    assert result.exit_code == 1
    assert "EvalCase `escalates`: FAILED" in result.output
    assert "[FAIL] escalated" in result.output
    assert "`session.escalation` is not set in the final state" in result.output
    assert "1 passed, 1 failed" in result.output


def test_reports_follow_the_documented_formats(write_evals, tmp_path):
    root = write_evals({"mixed_eval.py": MIXED})
    report_path, junit_path = tmp_path / "out" / "report.json", tmp_path / "out" / "junit.xml"
    result = invoke(
        "run", str(root), "--json", str(report_path), "--junit-xml", str(junit_path), "--no-store"
    )
    assert result.exit_code == 1
    report = json.loads(report_path.read_text())
    jsonschema.validate(report, load_report_schema())
    assert (report["schema"], report["version"]) == ("adk-eval.report", 1)
    assert report["summary"]["passed"] == 1
    assert report["summary"]["failed"] == 1
    failed = next(r for r in report["results"] if r["name"] == "escalates")
    assert failed["metrics"]["escalated"]["passed"] is False
    assert "[user] help" in failed["transcript"]

    suite = ET.parse(junit_path).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["escalates"].find("failure").get("message") == "failed: escalated"
    assert cases["greets"].find("failure") is None
    properties = {p.get("name"): p.get("value") for p in cases["greets"].iter("property")}
    assert properties["status"] == "passed"
    assert properties["metric.replied"] == "pass 1"
    assert not (tmp_path / ".adk_eval").exists()


def test_keyword_selection_and_no_match(write_evals):
    root = write_evals({"mixed_eval.py": MIXED})
    selected = invoke("run", str(root), "-k", "greet", "--no-store")
    assert selected.exit_code == 0
    assert "escalates" not in selected.output
    none = invoke("run", str(root), "-k", "nothing", "--no-store")
    assert none.exit_code == 5
    assert "no case matches -k 'nothing' (found: greets, escalates)" in none.output


def test_repeat_shows_pass_hat_k(write_evals):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    result = invoke("run", str(root), "--repeat", "3", "--no-store")
    assert result.exit_code == 0, result.output
    assert "pass^k" in result.output
    assert "stable-pass" in result.output
    assert "3/3 44%-100%" in result.output  # its pass rate's 95 % interval
    assert "pass rate 100% [44%, 100%] (95% interval); pass^3 1/1 cases" in result.output
    assert "3/3" in result.output


def test_repeats_that_fail_the_same_way_are_explained_once(write_evals):
    root = write_evals({"mixed_eval.py": MIXED})
    result = invoke("run", str(root), "--repeat", "3", "--no-store")
    assert result.exit_code == 1
    assert result.output.count("EvalCase `escalates`: FAILED") == 1
    assert "3 runs ended this way (runs 1, 2, 3)" in result.output


def test_list_shows_cases_without_running_them(write_evals):
    root = write_evals({"mixed_eval.py": MIXED})
    result = invoke("list", str(root))
    assert result.exit_code == 0
    assert "greets" in result.output
    assert "escalates" in result.output
    assert "should escalate" in result.output
    assert "2 case(s)" in result.output


@pytest.mark.parametrize(
    ("files", "target", "message"),
    [
        ({}, "nowhere", "no such file, folder or module: "),
        (
            {"broken_eval.py": "raise ValueError('bad config')\n"},
            "broken_eval.py",
            "ValueError: bad config",
        ),
        ({"empty_eval.py": "x = 1\n"}, "empty_eval.py", "defines no EvalCase"),
        (  # a CI that checks nothing must not pass
            {"exiting_eval.py": ONLY_GOOD + "import sys\nsys.exit(0)\n"},
            "exiting_eval.py",
            "it called sys.exit(0) while being imported",
        ),
    ],
)
def test_discovery_problems_are_one_line_and_exit_2(write_evals, files, target, message):
    root = write_evals(files)
    result = invoke("run", str(root / target), "--no-store")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith("adk-eval: error:")
    assert message in lines[0]


@pytest.mark.parametrize("bad", ["garbage", "folder"])
def test_a_bad_runs_database_is_refused_before_any_case_runs(write_evals, tmp_path, bad):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    db = tmp_path / "runs.db"
    if bad == "folder":
        db.mkdir()
    else:
        db.write_text("not a database, just some text that SQLite cannot read" * 20)
    before = db.read_bytes() if db.is_file() else None
    result = CliRunner().invoke(main, ["run", str(root / "good_eval.py"), "--db", str(db)])
    assert result.exit_code == 2
    assert "error" in result.output.lower()
    assert str(db) in result.output
    assert "PASSED" not in result.output  # nothing ran
    assert "1 case(s)" not in result.output
    if before is not None:
        assert db.read_bytes() == before


def test_the_cli_writes_the_report_of_a_run_and_of_a_stored_run(write_evals, tmp_path):
    root = write_evals(
        {
            "greet_eval.py": """
            agent = LlmAgent(name="greeter", model=ScriptedLlm(responder=lambda r: "Hello"))
            CASES = [EvalCase(name="greets", agent=agent, first_message="hi")]
            """
        }
    )
    db = tmp_path / "runs.db"
    run = CliRunner().invoke(
        main, ["run", str(root), "--db", str(db), "--html", str(tmp_path / "run.html")]
    )
    assert run.exit_code == 0, run.output
    assert "HTML report:" in run.output
    stored = CliRunner().invoke(
        main, ["report", "--db", str(db), "--html", str(tmp_path / "1.html")]
    )
    assert stored.exit_code == 0, stored.output
    for name in ("run.html", "1.html"):
        assert '"name": "greets"' in (tmp_path / name).read_text()
    missing = CliRunner().invoke(main, ["report", "7", "--db", str(db), "--html", "x.html"])
    assert missing.exit_code == 2
    assert "no run 7" in missing.output


def test_repeat_auto_says_what_each_case_needed_and_what_it_saved(write_evals, tmp_path):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    report = tmp_path / "report.json"
    result = invoke(
        "run",
        str(root),
        "--repeat",
        "auto:9",
        "--concurrency",
        "1",
        "--no-store",
        "--json",
        str(report),
    )
    assert result.exit_code == 0, result.output
    assert "adaptive repeats auto:9 (threshold 50%, 95% interval): 4 runs instead of 9" in (
        result.output
    )
    assert "(5 saved); runs per case: greets 4" in result.output
    data = json.loads(report.read_text())
    assert data["adaptive"]["attempts_saved"] == 5
    assert data["cases"][0]["repeat"] == 4

    sharded = invoke("run", str(root), "--repeat", "auto", "--shard", "1/2", "--no-store")
    assert sharded.exit_code == 2
    assert "give --repeat N with --shard" in sharded.output
    typo = invoke("run", str(root), "--repeat", "sometimes", "--no-store")
    assert typo.exit_code == 2
    assert "neither a number of runs (>= 1) nor auto[:MAX]" in typo.output


MISFIT = """
from adk_eval import ToolMock

def lookup_order(order_id: str) -> dict:
    \"\"\"Looks an order up.\"\"\"
    raise AssertionError("mocked")


agent = LlmAgent(
    name="support",
    model=ScriptedLlm(
        [tool_call("lookup_order", {"id": "A1"}), "Which order?"], check_calls=False
    ),
    tools=[lookup_order],
)
case = EvalCase(
    name="asks-back",
    agent=agent,
    first_message="where is my order",
    tool_mocks={"lookup_order": ToolMock.returning({"status": "delivered"})},
)
"""


def test_a_passed_run_with_a_call_adk_rejected_says_so_in_the_terminal(write_evals):
    root = write_evals({"misfit_eval.py": MISFIT})
    result = invoke("run", str(root / "misfit_eval.py"), "--no-store")

    assert result.exit_code == 0, result.output
    assert "warnings of runs that passed:" in result.output
    line = next(x for x in result.output.splitlines() if "asks-back: call" in x)
    assert 'support -> lookup_order({"id": "A1"}): rejected by ADK: ' in line
    assert "did you mean `order_id`?" in line


def test_a_folder_of_workflow_app_agent_tool_and_remote_cases_ends_with_a_report(
    write_evals, tmp_path
):
    from tests.shapes_support import remote_server

    with remote_server() as server:
        source = f"""
from tests.shapes_support import agent_tool_case, app_case, remote_case, workflow_case

workflow = workflow_case()
app = app_case()
nested = agent_tool_case()
remote = remote_case({server.card_url!r})
"""
        root = write_evals({"shapes_eval.py": source})
        report_path = tmp_path / "report.json"
        result = invoke("run", str(root), "--json", str(report_path), "--no-store")

    assert server.requests == []  # not even the remote agent's card was fetched
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "3 passed, 1 error" in result.output
    assert "Remote agent `helper` (sub-agent `helper` of `root`) would be called" in result.output
    report = json.loads(report_path.read_text())
    jsonschema.validate(report, load_report_schema())
    statuses = {r["name"]: r["status"] for r in report["results"]}
    assert statuses == {
        "workflow": "passed",
        "app": "passed",
        "agent_tool": "passed",
        "remote": "error",
    }
    remote = next(r for r in report["results"] if r["name"] == "remote")
    assert remote["error"]["type"] == "EvalToolError"
    assert (
        remote["error"]["message"]
        .splitlines()[0]
        .endswith('remote_mocks={"helper": <the RemoteA2aAgent itself>}')
    )
