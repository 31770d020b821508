"""A toolset replaced as a whole never starts: tested with a real MCP server over stdio.

`mcp_server.py` is a real MCP server; ADK's `McpToolset` starts it as a process
when it lists its tools. It notes every start and every tool body in a marker
file, so each test can tell whether anything of it ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from mcp import StdioServerParameters

from adk_eval import EvalCase, EvalSetupError, ToolMock, ToolsetMock, run_eval
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
    assert result.trace.tool_calls[0].response == {"content": "hello"}
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
