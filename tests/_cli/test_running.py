"""The adk-eval command: exit codes, tables, reports, stored runs, compare, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval.reporting import RunStore, load_report_schema

from ..conftest import default_sigint

MIXED = """
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
replied = event_count_metric("replied", "agent_message", assertion=lambda n: n == 1)
never = state_metric("escalated", "session", "escalation", lambda v: v == "999")
good = EvalCase(name="greets", agent=agent, first_message="hi", metrics=[replied])
bad = EvalCase(name="escalates", agent=agent, first_message="help", metrics=[never],
               description="should escalate")
"""

ONLY_GOOD = """
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
good = EvalCase(name="greets", agent=agent, first_message="hi")
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_process(folder, *args: str, env: dict[str, str] | None = None):
    """``python -m adk_eval run ARGS --no-store`` as a process of its own, in `folder`."""
    return subprocess.run(
        [sys.executable, "-m", "adk_eval", "run", *args, "--no-store"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


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


def test_fail_under_accepts_a_pass_rate(write_evals):
    root = write_evals({"mixed_eval.py": MIXED})
    assert invoke("run", str(root), "--fail-under", "0.5", "--no-store").exit_code == 0
    low = invoke("run", str(root), "--fail-under", "0.9", "--no-store")
    assert low.exit_code == 1
    assert "pass rate 50% (required 90%)" in low.output


BROKEN = """
def refund(order: str) -> dict:
    '''Refunds an order (a real side effect).'''
    raise AssertionError("the real refund ran")

def lookup(key: str) -> dict:
    '''Looks an order up.'''
    return {}

def crash(args, ctx):
    raise RuntimeError("mock bug")

agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
greets = [EvalCase(name=f"greets-{i}", agent=agent, first_message="hi") for i in range(4)]
unmocked = EvalCase(name="unmocked", first_message="refund A1", agent=LlmAgent(
    name="r", tools=[refund], model=ScriptedLlm([tool_call("refund", {"order": "A1"}), "ok"])))
crashed = EvalCase(name="crashed", first_message="look", tool_mocks={"lookup": ToolMock(crash)},
    agent=LlmAgent(name="l", tools=[lookup],
                   model=ScriptedLlm([tool_call("lookup", {"key": "A1"}), "ok"])))
"""


def test_fail_under_never_lets_an_error_through_unless_told(write_evals):
    root = write_evals({"broken_eval.py": "from adk_eval import ToolMock\n" + BROKEN})
    gated = invoke("run", str(root), "--fail-under", "0.3", "--no-store")
    assert gated.exit_code == 1, gated.output
    assert "pass rate 67% (required 30%)" in gated.output
    assert "2 run(s) ended in error" in gated.output
    allowed = invoke("run", str(root), "--fail-under", "0.3", "--allow-errors", "--no-store")
    assert allowed.exit_code == 0, allowed.output


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


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
@pytest.mark.slow
def test_ctrl_c_or_sigterm_stops_the_run_and_reports_what_finished(tmp_path, signum, code, said):
    (tmp_path / "slow_eval.py").write_text(
        """
import anyio
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

async def hang(request):
    await anyio.sleep_forever()

def case(name, model):
    return EvalCase(name=name, agent=LlmAgent(name="a", model=model), first_message="hi")

quick = case("quick", ScriptedLlm(["ok"]))
stuck_1 = case("stuck-1", ScriptedLlm(responder=hang))
stuck_2 = case("stuck-2", ScriptedLlm(responder=hang))
"""
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-X",
            "faulthandler",
            "-m",
            "adk_eval",
            "run",
            str(tmp_path / "slow_eval.py"),
            "--json",
            "r.json",
            "--junit-xml",
            "junit.xml",
            "--db",
            "runs.db",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        # A shell's background jobs inherit SIGINT as ignored, and so would this child
        # (it then ignores Ctrl-C, as it should): give it a terminal's default disposition.
        # SIGTERM must work either way: a CI job ignores SIGINT.
        preexec_fn=default_sigint if signum == signal.SIGINT else ignore_sigint,
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:  # non-terminal output: one line per finished run
        lines.append(line)
        if "quick" in line:
            break
    process.send_signal(signum)
    try:
        rest, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # -X faulthandler: SIGABRT makes the child print every thread's stack, then die.
        process.send_signal(signal.SIGABRT)
        dump, _ = process.communicate(timeout=30)
        pytest.fail(f"adk-eval run ignored {signum!r} for 60 s; its threads:\n{dump[-8000:]}")
    output = "".join(lines) + rest
    assert process.returncode == code, output
    assert f"{said}: 1 of 3 runs finished" in output
    assert "PASSED     quick" in output
    assert "Traceback" not in output
    # what finished is kept: the reports and the stored run, marked interrupted
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, load_report_schema())
    assert report["interrupted"] is True
    assert [r["name"] for r in report["results"]] == ["quick"]
    assert sorted(report["not_run"]) == ["stuck-1", "stuck-2"]
    assert report["summary"]["not_run"] == 2
    suites = ET.parse(tmp_path / "junit.xml").getroot()
    assert len(suites.findall(".//testcase")) == 3
    assert len(suites.findall(".//testcase/skipped")) == 2
    (stored,) = RunStore(tmp_path / "runs.db").runs()
    assert stored.command.endswith("(interrupted)")
    assert (stored.total, stored.passed) == (3, 1)


def ignore_sigint() -> None:
    """`preexec_fn` of a CI's background job: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
def test_an_unmocked_tool_is_one_clean_result_on_stdout_and_nothing_on_stderr(tmp_path):
    (tmp_path / "tools.py").write_text(
        'def refund(order: str) -> dict:\n    """Refunds an order."""\n'
        '    raise AssertionError("the real refund ran")\n'
    )
    (tmp_path / "refund_eval.py").write_text(
        """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm, tool_call
from tools import refund

billing = LlmAgent(name="billing", model=ScriptedLlm([tool_call("refund", {"order": "A1"})]),
                   tools=[refund])
root = LlmAgent(name="root", model=ScriptedLlm([tool_call("transfer_to_agent",
                {"agent_name": "billing"})]), sub_agents=[billing])
refunds = EvalCase(name="refunds", agent=root, first_message="refund A1")
"""
    )
    completed = run_process(tmp_path, "refund_eval.py", env={"PYTHONPATH": str(tmp_path)})
    assert completed.returncode == 1, completed.stdout + completed.stderr
    # ADK may log a line of advice about the app (context caching), never the stop itself
    assert "Traceback" not in completed.stderr + completed.stdout
    assert "refund" not in completed.stderr
    assert completed.stdout.count("error in the agent under test (EvalToolError):") == 1
    assert "Tool `refund` was called by sub-agent `billing` of `root`" in completed.stdout
    assert "from tools import refund" in completed.stdout  # the tool's own module
    assert completed.stdout.rstrip().splitlines()[-1].startswith("1 error(s) in")


@pytest.mark.slow
def test_an_unmocked_tool_of_an_agent_in_a_workflow_is_one_line_per_case_and_no_stderr(tmp_path):
    (tmp_path / "flow_eval.py").write_text(
        """
from google.adk.agents import LlmAgent
from google.adk.workflow import START, Workflow
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm, tool_call

def lookup(topic: str) -> dict:
    \"\"\"Looks a topic up.\"\"\"
    raise AssertionError("the real lookup ran")

def shout(node_input: str) -> str:
    return str(node_input).upper()

def case(number):
    writer = LlmAgent(name="writer", tools=[lookup],
                      model=ScriptedLlm([tool_call("lookup", {"topic": "owls"}), "done"]))
    flow = Workflow(name="pipeline", edges=[(START, writer, shout)])
    return EvalCase(name=f"flow-{number}", agent=flow, first_message="hi",
                    node_mocks={"shout": shout})

CASES = [case(number) for number in range(4)]
"""
    )
    completed = run_process(tmp_path, "flow_eval.py")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert completed.stderr == ""  # ADK's node runner logs no traceback of the refusals
    assert completed.stdout.count("error in the agent under test (EvalToolError):") == 4
    assert "  Tool `lookup` was called by node `writer` of workflow `pipeline`" in completed.stdout
    assert "Traceback" not in completed.stdout


@pytest.mark.slow
def test_a_mock_or_a_fault_that_raises_is_one_clean_result_and_adk_logs_nothing(tmp_path):
    (tmp_path / "raise_eval.py").write_text(
        """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase, ToolMock
from adk_eval.testing import ScriptedLlm, tool_call

def lookup(key: str) -> dict:
    "Looks up."
    return {}

def boom(args, ctx):
    raise RuntimeError("CRM down")

def agent():
    return LlmAgent(name="a", tools=[lookup],
                    model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "ok"]))

mock = EvalCase(name="mock-raises", first_message="hi", agent=agent(),
                tool_mocks={"lookup": ToolMock(boom)})
fault = EvalCase(name="fault-raises", first_message="hi", agent=agent(),
                 tool_mocks={"lookup": ToolMock.returning({}).with_faults(
                     error_rate=1.0, error=TimeoutError("slow"))})
"""
    )
    completed = run_process(tmp_path, "raise_eval.py", "--json", "r.json")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert completed.stderr == ""  # ADK logged no traceback of what the results report
    report = json.loads((tmp_path / "r.json").read_text())
    calls = {
        run["name"]: [e for e in run["conversation"] if e["kind"] == "tool_call"]
        for run in report["results"]
    }
    assert [(c["answered_by"], c["raised"]) for c in calls["mock-raises"]] == [
        ("mock", "RuntimeError: CRM down")  # the money-moving tool never ran
    ]
    assert [(c["answered_by"], c["raised"]) for c in calls["fault-raises"]] == [
        ("fault", "TimeoutError: slow")
    ]
    assert 'lookup({"key": "k"}) = its mock raised RuntimeError: CRM down' in completed.stdout
    assert "The mock for tool `lookup` raised RuntimeError: CRM down" in completed.stdout
    assert "The mock for tool `lookup` raised TimeoutError: slow" in completed.stdout
    assert completed.stdout.count("error in the agent under test (EvalToolError):") == 2


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


@pytest.mark.slow
def test_timeout_caps_each_runs_wall_time_and_cases_have_a_default(tmp_path):
    from adk_eval import TerminateWhen

    assert TerminateWhen().max_duration == 300  # nothing hangs forever by default
    (tmp_path / "hang_eval.py").write_text(
        """
import anyio
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

async def hang(request):
    await anyio.sleep_forever()

stuck = EvalCase(name="stuck", agent=LlmAgent(name="a", model=ScriptedLlm(responder=hang)),
                 first_message="hi")
"""
    )
    completed = run_process(tmp_path, "hang_eval.py", "--timeout", "0.5")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "TERMINATED" in completed.stdout
    assert "max_duration" in completed.stdout


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


FAULTY = """
from adk_eval import ToolMock

def lookup(key: str) -> dict:
    '''Looks a key up.'''

agent = LlmAgent(
    name="a",
    model=ScriptedLlm([*(tool_call("lookup", {"key": f"k{i}"}) for i in range(6)), "Done."]),
    tools=[lookup],
)
flaky = ToolMock.returning({"value": 1}).with_faults(error_rate=0.5)
cases = [
    EvalCase(name=f"c{n}", agent=agent, first_message="go", tool_mocks={"lookup": flaky})
    for n in range(3)
]
"""


def test_seed_injects_the_same_faults_again_and_is_printed_and_reported(write_evals, tmp_path):
    root = write_evals({"faulty_eval.py": FAULTY})

    def faults(seed: str | None, concurrency: str) -> tuple[str, dict]:
        report = tmp_path / f"r{seed}-{concurrency}.json"
        args = ["run", str(root), "--no-store", "--repeat", "2", "--json", str(report)]
        args += ["--concurrency", concurrency] + (["--seed", seed] if seed else [])
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        data = json.loads(report.read_text())
        jsonschema.validate(data, load_report_schema())
        answers = {
            (r["name"], r["attempt"]): [
                c["answered_by"] for c in r["conversation"] if c["kind"] == "tool_call"
            ]
            for r in data["results"]
        }
        return result.output, {"seed": data["seed"], "answers": answers}

    output, first = faults("42", "1")
    assert "seed 42)" in output.splitlines()[0]
    _, again = faults("42", "6")
    assert again == first  # the same faults at the same calls, at any concurrency
    assert first["seed"] == 42
    injected = [a for calls in first["answers"].values() for a in calls]
    assert 0 < injected.count("fault") < len(injected)
    output, other = faults(None, "6")
    assert f"seed {other['seed']})" in output.splitlines()[0]  # a new seed, printed
    assert other["answers"] != first["answers"]


@pytest.mark.slow
def test_a_thread_left_running_by_an_eval_file_does_not_hold_the_exit(tmp_path):
    (tmp_path / "threads_eval.py").write_text(
        """
import threading, time
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

threading.Thread(target=time.sleep, args=(3600,), name="poller").start()  # not a daemon
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
good = EvalCase(name="greets", agent=agent, first_message="hi")
"""
    )
    done = run_process(tmp_path, "threads_eval.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "left 1 thread(s) running (poller); exiting anyway" in done.stdout


@pytest.mark.slow
def test_the_command_imports_the_project_from_its_root_like_pytest(write_evals):
    root = write_evals(
        {
            "shop/__init__.py": "",
            "shop/agent.py": 'root_agent = LlmAgent(name="shop", model=ScriptedLlm(["hi"]))\n',
            "scratch/try_it.py": (
                "from shop.agent import root_agent\n"
                'CASE = EvalCase(name="scratch", agent=root_agent, first_message="x")\n'
            ),
        }
    )
    (root / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    command = os.path.join(os.path.dirname(sys.executable), "adk-eval")  # not `python -m`
    done = subprocess.run(
        [command, "run", "scratch/try_it.py", "--no-store"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


CALLBACK_AND_PROCESS = """
import subprocess

def guard(callback_context, llm_request):
    subprocess.run(["true"], check=True)

agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]), before_model_callback=guard)
guarded = EvalCase(name="guarded", agent=agent, first_message="hi")
"""


def test_run_says_what_runs_for_real_before_the_first_case_and_sandbox_strict_refuses(
    write_evals, tmp_path
):
    root = write_evals({"guard_eval.py": CALLBACK_AND_PROCESS})
    junit = tmp_path / "junit.xml"
    warned = invoke(
        "run",
        str(root / "guard_eval.py"),
        "--no-store",
        "--json",
        str(tmp_path / "r.json"),
        "--junit-xml",
        str(junit),
    )
    assert warned.exit_code == 0, warned.output
    lines = warned.output.splitlines()
    block = lines.index("runs for real besides the tools the cases provide:")
    assert lines[block + 1] == "  callbacks: guard_eval.guard (before_model_callback of agent `a`)"
    assert lines[block + 2].startswith("  sandbox: warn (every case): ")
    assert block < next(i for i, line in enumerate(lines) if "guarded" in line)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["runs_for_real"]["callbacks"] == [
        "guard_eval.guard (before_model_callback of agent `a`)"
    ]
    warning = (
        "sandbox: process `true` started, by before_model_callback guard_eval.guard of agent `a`"
    )
    assert report["results"][0]["warnings"] == [warning]
    # the run passed, so it is not explained: its warning is still on the terminal and in JUnit
    shown = lines.index("warnings of runs that passed:")
    assert lines[shown + 1] == f"  guarded: {warning}"
    assert shown < next(i for i, line in enumerate(lines) if line.startswith("1 passed in"))
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.find("failure") is None
    assert [
        (p.get("name"), p.get("value"))
        for p in case.iter("property")
        if p.get("name", "").startswith("warning.")
    ] == [("warning.1", warning)]
    assert case.findtext("system-err") == f"warning: {warning}"

    strict = invoke("run", str(root / "guard_eval.py"), "--no-store", "--sandbox", "strict")
    assert strict.exit_code == 1, strict.output
    assert "strict (every case)" in strict.output
    assert "EvalSandboxError" in strict.output
    assert "(refused: strict sandbox)" in strict.output
    assert "Traceback" not in strict.output


@pytest.mark.slow
def test_sandbox_strict_as_a_process_is_one_clean_line_and_adk_logs_no_traceback(write_evals):
    root = write_evals({"guard_eval.py": CALLBACK_AND_PROCESS})
    done = run_process(root, "guard_eval.py", "--sandbox", "strict")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ""  # ADK logs no "Node execution failed" traceback of the refusal
    refused = (
        "sandbox: process `true` started, by before_model_callback guard_eval.guard of agent "
        "`a` (refused: strict sandbox)"
    )
    assert done.stdout.splitlines().count(f"  {refused}") == 1  # the error, not a warning too
    assert "warning:" not in done.stdout
    assert "Traceback" not in done.stdout


@pytest.mark.slow
def test_run_names_the_vertex_project_and_credentials_it_will_bill(write_evals, tmp_path):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "x",
                "client_secret": "y",
                "refresh_token": "z",
            }
        )
    )
    env = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_APPLICATION_CREDENTIALS": str(adc),
        "GOOGLE_CLOUD_PROJECT": "eval-project",
        "HOME": str(tmp_path),
    }
    done = run_process(root, "good_eval.py", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("Vertex AI:")]
    assert line.startswith("Vertex AI: project eval-project (from GOOGLE_CLOUD_PROJECT), ")
    assert str(adc) in line


def test_merge_says_what_ran_for_real_in_the_shards_and_their_warnings(write_evals, tmp_path):
    root = write_evals({"guard_eval.py": CALLBACK_AND_PROCESS})
    results = tmp_path / "1.json"
    shard = invoke(
        "run",
        str(root / "guard_eval.py"),
        "--no-store",
        "--shard",
        "1/1",
        "--results",
        str(results),
    )
    assert shard.exit_code == 0, shard.output

    merged = invoke("merge", str(results), "--no-store")
    assert merged.exit_code == 0, merged.output
    lines = merged.output.splitlines()
    assert lines[0].endswith("merged 1 shard(s), 1 case(s)")
    assert lines[1:4] == [
        "runs for real besides the tools the cases provide:",
        "  callbacks: guard_eval.guard (before_model_callback of agent `a`)",
        "  sandbox: warn (every case): processes, signals, connections off this machine or to "
        "Unix sockets, binds, name lookups and file writes of the cases' own code (threads it "
        "starts included) are listed in each run's warnings",
    ]
    assert (
        "  guarded: sandbox: process `true` started, by before_model_callback guard_eval.guard "
        "of agent `a`"
    ) in lines


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


def test_max_tokens_stops_the_suite_and_says_what_did_not_run(write_evals):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    result = invoke(
        "run", str(root), "--repeat", "5", "--concurrency", "1", "--max-tokens", "1", "--no-store"
    )
    assert result.exit_code == 1, result.output  # runs not run: the suite is not ok
    assert "stopped: the suite's budget was spent (max_tokens: " in result.output
    assert "not run: greets" in result.output
    assert "tokens, cost unknown (no price for gemini-scripted)" in result.output


UNMOCKED = """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm, tool_call


def refund(order: str) -> dict:
    \"\"\"Refunds an order.\"\"\"
    return {"refunded": order}


broken = EvalCase(
    name="refunds",
    agent=LlmAgent(name="a", model=ScriptedLlm([tool_call("refund", {"order": "A1"})]),
                   tools=[refund]),
    first_message="refund A1",
)
"""


def test_fail_on_agent_still_fails_on_an_error_unless_errors_are_allowed(write_evals):
    root = write_evals({"broken_eval.py": UNMOCKED})

    everything = invoke("run", str(root), "--no-store")
    assert everything.exit_code == 1
    assert "failures by party: setup 1" in everything.output
    only_agent = invoke("run", str(root), "--no-store", "--fail-on", "agent")
    assert only_agent.exit_code == 1, only_agent.output  # a broken suite never passes silently
    assert "gate errors: FAILED: 1 run(s) ended in error" in only_agent.output
    assert "gate --fail-on agent: passed: 0 failure(s) count, 1 other(s)" in only_agent.output
    assert "attributed to: setup (confidence 0.95)" in only_agent.output
    allowed = invoke("run", str(root), "--no-store", "--fail-on", "agent", "--allow-errors")
    assert allowed.exit_code == 0, allowed.output
    on_setup = invoke("run", str(root), "--no-store", "--fail-on", "setup", "--allow-errors")
    assert on_setup.exit_code == 1


@pytest.mark.slow
def test_no_color_and_a_pipe_give_plain_text(tmp_path, write_evals):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    completed = run_process(root, "good_eval.py", env={"NO_COLOR": "1", "TERM": "xterm-256color"})

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "\x1b[" not in completed.stdout  # no escape codes in a CI log
    assert "1 passed" in completed.stdout


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
