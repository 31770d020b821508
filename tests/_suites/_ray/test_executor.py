"""Ray: a suite through a real Ray head node on 127.0.0.1, a task that fails, a cancellation,
and the three executors giving one suite for one seed (Ray's from the modules it shipped).

Ray is the optional extra ``adk-eval[ray]``. Without it these tests are skipped
locally; under ``make test`` (``ADK_EVAL_REQUIRE_RAY=1``) a missing Ray fails.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval import InProcess, Ray, Workers, run_eval_suite
from adk_eval._cli import main
from adk_eval._suites._discovery import import_file

from ..._reports import report_view
from ...conftest import default_sigint
from .._workers.test_executor import SUITE, alive, ctrl_c_once_blocked

pytestmark = pytest.mark.slow

# Read by Ray when it is imported: keep every port of the cluster on 127.0.0.1 (without it
# Ray swaps 127.0.0.1 for the machine's address and listens everywhere), no token auth, no
# usage stats. The driver (this process, and the CLI it starts) reads them too.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def ray_temp() -> Path:
    """The head node's temp dir (Ray's socket paths must stay short)."""
    return Path("/tmp") / f"adkeval-ray-{os.getpid()}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    """A Ray head node on 127.0.0.1 with 2 CPUs in its own temp dir; its address."""
    if importlib.util.find_spec("ray") is None:  # found without importing it (see RAY_ENV)
        if os.environ.get("ADK_EVAL_REQUIRE_RAY") == "1":
            pytest.fail("Ray is not installed: pip install -e '.[ray]' (make install does)")
        pytest.skip("Ray is not installed (pip install 'adk-eval[ray]')")
    for name, value in RAY_ENV.items():
        os.environ[name] = value  # before anything imports ray
    ray_bin = Path(sys.executable).parent / "ray"
    temp = ray_temp()
    port = free_port()
    env = {**os.environ, **RAY_ENV}
    start = [
        str(ray_bin),
        "start",
        "--head",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        "--num-cpus=2",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    # Its own process group: the cluster's processes stay in it, so stopping the group stops
    # this cluster only (`ray stop` would stop every Ray cluster of the user).
    starter = subprocess.Popen(
        start,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,  # the cluster's workers inherit it
    )
    output, _ = starter.communicate(timeout=120)
    assert starter.returncode == 0, output
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stop_group(starter.pid)
        shutil.rmtree(temp, ignore_errors=True)


def stop_group(group: int) -> None:
    """SIGKILL to the process group (a SIGTERM can leave Ray's GCS hanging in its shutdown)."""
    deadline = time.monotonic() + 10
    try:
        os.killpg(group, signal.SIGKILL)
        while time.monotonic() < deadline:
            os.killpg(group, 0)  # raises once the group is empty
            time.sleep(0.05)
    except ProcessLookupError:
        return


def write_suite(folder: Path, extra: str = "") -> Path:
    from ...conftest import CASE_HEADER

    path = folder / "ray_suite_eval.py"
    path.write_text(CASE_HEADER + SUITE + extra)
    return path


def test_a_suite_on_ray_gives_the_report_of_one_process(
    ray_head, tmp_path, monkeypatch, isolated_imports
):
    monkeypatch.chdir(tmp_path)  # the working directory is shipped to the Ray workers
    write_suite(tmp_path)
    run = CliRunner()
    common = ["run", "ray_suite_eval.py", "--repeat", "2", "--no-store", "--concurrency", "2"]
    here = run.invoke(main, [*common, "--json", "here.json"])
    on_ray = run.invoke(
        main, [*common, "--executor", "ray", "--address", ray_head, "--json", "ray.json"]
    )
    assert here.exit_code == 1, here.output
    assert on_ray.exit_code == 1, on_ray.output
    assert f"per Ray task, on {ray_head}" in on_ray.output
    assert report_view(tmp_path / "ray.json") == report_view(tmp_path / "here.json")


def test_a_task_that_fails_is_an_error_and_the_rest_finish(
    ray_head, tmp_path, monkeypatch, isolated_imports
):
    monkeypatch.chdir(tmp_path)
    write_suite(tmp_path, 'CASES.append(case("crasher", "ok", crash))\n')
    result = CliRunner().invoke(
        main,
        [
            "run",
            "ray_suite_eval.py",
            "--executor",
            "ray",
            "--address",
            ray_head,
            "--concurrency",
            "1",  # one case per task: only the crasher's task fails
            "--no-store",
            "-v",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "RayTaskFailed" in result.output
    assert "the Ray task running this case failed" in result.output
    assert "4 passed, 2 failed, 1 error" in " ".join(result.output.split())


def test_ctrl_c_cancels_the_tasks_on_the_cluster(ray_head, tmp_path):
    write_suite(tmp_path, 'CASES.append(case("blocker", "ok", block))\n')
    pid_file = tmp_path / "pid"
    env = {
        **os.environ,
        "ADK_EVAL_TEST_BLOCK_PID_FILE": str(pid_file),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    command = [sys.executable, "-m", "adk_eval", "run", "ray_suite_eval.py", "--no-store"]
    code, output = ctrl_c_once_blocked(
        [*command, "--executor", "ray", "--address", ray_head, "--concurrency", "1"],
        tmp_path,
        env,
        pid_file,
        settle=2,
        wait=60,
    )
    assert code == 130, output
    assert "Interrupted:" in output
    assert "Traceback" not in output
    assert not alive(int(pid_file.read_text()), within=20), "the Ray task outlived Ctrl-C"


FAULTY = """
FAULTY = [
    EvalCase(name=f"faulty-{i}", agent=c.agent, first_message="hi", metrics=c.metrics,
             tool_mocks={"lookup": ToolMock.returning({"value": 1}).with_faults(error_rate=0.5)})
    for i, c in enumerate(CASES)
]
"""


def files(folder: Path) -> set[str]:
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


async def test_in_process_workers_and_ray_give_one_suite_for_one_seed(
    ray_head, tmp_path, monkeypatch, isolated_imports
):
    # The suite is a package of a project run from a folder without it: Ray's workers can
    # import it only from the py_modules that Ray() ships by default.
    project = tmp_path / "project"
    (project / "raysuite").mkdir(parents=True)
    (project / "elsewhere").mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'raysuite'\n")
    (project / "raysuite" / "__init__.py").write_text("")
    (project / "raysuite" / ".env").write_text("PASSWORD=x\n")
    (project / "raysuite" / "runs.sqlite").write_text("")
    monkeypatch.chdir(project / "elsewhere")
    module = import_file(write_suite(project / "raysuite", FAULTY))
    assert module.__name__ == "raysuite.ray_suite_eval"
    before = files(project)
    cases = module.CASES + module.FAULTY
    executors = {"in process": InProcess(), "workers": Workers(2), "ray": Ray(address=ray_head)}

    def outcome(suite):
        runs = [
            (
                r.name,
                r.attempt,
                r.status,
                {name: (m.passed, m.value) for name, m in r.metrics.items()},
                [r.trace.source_of(call) for call in r.trace.select("tool_call")],
            )
            for r in suite.results
        ]
        return runs, suite.summary, suite.seed, [(c.name, c.passes, c.label) for c in suite.cases]

    outcomes = {
        name: outcome(
            await run_eval_suite(cases, executor=executor, repeat=2, seed=11, max_concurrency=2)
        )
        for name, executor in executors.items()
    }
    assert outcomes["workers"] == outcomes["in process"]
    assert outcomes["ray"] == outcomes["in process"]
    on_the_cluster = list(
        ray_temp().glob("session_*/runtime_resources/py_modules_files/*/raysuite")
    )
    assert on_the_cluster, "Ray's workers got no raysuite package"
    for copy in on_the_cluster:
        assert files(copy) == {"__init__.py", "ray_suite_eval.py"}  # no .env, no runs.sqlite
    assert files(project) == before  # nothing shipped is left in the project
    runs, summary, _, _ = outcomes["in process"]
    assert summary["total"] == 24
    assert summary["passed"]
    assert summary["failed"]
    assert {"fault", "mock"} <= {source for run in runs for source in run[4]}
