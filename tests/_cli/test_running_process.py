"""``adk-eval run`` as a process of its own: how it stops, and its errors as clean results.

Ctrl-C, SIGTERM and ``--timeout`` stop it with what finished reported; a thread an eval
file leaves running does not hold its exit; it imports the project from its root; a pipe
gets plain text; an unmocked tool, or a mock or fault that raises, is one clean result on
stdout and nothing on stderr.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from adk_eval.reporting import RunStore, load_report_schema

from ..conftest import default_sigint
from .run_support import ONLY_GOOD, run_process


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


@pytest.mark.slow
def test_no_color_and_a_pipe_give_plain_text(tmp_path, write_evals):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    completed = run_process(root, "good_eval.py", env={"NO_COLOR": "1", "TERM": "xterm-256color"})

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "\x1b[" not in completed.stdout  # no escape codes in a CI log
    assert "1 passed" in completed.stdout


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
