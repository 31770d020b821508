"""Worker processes: the same suite as one process, crashes, missing cases, stops, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from adk_eval import EvalCase, EvalSetupError, Workers, run_eval_suite
from adk_eval._cli import main
from adk_eval._suites._discovery import import_file
from adk_eval._suites._results import EvalSuiteResult
from adk_eval._suites._workers._pool import AUTO_PROBE_SECONDS
from adk_eval.reporting import RunStore, suite_report

from ..._reports import report_view
from ...conftest import default_sigint

pytestmark = pytest.mark.slow  # every test spawns worker processes (about 1.5 s each)

SUITE = """
import multiprocessing
import os
import signal
import time

from adk_eval import ToolMock


def lookup(key: str) -> dict:
    '''Looks a key up.'''
    return {"value": key}


def case(name, reply, effect=None):
    def answer(args, ctx):
        if effect is not None:
            effect()
        return {"value": args["key"]}

    agent = LlmAgent(
        name="a",
        tools=[lookup],
        model=ScriptedLlm([tool_call("lookup", {"key": name}), reply]),
    )
    said = event_count_metric("said_ok", "agent_message", lambda m: m.text == "ok",
                              lambda n: n >= 1)
    return EvalCase(name=name, agent=agent, first_message="hi", metrics=[said],
                    tool_mocks={"lookup": ToolMock(answer)})


def crash():
    os.kill(os.getpid(), signal.SIGKILL)


def block():
    with open(os.environ["ADK_EVAL_TEST_BLOCK_PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)


CASES = [case(f"case-{i}", "ok" if i % 3 else "no") for i in range(6)]
"""


def load(write_evals, extra: str = "", name: str = "suite_eval.py"):
    root = write_evals({name: SUITE + extra})
    return import_file(root / name), root


def view(suite: EvalSuiteResult, tmp_path: Path, name: str) -> list:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(suite_report(suite)))
    return report_view(path)


async def test_workers_give_the_same_suite_as_one_process(write_evals, tmp_path):
    module, _ = load(write_evals)
    started, seen = [], []
    on_workers = await run_eval_suite(
        module.CASES,
        repeat=2,
        executor=Workers(2),
        on_start=lambda case, attempt: started.append((case.name, attempt)),
        on_result=seen.append,
    )
    here = await run_eval_suite(module.CASES, repeat=2)

    assert view(on_workers, tmp_path, "workers") == view(here, tmp_path, "here")
    assert on_workers.summary["passed"] == 8
    assert on_workers.summary["failed"] == 4
    assert sorted(started) == sorted((r.name, r.attempt) for r in seen)
    assert len(seen) == 12
    assert [e.author for e in on_workers.results[0].events] == [
        e.author for e in here.results[0].events
    ]


async def test_a_worker_that_dies_fails_its_runs_and_the_rest_go_on(write_evals):
    module, _ = load(write_evals, 'CASES.append(case("crasher", "ok", crash))\n')

    suite = await run_eval_suite(
        module.CASES, executor=Workers(2, run_while_starting=False), max_concurrency=1
    )

    crashed = next(r for r in suite.results if r.name == "crasher")
    assert crashed.status == "error"
    assert crashed.error.type == "WorkerDied"
    assert "killed by SIGKILL" in crashed.error.message
    others = [r for r in suite.results if r.name != "crasher"]
    assert len(others) == 6
    assert not suite.not_run
    assert {r.status for r in others} == {"passed", "failed"}


async def test_a_case_the_worker_does_not_define_is_an_error_naming_it(write_evals):
    module, _ = load(write_evals)
    module.CASES.append(module.case("added-at-run-time", "ok"))  # only in this process

    # Only workers run cases: this process would run it as it is (and a forked worker too).
    suite = await run_eval_suite(module.CASES, executor=Workers(2, run_while_starting=False))

    missing = next(r for r in suite.results if r.name == "added-at-run-time")
    assert missing.status == "error"
    assert missing.error.phase == "setup"
    assert "`added-at-run-time`" in missing.error.message
    assert "not when a worker process imports it" in missing.error.message
    assert sum(r.status == "passed" for r in suite.results) == 4


async def test_a_module_that_fails_to_import_in_a_worker_is_an_error(write_evals):
    guard = 'if multiprocessing.parent_process() is not None:\n    raise RuntimeError("boom")\n'
    module, _ = load(write_evals, guard)

    suite = await run_eval_suite(module.CASES[:2], executor=Workers(2, run_while_starting=False))

    assert {r.error.type for r in suite.results} == {"CaseImportError"}
    assert "cannot import `suite_eval`: RuntimeError: boom" in suite.results[0].error.message


async def test_a_case_no_module_binds_is_refused_before_anything_starts():
    from google.adk.agents import LlmAgent

    from adk_eval.testing import ScriptedLlm

    case = EvalCase(
        name="local", agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])), first_message="hi"
    )
    with pytest.raises(EvalSetupError, match=r"module-level name.*`local`"):
        await run_eval_suite([case], executor=Workers(2))


async def test_stop_on_first_failure_stops_every_worker(write_evals, tmp_path, monkeypatch):
    monkeypatch.setenv("ADK_EVAL_TEST_BLOCK_PID_FILE", str(tmp_path / "pid"))
    module, _ = load(write_evals, 'CASES.insert(0, case("blocker", "ok", block))\n')

    suite = await run_eval_suite(
        module.CASES, executor=Workers(2, run_while_starting=False), stop_on_first_failure=True
    )

    assert suite.stopped_early
    assert "blocker" in suite.not_run, [r.explain() for r in suite.results]
    assert any(r.status == "failed" for r in suite.results)
    pid = int((tmp_path / "pid").read_text())
    assert not alive(pid), "the blocked worker outlived the suite"


def test_the_cli_with_workers_writes_the_report_of_one_process(write_evals, tmp_path):
    _, root = load(write_evals)
    run = CliRunner()
    reports = {}
    for workers in ("1", "2"):
        reports[workers] = tmp_path / f"w{workers}.json"
        result = run.invoke(
            main,
            [
                "run",
                str(root),
                "--workers",
                workers,
                "--repeat",
                "2",
                "--no-store",
                "--json",
                str(reports[workers]),
                "--junit-xml",
                str(tmp_path / f"w{workers}.xml"),
            ],
        )
        assert result.exit_code == 1, result.output  # case-0 and case-3 fail
    assert "2 worker processes" in result.output
    assert report_view(reports["2"]) == report_view(reports["1"])
    assert (tmp_path / "w2.xml").read_text().count("<testcase") == 12

    bad = run.invoke(main, ["run", str(root), "--workers", "0"])
    assert bad.exit_code == 2
    assert "'0' is not a count >= 1 or 'auto'" in bad.output


def test_ctrl_c_stops_every_worker_and_prints_what_finished(write_evals, tmp_path):
    _, root = load(write_evals, 'CASES.append(case("blocker", "ok", block))\n')
    pid_file = tmp_path / "pid"
    env = {
        **os.environ,
        "ADK_EVAL_TEST_BLOCK_PID_FILE": str(pid_file),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    command = [sys.executable, "-m", "adk_eval", "run", str(root / "suite_eval.py")]
    code, output = ctrl_c_once_blocked(
        [*command, "--workers", "2", "--no-store"], tmp_path, env, pid_file, settle=1, wait=30
    )
    assert code == 130, output
    assert "Interrupted: 6 of 7 runs finished" in output
    assert "FAILED     case-0" in output
    assert "Traceback" not in output
    assert not alive(int(pid_file.read_text())), "a worker outlived Ctrl-C"


def test_sigterm_keeps_what_finished_on_workers_like_ctrl_c(write_evals, tmp_path):
    _, root = load(write_evals, 'CASES.append(case("blocker", "ok", block))\n')
    pid_file = tmp_path / "pid"
    env = {
        **os.environ,
        "ADK_EVAL_TEST_BLOCK_PID_FILE": str(pid_file),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    reports = ["--json", "r.json", "--results", "res.json", "--db", "runs.db"]
    command = [sys.executable, "-m", "adk_eval", "run", str(root / "suite_eval.py"), *reports]
    code, output = ctrl_c_once_blocked(
        [*command, "--workers", "2"],
        tmp_path,
        env,
        pid_file,
        settle=1,
        wait=30,
        signum=signal.SIGTERM,
    )
    assert code == 143, output
    assert "Terminated (SIGTERM): 6 of 7 runs finished" in output
    assert "Traceback" not in output
    assert not alive(int(pid_file.read_text())), "a worker outlived SIGTERM"
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["interrupted"] is True
    assert report["not_run"] == ["blocker"]
    assert len(json.loads((tmp_path / "res.json").read_text())["results"]) == 6
    (stored,) = RunStore(tmp_path / "runs.db").runs()
    assert stored.command.endswith("(interrupted)")


def ctrl_c_once_blocked(
    command: list[str],
    cwd: Path,
    env: dict,
    pid_file: Path,
    *,
    settle: float,
    wait: float,
    signum: int = signal.SIGINT,
) -> tuple[int, str]:
    """Runs `command` until the blocking case wrote `pid_file`, presses Ctrl-C once.

    The command runs in its own process group with a terminal's SIGINT, and the
    group gets the SIGINT, as a terminal's Ctrl-C reaches it (or `signum`: a CI's
    SIGTERM reaches the group too). Returns the exit code and the output.
    """
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the blocking case never started"
            time.sleep(0.1)
        time.sleep(settle)  # let the other cases finish
        os.killpg(process.pid, signum)
        output, _ = process.communicate(timeout=wait)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return process.returncode, output


def alive(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    return True


async def test_workers_inject_the_same_faults_as_one_process_for_one_seed(write_evals):
    extra = """
FAULTY = [
    EvalCase(name=f"faulty-{i}", agent=c.agent, first_message="hi",
             tool_mocks={"lookup": ToolMock.returning({"value": 1}).with_faults(error_rate=0.5)})
    for i, c in enumerate(CASES)
]
"""
    module, _ = load(write_evals, extra)

    def sources(suite):
        return {
            (r.name, r.attempt): [r.trace.source_of(c) for c in r.trace.select("tool_call")]
            for r in suite.results
        }

    here = await run_eval_suite(module.FAULTY, repeat=2, seed=8)
    there = await run_eval_suite(module.FAULTY, repeat=2, seed=8, executor=Workers(2))
    assert there.seed == here.seed == 8
    assert sources(there) == sources(here)
    assert {"fault", "mock"} == {s for calls in sources(here).values() for s in calls}


PARENT_DIES = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from adk_eval._suites._jobs import CaseRef, Job, WorkerSetup
from adk_eval._suites._workers._process import WorkerProcess

if __name__ == "__main__":
    worker = WorkerProcess(WorkerSetup())
    print(worker.process.pid, flush=True)
    if sys.argv[2] == "in flight":
        while worker.ready_after is None:
            worker.receive()
            time.sleep(0.01)
        worker.send(CaseRef("slow_eval", "slow"), Job("slow", 0))
        time.sleep(0.3)
    os._exit(0)  # the parent dies: before its worker is ready, or with a run in flight
"""

SLOW = """
import time
from adk_eval import ToolMock

def wait(key: str) -> dict:
    '''Waits.'''
    return {}

def answer(args, ctx):
    time.sleep(1)
    return {"done": True}

slow = EvalCase(name="slow", first_message="hi", tool_mocks={"wait": ToolMock(answer)},
                agent=LlmAgent(name="a", tools=[wait],
                               model=ScriptedLlm([tool_call("wait", {"key": "k"}), "ok"])))
"""


@pytest.mark.parametrize("when", ["starting", "in flight"])
def test_a_worker_whose_parent_died_exits_without_a_traceback(tmp_path, when):
    from ...conftest import CASE_HEADER

    (tmp_path / "slow_eval.py").write_text(CASE_HEADER + SLOW)
    (tmp_path / "parent.py").write_text(PARENT_DIES)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "parent.py"), str(tmp_path), when],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,  # stderr closes once the worker, which shares it, has exited too
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 0, done.stderr
    assert not alive(int(done.stdout.split()[0])), "the worker outlived its parent"
    assert "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipe" not in done.stderr


MARKS_IMPORT = """
from pathlib import Path
Path(__file__).with_name("imported.txt").write_text("yes")
"""


def test_a_worker_imports_its_case_modules_before_it_says_it_is_ready(tmp_path, monkeypatch):
    import time

    from adk_eval._suites._jobs import WorkerSetup
    from adk_eval._suites._workers._process import WorkerProcess

    (tmp_path / "marks_eval.py").write_text(MARKS_IMPORT)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    worker = WorkerProcess(WorkerSetup(preload=("marks_eval",)))
    try:
        deadline = time.monotonic() + 60
        while worker.ready_after is None and time.monotonic() < deadline:
            worker.receive()
            time.sleep(0.01)
        assert worker.ready_after is not None
        assert (tmp_path / "imported.txt").read_text() == "yes"  # loaded before "ready"
    finally:
        worker.stop(kill=False)


def session_processes(sid: int) -> list[int]:
    """The live processes of session `sid` (Linux), zombies left out."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (name) "
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(entry.name))
    return found


LIBRARY_RUN = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
import suite_eval
from adk_eval import Workers, run_eval_suite

if __name__ == "__main__":
    asyncio.run(run_eval_suite(suite_eval.CASES, executor=Workers(2), max_concurrency=1))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["adk-eval run (forked ahead)", "library (fork server)"])
def test_a_parent_killed_outright_leaves_no_process_behind(write_evals, tmp_path, how):
    _, root = load(write_evals, 'CASES.insert(0, case("blocker", "ok", block))\n')
    pid_file = tmp_path / "pid"
    env = {
        **os.environ,
        "ADK_EVAL_TEST_BLOCK_PID_FILE": str(pid_file),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    if how.startswith("library"):
        (tmp_path / "library_run.py").write_text(LIBRARY_RUN)
        command = [sys.executable, str(tmp_path / "library_run.py"), str(root)]
    else:
        command = [sys.executable, "-m", "adk_eval", "run", str(root / "suite_eval.py")]
        command += ["--workers", "2", "--no-store", "--concurrency", "1"]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, start_new_session=True, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():
            assert process.poll() is None, "the suite ended before the blocking case started"
            assert time.monotonic() < deadline, "the blocking case never started"
            time.sleep(0.1)
        assert len(session_processes(process.pid)) >= 2  # the parent and its workers
        process.kill()  # the parent alone, as an OOM kill or a crash would end it
        process.wait()
        deadline = time.monotonic() + 10
        while session_processes(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert session_processes(process.pid) == [], "processes outlived their parent"
    finally:
        for pid in session_processes(process.pid):
            os.kill(pid, signal.SIGKILL)


def test_workers_forked_ahead_give_the_report_of_one_process(write_evals, tmp_path):
    _, root = load(write_evals)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    outputs = {}
    options = ["--repeat", "2", "--seed", "3", "--no-store"]
    for workers in ("1", "2"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "adk_eval",
                "run",
                "suite_eval.py",
                "--workers",
                workers,
                *options,
                "--json",
                f"w{workers}.json",
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stdout + done.stderr  # case-0 and case-3 fail
        outputs[workers] = done.stdout
    # The command is one thread before its event loop: it forks its workers ahead.
    assert "processes: 2 worker process(es), 2 forked ahead" in outputs["2"]
    assert "processes:" not in outputs["1"]
    assert report_view(root / "w2.json") == report_view(root / "w1.json")


async def test_auto_runs_a_short_suite_in_this_process_and_says_why(write_evals):
    module, _ = load(write_evals)

    suite = await run_eval_suite(module.CASES, executor=Workers("auto"))

    assert suite.summary["passed"] == 4
    assert suite.placement.startswith("auto: this process only: ")
    assert "pay off" in suite.placement
    assert suite.duration_ms < 1000 * AUTO_PROBE_SECONDS  # it did not wait to decide


ENV_CASE = """
def read_env(args, ctx):
    return {"value": os.environ.get("ADK_EVAL_TEST_MARK", "unset")}

ENV = [EvalCase(name="env", agent=CASES[0].agent, first_message="hi",
                tool_mocks={"lookup": ToolMock(read_env)})]
"""


async def test_a_worker_sees_the_parents_environment_of_now(write_evals, monkeypatch):
    module, _ = load(write_evals, ENV_CASE)
    await run_eval_suite(module.CASES[:1], executor=Workers(1, run_while_starting=False))
    monkeypatch.setenv("ADK_EVAL_TEST_MARK", "set after the fork server started")

    suite = await run_eval_suite(module.ENV, executor=Workers(1, run_while_starting=False))

    (call,) = suite.results[0].trace.select("tool_response")
    assert call.response == {"value": "set after the fork server started"}


async def test_workflow_app_and_agent_tool_runs_come_back_from_workers_whatever_they_hold(
    write_evals,
):
    source = (
        "from tests.shapes_support import agent_tool_case, app_case, workflow_case\n"
        "CASES = [workflow_case(), app_case(), agent_tool_case()]\n"
    )
    root = write_evals({"shapes_eval.py": source})
    module = import_file(root / "shapes_eval.py")

    with anyio.fail_after(30):  # a result a worker cannot send back must not hang the suite
        suite = await run_eval_suite(module.CASES, executor=Workers(2, run_while_starting=False))

    assert [(r.name, r.status) for r in suite.results] == [
        ("workflow", "passed"),
        ("app", "passed"),
        ("agent_tool", "passed"),
    ], [r.explain() for r in suite.results]
    workflow = suite.results[0]
    (output,) = [e.output for e in workflow.events if isinstance(e.output, dict)]
    assert output["guard"].startswith("<unlocked _thread.lock object")  # its repr, in the data
    assert workflow.final_state["session"]["formatter"].startswith("<function open_ledger.")


async def test_a_run_a_worker_cannot_send_back_is_an_error_and_the_suite_ends(write_evals):
    extra = """

class Unwritable:
    def __repr__(self):
        raise RuntimeError("read me and I raise")


def poison(args, ctx):
    return {"value": Unwritable()}  # neither JSON nor a repr: to_data raises


CASES.append(EvalCase(
    name="poisoned",
    agent=LlmAgent(name="a", tools=[lookup],
                   model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "ok"])),
    first_message="hi",
    tool_mocks={"lookup": ToolMock(poison)},
))
"""
    module, _ = load(write_evals, extra)

    with anyio.fail_after(60):  # it hung: the worker ended while its pipe reader waited
        suite = await run_eval_suite(module.CASES, executor=Workers(2, run_while_starting=False))

    poisoned = next(r for r in suite.results if r.name == "poisoned")
    assert poisoned.status == "error"
    assert poisoned.error.type == "WorkerResultError"
    assert "read me and I raise" in poisoned.error.message
    assert len(suite.results) == 7
    assert not suite.not_run
