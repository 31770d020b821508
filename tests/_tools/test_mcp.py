"""What the model reads from an MCP tool, mocked any way: what ADK's real `McpToolset` gives it.

The same call goes through ADK's real `McpToolset` (to ``adk-eval mock-mcp`` or
the stdio server `mcp_server.py`) and through a `ToolsetMock` standing in for it:
the function response in the next model request must be the same, a
``CallToolResult``; the toolset's ``tool_filter`` and ``tool_name_prefix`` hold
for the stand-in as ADK applies them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.mcp_tool import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from mcp import StdioServerParameters

from adk_eval import EvalCase, ToolMock, ToolsetMock, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

from .test_toolsets import ANSWER, DECLARED, files_toolset


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "server.log"


MOCK_MCP_TOOLS = Path(__file__).parents[1] / "mock_mcp" / "shop_tools.py"
ORDER_CALL = [tool_call("get_order", {"order_id": "A1"}), "Order A1 has shipped."]


class Reads:
    """A ScriptedLlm responder noting each request: what the model reads (and is offered)."""

    def __init__(self, steps: list) -> None:
        self.steps, self.requests = steps, []
        self.result = None  # the run's EvalResult, under run_eval

    def __call__(self, request):
        self.requests.append(request)
        return self.steps[len(self.requests) - 1]

    def offered(self, turn: int = 0) -> list[str]:
        return sorted(self.requests[turn].tools_dict)

    def answer(self) -> dict:
        """The function response the model reads in the request after its call."""
        (response,) = [
            part.function_response.response
            for part in self.requests[1].contents[-1].parts
            if part.function_response is not None
        ]
        return response


def mock_mcp_toolset(**kwargs) -> McpToolset:
    """ADK's McpToolset over stdio to `adk-eval mock-mcp` serving the shop tools."""
    argv = ["-m", "adk_eval", "mock-mcp", str(MOCK_MCP_TOOLS), "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=argv)
    return McpToolset(
        connection_params=StdioConnectionParams(server_params=params, timeout=30), **kwargs
    )


async def through_adk(toolset: McpToolset, steps: list) -> Reads:
    """One conversation of a plain ADK runner: the real toolset calls the real server."""
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    reads = Reads(steps)
    agent = LlmAgent(
        name="shopper", model=ScriptedLlm(responder=reads, check_calls=False), tools=[toolset]
    )
    runner = InMemoryRunner(agent=agent)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Where is order A1?")])
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    finally:
        await toolset.close()
    return reads


async def through_the_stand_in(toolset, mock: ToolsetMock, steps: list, **case) -> Reads:
    """The same conversation under run_eval, the toolset replaced by `mock` (nothing starts)."""
    reads = Reads(steps)
    agent = LlmAgent(
        name="shopper", model=ScriptedLlm(responder=reads, check_calls=False), tools=[toolset]
    )
    reads.result = await run_eval(
        EvalCase(
            name="shop",
            agent=agent,
            toolset_mocks={toolset: mock},
            first_message="Where is order A1?",
            **case,
        )
    )
    return reads


@pytest.mark.slow
async def test_the_model_reads_the_same_answer_from_the_stand_in_as_from_mock_mcp(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("shop_tools_for_agreement", MOCK_MCP_TOOLS)
    shop = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shop)
    recorded = await ToolsetMock.record(mock_mcp_toolset(), tmp_path / "shop.tools.json")

    real = await through_adk(mock_mcp_toolset(), ORDER_CALL)
    stand_in = await through_the_stand_in(
        mock_mcp_toolset(), recorded, ORDER_CALL, tool_mocks=dict(shop.tool_mocks)
    )
    mocked_tool = Reads(ORDER_CALL)  # the real toolset listed, its tool answered by the mock
    agent = LlmAgent(
        name="shopper", model=ScriptedLlm(responder=mocked_tool), tools=[mock_mcp_toolset()]
    )
    await run_eval(
        EvalCase(name="shop", agent=agent, tool_mocks=dict(shop.tool_mocks), first_message="?")
    )

    assert real.answer() == {
        "content": [{"type": "text", "text": '{"order_id": "A1", "status": "shipped"}'}],
        "structuredContent": {"order_id": "A1", "status": "shipped"},
        "isError": False,
    }
    assert stand_in.answer() == real.answer()
    assert mocked_tool.answer() == real.answer()
    assert stand_in.offered() == real.offered() == ["cancel_order", "get_order", "refund"]


async def test_a_stand_in_for_an_mcp_toolset_answers_with_a_call_tool_result(marker):
    answers = {
        "read_file": ToolMock.returning({"content": "hello"}),
        "delete_file": ToolMock.returning("deleted"),
    }
    steps = [tool_call("read_file", {"path": "a"}), tool_call("delete_file", {"path": "b"}), "ok"]
    reads = await through_the_stand_in(
        files_toolset(marker), ToolsetMock(DECLARED), steps, tool_mocks=answers
    )
    first, second = (
        [p.function_response.response for p in request.contents[-1].parts if p.function_response]
        for request in reads.requests[1:]
    )
    assert first == [
        {
            "content": [{"type": "text", "text": '{"content": "hello"}'}],
            "structuredContent": {"content": "hello"},
            "isError": False,
        }
    ]
    assert second == [
        {
            "content": [{"type": "text", "text": "deleted"}],
            "structuredContent": {"result": "deleted"},
            "isError": False,
        }
    ]
    assert not marker.exists()


async def test_an_answer_already_shaped_as_a_call_tool_result_is_read_as_it_is(marker):
    failed = {"content": [{"type": "text", "text": "no such file"}], "isError": True}
    reads = await through_the_stand_in(
        files_toolset(marker),
        ToolsetMock(DECLARED),
        [tool_call("read_file", {"path": "a"}), "It is missing."],
        tool_mocks={"read_file": ToolMock.returning(failed)},
    )
    assert reads.answer() == failed


async def test_a_stand_in_for_another_toolset_answers_with_the_mocks_value(marker):
    from google.adk.tools.base_toolset import BaseToolset

    class OpenApiLike(BaseToolset):  # not MCP: its tools answer with their value
        async def get_tools(self, readonly_context=None):
            raise AssertionError("a replaced toolset is never asked")

    reads = await through_the_stand_in(
        OpenApiLike(),
        ToolsetMock(DECLARED),
        [tool_call("read_file", {"path": "a"}), "ok"],
        tool_mocks={"read_file": ToolMock.returning({"content": "hello"})},
    )
    assert reads.answer() == {"content": "hello"}


@pytest.mark.parametrize(
    "tool_filter",
    [["read_file"], lambda tool, ctx: tool.name == "read_file"],
    ids=["names", "predicate"],
)
async def test_the_toolsets_filter_hides_a_tool_and_a_call_to_it_is_refused_as_adk_does(
    marker, tool_filter
):
    steps = [tool_call("delete_file", {"path": "x"}), "I cannot delete it."]
    toolset = McpToolset(
        connection_params=files_toolset(marker)._connection_params, tool_filter=tool_filter
    )
    reads = await through_the_stand_in(toolset, ToolsetMock(DECLARED), steps, tool_mocks=ANSWER)
    assert reads.offered() == ["read_file"]
    refused = reads.answer()  # ADK's own answer to a tool the agent does not have
    assert list(refused) == ["error"]
    assert "Invoking `delete_file()` failed as no tool with that name" in refused["error"]
    assert "The tools you can call are: read_file." in refused["error"]
    assert reads.result.status == "passed", reads.result.explain()
    mocked = await through_the_stand_in(  # a mock of the hidden tool answers nothing
        toolset,
        ToolsetMock(DECLARED),
        steps,
        tool_mocks={**ANSWER, "delete_file": ToolMock.returning("deleted")},
    )
    assert mocked.answer() == refused
    assert mocked.result.status == "error"
    assert "tool_mocks names `delete_file`, but no agent of this run had a tool" in (
        mocked.result.error.message
    )
    assert not marker.exists()


async def test_the_toolsets_prefix_applies_to_the_declared_names(marker):
    toolset = McpToolset(
        connection_params=files_toolset(marker)._connection_params, tool_name_prefix="files"
    )
    reads = await through_the_stand_in(
        toolset,
        ToolsetMock(DECLARED),
        [tool_call("files_read_file", {"path": "a"}), "ok"],
        tool_mocks={"files_read_file": ToolMock.returning({"content": "hello"})},
    )
    assert reads.offered() == ["files_delete_file", "files_read_file"]
    assert reads.answer()["structuredContent"] == {"content": "hello"}


@pytest.mark.slow
async def test_a_filtered_toolset_offers_and_refuses_as_the_real_one_does(marker):
    steps = [tool_call("delete_file", {"path": "x"}), "I cannot delete it."]
    real = Reads(steps)
    toolset = McpToolset(
        connection_params=files_toolset(marker)._connection_params, tool_filter=["read_file"]
    )
    agent = LlmAgent(
        name="shopper", model=ScriptedLlm(responder=real, check_calls=False), tools=[toolset]
    )
    await run_eval(EvalCase(name="f", agent=agent, tool_mocks=ANSWER, first_message="?"))
    assert marker.read_text().splitlines() == ["started"]  # the real toolset listed its tools
    stand_in = await through_the_stand_in(
        McpToolset(
            connection_params=files_toolset(marker)._connection_params, tool_filter=["read_file"]
        ),
        ToolsetMock(DECLARED),
        steps,
        tool_mocks=ANSWER,
    )
    assert stand_in.offered() == real.offered() == ["read_file"]
    assert stand_in.answer() == real.answer()
