"""``run --agent-a2a URL``: the cases drive a deployed agent over A2A instead of their own."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent

from adk_eval.testing import ScriptedLlm
from tests.deployed_support import served

from .run_support import invoke

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # ADK's experimental A2A notices

LOCAL = """
from adk_eval import ToolMock

def lookup(key: str) -> dict:
    '''Looks a key up.'''

agent = LlmAgent(name="local", model=ScriptedLlm(["Local answer."]), tools=[lookup])
users = UserAgents(loop=ScriptedUserAgent(name="u", script=["And then?"]))
case = EvalCase(
    name="asks",
    agent=agent,
    first_message="hi",
    user_agents=users,
    tool_mocks={"lookup": ToolMock.returning({"value": 1})},
    metrics=[event_count_metric("said", "agent_message", assertion=lambda n: n == 2)],
)
"""


def test_run_drives_the_deployed_agent_and_says_first_that_it_runs_for_real(write_evals, tmp_path):
    root = write_evals({"local_eval.py": LOCAL})
    with served(LlmAgent(name="far", model=ScriptedLlm(["Far answer.", "Far again."]))) as far:
        result = invoke("run", str(root / "local_eval.py"), "--agent-a2a", far.url, "--no-store")

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    block = lines.index("runs for real besides the tools the cases provide:")
    assert lines[block + 1] == (
        f"  deployed: agent `deployed_agent` over A2A at its agent card {far.url}/.well-known/"
        "agent-card.json: the agent under test, whole, in its own service (its tools and "
        "remote agents too, unless it points them at adk-eval mock-mcp and mock-a2a)"
    )
    said = [part["text"] for part in far.parts()]
    assert said == ["hi", "And then?"]  # the case's opening and user, sent to it
    assert "1 passed" in result.output


def test_run_with_an_agent_a2a_that_cannot_be_one_is_one_line(write_evals):
    root = write_evals({"local_eval.py": LOCAL})
    result = invoke("run", str(root / "local_eval.py"), "--agent-a2a", "ftp://x", "--no-store")

    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1] == (
        "adk-eval: error: --agent-a2a: EvalCase `asks`: `agent` is the URL of an agent served "
        "over A2A, got 'ftp://x'; give http(s)://HOST:PORT (or its agent card's URL)"
    )


def test_agent_a2a_with_worker_processes_is_one_line_before_anything_runs(write_evals):
    root = write_evals({"local_eval.py": LOCAL})
    url = "http://127.0.0.1:1"
    args = ["run", str(root / "local_eval.py"), "--agent-a2a", url, "--workers", "2", "--no-store"]
    result = invoke(*args, "--repeat", "2")

    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "adk-eval: error: --agent-a2a runs the cases in this process: leave out --workers and "
        "--executor"
    )


def test_placement_chooses_this_process_unless_several_worker_processes_have_runs_to_share():
    from adk_eval._cli._selection import Placement
    from adk_eval._suites._local import InProcess
    from adk_eval._suites._workers._executor import Workers

    assert isinstance(Placement().choose(runs=5, default_model=None), InProcess)
    assert isinstance(Placement(workers=4).choose(runs=1, default_model=None), InProcess)
    two = Placement(workers=2).choose(runs=3, default_model=None)
    assert isinstance(two, Workers)
    assert (two.count, two.processes) == (2, 2)
    assert isinstance(Placement(workers=8).choose(runs=3, default_model=None), Workers)
    assert Placement(workers=8).choose(runs=3, default_model=None).processes == 3
    assert isinstance(Placement(workers="auto").choose(runs=1, default_model=None), InProcess)
