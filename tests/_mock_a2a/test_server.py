"""``adk-eval mock-a2a`` serves a file's remote mocks over A2A, logs them; score reads the log."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

from adk_eval import EvalCase, EvalSetupError, run_eval
from adk_eval._mock_a2a import MockA2aServer
from adk_eval._mock_a2a._server import load_mocks
from adk_eval.testing import ScriptedLlm, tool_call
from tests.a2a_support import served
from tests.shapes_support import remote_agent, transferring_root

AGENTS = Path(__file__).with_name("agents_file.py")


def case_for(remote) -> EvalCase:
    hand_over = tool_call("transfer_to_agent", {"agent_name": "helper"})
    return EvalCase(
        name="served",
        agent=transferring_root(remote),
        first_message="book a flight",
        models={"root": ScriptedLlm([hand_over, "Back."])},
        remote_mocks={"helper": remote},
    )


def test_a_file_without_remote_mocks_is_one_line(tmp_path):
    empty = tmp_path / "agents.py"
    empty.write_text("x = 1\n")
    with pytest.raises(EvalSetupError, match="defines no `remote_mocks`"):
        load_mocks(empty)
    bad = tmp_path / "bad.py"
    bad.write_text("remote_mocks = {'helper': 42}\n")
    with pytest.raises(EvalSetupError, match=r"remote_mocks\['helper'\] must be named"):
        load_mocks(bad)
    assert list(load_mocks(AGENTS)) == ["helper"]


async def test_each_mock_has_its_card_at_its_path_and_no_other_path_answers():
    with served(MockA2aServer(load_mocks(AGENTS))) as server:
        async with httpx.AsyncClient() as client:
            card = (await client.get(server.card_url("helper"))).json()
            other = await client.get(server.card_url("other"))

    assert card["name"] == "helper"
    assert card["description"] == "Books flights."
    assert card["supportedInterfaces"][0]["url"] == f"{server.url}/helper/"
    assert card["capabilities"] == {"streaming": True}
    assert other.status_code == 404


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def command_server(tmp_path):
    """``adk-eval mock-a2a agents_file.py`` as a process on a free port, logging to a file."""
    log, port = tmp_path / "a2a.db", free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    args = [sys.executable, "-m", "adk_eval", "mock-a2a", str(AGENTS), "--http"]
    server = subprocess.Popen(
        [*args, f"127.0.0.1:{port}", "--log", str(log)], stderr=subprocess.PIPE, env=env
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "mock-a2a did not start listening"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/helper/.well-known/agent-card.json", log, server
    finally:
        server.terminate()
        server.wait(10)
        if server.stderr is not None:
            server.stderr.close()


@pytest.mark.slow
async def test_the_served_command_answers_adks_remote_agent_and_score_reads_its_log(
    command_server, tmp_path
):
    url, log, server = command_server
    async with httpx.AsyncClient() as client:
        result = await run_eval(case_for(remote_agent(url, client=client)))
    server.terminate()  # the log's sessions are closed as the server stops
    server.wait(10)
    mocked = dataclasses.replace(case_for(remote_agent(url)), remote_mocks=load_mocks(AGENTS))
    in_process = await run_eval(mocked)

    assert result.status == "passed", result.explain()
    helper = [(m.author, m.text) for m in result.trace.messages if m.author == "helper"]
    assert helper == [("helper", "Booked: Paris.")]
    assert helper == [(m.author, m.text) for m in in_process.trace.messages if m.author == "helper"]
    metrics = tmp_path / "metrics.py"
    metrics.write_text(
        "from adk_eval.metrics import event_count_metric\n"
        "one_reply = event_count_metric('one_reply', 'agent_message', "
        "filter=lambda m: m.author == 'helper' and m.text == 'Booked: Paris.', "
        "assertion=lambda n: n == 1)\n"
    )
    report = tmp_path / "report.json"
    score = [sys.executable, "-m", "adk_eval", "score", f"sqlite:///{log}", "--app", "mock-a2a"]
    flags = ["--metrics", str(metrics), "--no-store", "--json", str(report)]
    scored = await anyio.run_process([*score, *flags], check=False)
    assert scored.returncode == 0, scored.stderr.decode()
    (run,) = json.loads(report.read_text())["results"]
    assert run["metrics"]["one_reply"]["passed"], run
