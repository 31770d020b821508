"""`adk-eval mock-mcp` as a real process, driven by ADK's own `McpToolset` and the mcp client.

Over stdio (ADK starts the command) and over streamable HTTP on 127.0.0.1: an ADK
agent on a `ScriptedLlm` calls a mocked tool and gets the mock's answer;
``tools/list`` shows only the declared tools; an unknown tool's call is an error
result; and the call log is a session store ``adk-eval score`` reads.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import (
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from google.genai import types
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from adk_eval.testing import ScriptedLlm, tool_call

pytestmark = pytest.mark.slow

TOOLS_FILE = Path(__file__).with_name("shop_tools.py")
DECLARED = ["get_order", "cancel_order", "refund"]
SCRIPT = [tool_call("get_order", {"order_id": "A1"}), "Order A1 has shipped."]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "adk_eval", "mock-mcp", str(TOOLS_FILE), *args]


def stdio_params(log: Path) -> StdioServerParameters:
    argv = command("--stdio", "--log", str(log))
    return StdioServerParameters(command=argv[0], args=argv[1:])


async def ask(toolset: McpToolset) -> list:
    """An ADK agent with `toolset` on a ScriptedLlm, run by a plain ADK runner: its events."""
    runner = InMemoryRunner(
        agent=LlmAgent(name="shopper", model=ScriptedLlm(SCRIPT), tools=[toolset])
    )
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Where is order A1?")])
    try:
        return [
            e
            async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
        ]
    finally:
        await toolset.close()


def mock_answer(events: list) -> dict:
    responses = [r for e in events for r in e.get_function_responses()]
    assert [r.name for r in responses] == ["get_order"]
    return responses[0].response


async def test_over_stdio_an_adk_agent_gets_the_mocks_answer(tmp_path):
    toolset = McpToolset(
        connection_params=StdioConnectionParams(
            server_params=stdio_params(tmp_path / "c.db"), timeout=30
        )
    )
    events = await ask(toolset)
    answer = mock_answer(events)
    assert answer["structuredContent"] == {"order_id": "A1", "status": "shipped"}
    assert answer["isError"] is False
    assert events[-1].content.parts[0].text == "Order A1 has shipped."


async def test_tools_list_shows_only_the_declared_tools_and_unknown_calls_fail_loudly(tmp_path):
    toolset = McpToolset(
        connection_params=StdioConnectionParams(
            server_params=stdio_params(tmp_path / "l.db"), timeout=30
        )
    )
    try:
        assert sorted(tool.name for tool in await toolset.get_tools()) == sorted(DECLARED)
    finally:
        await toolset.close()
    async with (
        stdio_client(stdio_params(tmp_path / "c.db")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        refused = await session.call_tool("delete_account", {"user": "u1"})
    assert list(tools) == DECLARED
    assert tools["refund"].input_schema["properties"] == {"amount": {"type": "number"}}
    assert tools["get_order"].description == "Looks an order up by its id."
    assert refused.is_error
    assert "unknown tool `delete_account`" in refused.content[0].text
    assert "`get_order`, `cancel_order`, `refund`" in refused.content[0].text


@pytest.fixture
def http_server(tmp_path) -> Iterator[tuple[str, Path, subprocess.Popen]]:
    """`adk-eval mock-mcp --http` on a free port of 127.0.0.1: its URL, call log and process."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "calls.db"
    server = subprocess.Popen(
        command("--http", f"127.0.0.1:{port}", "--log", str(log)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "the mock MCP server did not start listening"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", log, server
    finally:
        server.terminate()
        server.wait(10)
        if server.stderr is not None:
            server.stderr.close()


async def test_over_http_an_adk_agent_gets_the_mocks_answer_and_score_reads_the_log(
    http_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")  # no mTLS probe on loopback
    url, log, _ = http_server
    toolset = McpToolset(connection_params=StreamableHTTPConnectionParams(url=url, timeout=30))
    assert mock_answer(await ask(toolset))["structuredContent"]["status"] == "shipped"

    metrics = tmp_path / "mock_mcp_metrics.py"
    metrics.write_text(
        "from adk_eval.metrics import event_count_metric, never_called\n"
        "no_cancel = never_called('cancel_order')\n"
        "one_lookup = event_count_metric('one_lookup', 'tool_call', "
        "filter=lambda call: call.name == 'get_order', assertion=lambda n: n == 1)\n"
    )
    report = tmp_path / "report.json"
    score = [sys.executable, "-m", "adk_eval", "score", f"sqlite:///{log}"]
    flags = ["--metrics", str(metrics), "--include-open", "--no-store", "--json", str(report)]
    result = await anyio.run_process([*score, *flags], check=False)
    assert result.returncode == 0, result.stderr.decode()
    data = json.loads(report.read_text())
    (run,) = data["results"]
    assert {name: m["passed"] for name, m in run["metrics"].items()} == {
        "never_called(cancel_order)": True,
        "one_lookup": True,
    }
    assert run["name"].startswith("mock-mcp/google-adk/")  # app, then ADK's client name
    assert "mcp -> get_order" not in result.stdout.decode()  # passed: nothing to explain


async def test_two_plain_mcp_clients_at_once_each_get_their_own_session_closed_when_it_stops(
    http_server, tmp_path
):
    url, log, server = http_server
    answers: dict[str, list] = {}

    async def shop(name: str) -> None:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write, client_info=Implementation(name=name, version="1")) as s,
        ):
            await s.initialize()
            calls = [s.call_tool("get_order", {"order_id": name}) for _ in range(2)]
            answers[name] = [(await call).structured_content for call in calls]
            answers[name].append((await s.call_tool("get_order", {"id": 1})).is_error)

    async with anyio.create_task_group() as group:
        group.start_soon(shop, "agent-a")
        group.start_soon(shop, "agent-b")
    assert answers["agent-a"] == [{"order_id": "agent-a", "status": "shipped"}] * 2 + [True]
    assert answers["agent-b"] == [{"order_id": "agent-b", "status": "shipped"}] * 2 + [True]
    server.terminate()  # the sessions end as the server stops: scored without --include-open
    server.wait(10)
    metrics = tmp_path / "mock_mcp_calls_metrics.py"
    metrics.write_text(
        "from adk_eval.metrics import event_count_metric\n"
        "three = event_count_metric('three_calls', 'tool_call', assertion=lambda n: n == 3)\n"
    )
    report = tmp_path / "report.json"
    score = [sys.executable, "-m", "adk_eval", "score", f"sqlite:///{log}"]
    flags = ["--metrics", str(metrics), "--no-store", "--json", str(report)]
    result = await anyio.run_process([*score, *flags], check=False)
    assert result.returncode == 0, result.stderr.decode()
    runs = json.loads(report.read_text())["results"]
    assert sorted(run["name"].split("/")[1] for run in runs) == ["agent-a", "agent-b"]
    assert all(run["metrics"]["three_calls"]["passed"] for run in runs)
