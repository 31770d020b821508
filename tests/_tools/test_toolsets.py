"""A toolset replaced as a whole never starts: tested with a real MCP server over stdio.

`mcp_server.py` is a real MCP server; ADK's `McpToolset` starts it as a process
when it lists its tools. It notes every start and every tool body in a marker
file, so each test can tell whether anything of it ran.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import google.auth
import google.auth.exceptions
import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import (
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from mcp import StdioServerParameters

from adk_eval import EvalCase, EvalSetupError, ToolMock, ToolsetMock, run_eval
from adk_eval._tools._mtls import is_loopback_url, skip_mtls_probe
from adk_eval._tools._policy import ToolPolicy
from adk_eval.testing import ScriptedLlm, tool_call

SERVER = Path(__file__).with_name("mcp_server.py")
DECLARED = {
    "read_file": {
        "description": "Reads a text file from the project.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    "delete_file": {
        "description": "Deletes a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "force": {"type": "boolean"}},
            "required": ["path"],
        },
    },
}


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "server.log"


def files_toolset(marker: Path) -> McpToolset:
    return McpToolset(
        connection_params=StdioConnectionParams(
            server_params=StdioServerParameters(
                command=sys.executable,
                args=[str(SERVER)],
                env={"ADK_EVAL_TEST_MCP_MARKER": str(marker)},
            ),
            timeout=30,
        )
    )


def librarian(marker: Path, model) -> LlmAgent:
    return LlmAgent(name="librarian", model=model, tools=[files_toolset(marker)])


READS = [tool_call("read_file", {"path": "notes.txt"}), "It says: hello."]
ANSWER = {"read_file": ToolMock.returning({"content": "hello"})}
HELLO = {
    "content": [{"type": "text", "text": '{"content": "hello"}'}],
    "structuredContent": {"content": "hello"},
    "isError": False,
}
"""What the model reads when an MCP tool answers ``{"content": "hello"}``: a CallToolResult."""


async def test_without_a_toolset_mock_the_server_starts_though_every_call_is_mocked(marker):
    result = await run_eval(
        EvalCase(
            name="reads",
            agent=librarian(marker, ScriptedLlm(READS)),
            tool_mocks=ANSWER,
            first_message="What do my notes say?",
        )
    )
    assert result.status == "passed", result.explain()
    assert marker.read_text().splitlines() == ["started"]  # the process ran; no tool body did


async def test_a_toolset_mock_declares_the_tools_and_nothing_of_the_toolset_starts(marker):
    seen: list[list[str]] = []

    def model(request):
        seen.append(sorted(request.tools_dict))
        return READS[len(seen) - 1]

    result = await run_eval(
        EvalCase(
            name="reads",
            agent=librarian(marker, ScriptedLlm(responder=model)),
            toolset_mocks={"McpToolset": ToolsetMock(DECLARED)},
            tool_mocks=ANSWER,
            first_message="What do my notes say?",
        )
    )
    assert result.status == "passed", result.explain()
    assert seen[0] == ["delete_file", "read_file"]
    assert result.trace.tool_calls[0].response == HELLO  # as McpTool gives it
    assert not marker.exists()


async def test_a_declared_tool_without_a_mock_stops_the_run(marker):
    result = await run_eval(
        EvalCase(
            name="deletes",
            agent=librarian(marker, ScriptedLlm([tool_call("delete_file", {"path": "x"}), "ok"])),
            toolset_mocks={"McpToolset": ToolsetMock(DECLARED)},
            tool_mocks=ANSWER,
            first_message="Delete x",
        )
    )
    assert result.status == "error"
    assert "Tool `delete_file` was called by agent `librarian`" in result.error.message
    assert not marker.exists()


async def test_scripted_calls_are_checked_against_the_declared_schemas(marker):
    result = await run_eval(
        EvalCase(
            name="reads",
            agent=librarian(marker, ScriptedLlm([tool_call("read_file", {"file": "x"}), "ok"])),
            toolset_mocks={"McpToolset": ToolsetMock(DECLARED)},
            tool_mocks=ANSWER,
            first_message="Read x",
        )
    )
    assert result.status == "error"
    assert "`file` is not a parameter of `read_file`: did you mean `path`?" in result.error.message


@pytest.mark.slow
async def test_a_recording_declares_the_tools_as_the_server_listed_them(marker, tmp_path):
    recording = tmp_path / "files.tools.json"
    toolset = files_toolset(marker)
    recorded = await ToolsetMock.record(toolset, recording)
    assert marker.read_text().splitlines() == ["started"]  # recording starts it, once, on purpose

    real = {t.name: t._get_declaration() for t in await files_toolset(marker).get_tools()}
    replayed = ToolsetMock.from_recording(recording)
    assert (
        {d.name: d for d in replayed.declarations}
        == real
        == {d.name: d for d in recorded.declarations}
    )
    marker.unlink()

    result = await run_eval(
        EvalCase(
            name="reads",
            agent=librarian(marker, ScriptedLlm(READS)),
            toolset_mocks={"McpToolset": replayed},
            tool_mocks=ANSWER,
            first_message="What do my notes say?",
        )
    )
    assert result.status == "passed", result.explain()
    assert not marker.exists()


async def test_a_file_that_is_not_a_recording_is_refused_and_kept(marker, tmp_path):
    mine = tmp_path / "agent.py"
    mine.write_text("root_agent = ...\n")
    with pytest.raises(EvalSetupError, match="is not a toolset recording"):
        await ToolsetMock.record(files_toolset(marker), mine)
    assert mine.read_text() == "root_agent = ...\n"
    assert not marker.exists()
    (tmp_path / "old.json").write_text(json.dumps({"version": 99, "tools": []}))
    with pytest.raises(EvalSetupError, match="is not a toolset recording"):
        ToolsetMock.from_recording(tmp_path / "old.json")


def test_keys_name_one_toolset_of_the_tree(marker):
    toolset = files_toolset(marker)
    agent = LlmAgent(name="librarian", model=ScriptedLlm(["ok"]), tools=[toolset])
    by_object = EvalCase(
        name="x", agent=agent, first_message="hi", toolset_mocks={toolset: ToolsetMock(DECLARED)}
    )
    assert by_object.agent_under_test.tools[0] is not toolset
    assert agent.tools == [toolset]  # the user's agent is not changed
    with pytest.raises(EvalSetupError, match=r"key 'OpenAPIToolset' names no toolset.*McpToolset"):
        EvalCase(
            name="x",
            agent=agent,
            first_message="hi",
            toolset_mocks={"OpenAPIToolset": ToolsetMock(DECLARED)},
        )
    two = LlmAgent(name="two", model=ScriptedLlm(["ok"]), tools=[toolset, files_toolset(marker)])
    with pytest.raises(EvalSetupError, match="key 'McpToolset' is ambiguous"):
        EvalCase(
            name="x",
            agent=two,
            first_message="hi",
            toolset_mocks={"McpToolset": ToolsetMock(DECLARED)},
        )
    with pytest.raises(EvalSetupError, match="values must be ToolsetMock"):
        EvalCase(name="x", agent=agent, first_message="hi", toolset_mocks={"McpToolset": DECLARED})
    with pytest.raises(EvalSetupError, match="ToolsetMock needs its tools"):
        ToolsetMock({})


# --- MCP over streamable HTTP to 127.0.0.1: no mutual-TLS probe (`_tools/_mtls.py`) ---

HTTP_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
import mcp_server
mcp_server.note("started")
mcp_server.server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
"""


@pytest.fixture
def http_server(marker) -> Iterator[str]:
    """`mcp_server.py` served over streamable HTTP on a free port of 127.0.0.1; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-c", HTTP_SERVER, str(SERVER.parent), str(port)],
        env={**os.environ, "ADK_EVAL_TEST_MCP_MARKER": str(marker)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert server.poll() is None, "the MCP server exited"
                assert time.monotonic() < deadline, "the MCP server did not start listening"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def credential_lookups(monkeypatch) -> list[dict]:
    """Every `google.auth.default` call (ADK's mTLS probe makes one); each raises (no ADC)."""
    calls: list[dict] = []

    def default(*args, **kwargs):
        calls.append(kwargs)
        raise google.auth.exceptions.DefaultCredentialsError("no credentials in this test")

    monkeypatch.setattr(google.auth, "default", default)
    monkeypatch.delenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", raising=False)  # ADK: unset = "true"
    return calls


def http_librarian(url: str) -> LlmAgent:
    toolset = McpToolset(connection_params=StreamableHTTPConnectionParams(url=url, timeout=30))
    return LlmAgent(name="librarian", model=ScriptedLlm(READS), tools=[toolset])


async def test_an_mcp_toolset_on_loopback_connects_without_the_mtls_probe(
    http_server, marker, credential_lookups
):
    agent = http_librarian(http_server)
    result = await run_eval(
        EvalCase(name="reads", agent=agent, tool_mocks=ANSWER, first_message="What's in it?")
    )
    assert result.status == "passed", result.explain()
    assert credential_lookups == []  # google.auth.default() was never asked
    assert marker.read_text().splitlines() == ["started"]  # listed over HTTP; no tool body ran
    assert result.trace.tool_calls[0].response == HELLO  # the mock's answer, as McpTool gives it


async def test_client_certificates_asked_for_explicitly_keep_the_probe(
    http_server, credential_lookups, monkeypatch
):
    monkeypatch.setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "true")
    await run_eval(
        EvalCase(
            name="reads",
            agent=http_librarian(http_server),
            tool_mocks=ANSWER,
            first_message="What's in it?",
        )
    )
    assert credential_lookups  # ADK's probe ran, as the user asked


def mtls_probe_replaced(toolset: McpToolset) -> bool:
    return "_get_mtls_transport" in vars(toolset._mcp_session_manager)


def test_only_toolsets_to_this_machine_are_changed(marker):
    remote = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url="https://mcp.example.com/mcp")
    )
    assert not skip_mtls_probe(remote)
    assert not skip_mtls_probe(files_toolset(marker))  # stdio: no probe to skip
    assert not skip_mtls_probe(ToolsetMock(DECLARED).toolset())
    assert not mtls_probe_replaced(remote)
    for url in ("http://127.0.0.1:1/mcp", "http://localhost:1/mcp", "http://[::1]:1/sse"):
        params = (SseConnectionParams if url.endswith("sse") else StreamableHTTPConnectionParams)(
            url=url
        )
        local = McpToolset(connection_params=params)
        assert skip_mtls_probe(local)
        assert mtls_probe_replaced(local)
    assert not is_loopback_url("http://127.0.0.1.example.com/mcp")


async def test_the_tool_policy_leaves_a_remote_toolset_as_it_is(monkeypatch):
    remote = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url="https://mcp.example.com/mcp")
    )

    async def listed(readonly_context=None):  # listed without connecting anywhere
        return []

    monkeypatch.setattr(remote, "get_tools", listed)
    local = McpToolset(connection_params=StreamableHTTPConnectionParams(url="http://[::1]:1/mcp"))
    monkeypatch.setattr(local, "get_tools", listed)
    agent = LlmAgent(name="librarian", model=ScriptedLlm(["ok"]), tools=[remote, local])
    await ToolPolicy.build(agent, {})
    assert not mtls_probe_replaced(remote)
    assert mtls_probe_replaced(local)
