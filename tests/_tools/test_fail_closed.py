"""Red-team regressions: code outside the tool path, look-alike control tools, any root."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import BaseAgent, LlmAgent, ParallelAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.events import Event
from google.adk.tools import AgentTool, BaseTool, FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from adk_eval import EvalCase, ToolMock, run_eval
from adk_eval._tools._policy import is_control_tool
from adk_eval.testing import ScriptedLlm, tool_call

RAN: list[str] = []


class Orchestrator(BaseAgent):
    """A custom agent that runs a helper agent it does not list in `sub_agents`."""

    helper: Any = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async for event in self.helper.run_async(ctx):
            yield event


async def test_a_code_executor_hidden_from_the_tree_is_refused_at_run_time():
    code = "```python\nopen('/tmp/adk_eval_pwned', 'w')\n```"
    coder = LlmAgent(
        name="coder",
        model=ScriptedLlm([code, "done"]),
        code_executor=UnsafeLocalCodeExecutor(),
    )
    root = Orchestrator(name="boss", helper=coder)  # coder is not in sub_agents
    result = await run_eval(EvalCase(name="hidden", agent=root, first_message="go"))

    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "EvalToolError"
    assert result.error.message.startswith(
        "Agent `coder` has a code executor (`UnsafeLocalCodeExecutor`)"
    )
    assert not any(e.content and "pwned" in str(e.content) for e in result.events[1:])


class NoisyAgentTool(AgentTool):
    """An AgentTool subclass whose run has a side effect of its own."""

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        RAN.append("noisy")
        return await super().run_async(args=args, tool_context=tool_context)


class FinishTaskTool(BaseTool):
    """A user class named like ADK's task tool: an ordinary tool with a side effect."""

    def __init__(self) -> None:
        super().__init__(name="finish_task", description="Finishes (and deletes things).")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        RAN.append("finish_task")
        return {"deleted": True}


def test_control_tools_are_known_by_identity_and_behaviour_not_by_name():
    inner = LlmAgent(name="inner", model=ScriptedLlm(["ok"]))
    assert is_control_tool(AgentTool(inner))
    assert not is_control_tool(NoisyAgentTool(inner))
    assert not is_control_tool(FinishTaskTool())

    def exit_loop(tool_context: ToolContext) -> None:
        """Not ADK's exit_loop: a function with the same name."""

    assert not is_control_tool(FunctionTool(exit_loop))


def test_adk_s_exit_loop_and_load_memory_are_control_tools_and_a_subclass_that_runs_code_is_not():
    from google.adk.tools.exit_loop_tool import exit_loop
    from google.adk.tools.load_memory_tool import LoadMemoryTool, load_memory, load_memory_tool

    class OwnMemory(LoadMemoryTool):
        async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
            return {"memories": ["made up"]}

    assert is_control_tool(FunctionTool(exit_loop))
    assert is_control_tool(load_memory_tool)
    assert is_control_tool(LoadMemoryTool())
    assert not is_control_tool(FunctionTool(load_memory))  # a plain FunctionTool: not ADK's tool
    assert not is_control_tool(OwnMemory())


async def test_a_look_alike_control_tool_is_intercepted_like_any_tool():
    RAN.clear()
    inner = LlmAgent(name="inner", model=ScriptedLlm(["inner ok"]))
    for tool, name, args in (
        (NoisyAgentTool(inner), "inner", {"request": "x"}),
        (FinishTaskTool(), "finish_task", {}),
    ):
        agent = LlmAgent(
            name="root",
            model=ScriptedLlm([tool_call(name, args), "done"]),
            tools=[tool],
        )
        refused = await run_eval(EvalCase(name="look-alike", agent=agent, first_message="go"))
        assert refused.status == "error"
        assert refused.error is not None
        assert refused.error.type == "EvalToolError"
        mocked = await run_eval(
            EvalCase(
                name="look-alike",
                agent=agent.clone(update={"model": ScriptedLlm([tool_call(name, args), "done"])}),
                first_message="go",
                tool_mocks={name: ToolMock.returning({"ok": True})},
            )
        )
        assert mocked.status == "passed", mocked.explain()
    assert RAN == []


@pytest.mark.filterwarnings("ignore:ParallelAgent is deprecated:DeprecationWarning")
async def test_errors_keep_their_type_under_a_parallel_root():
    def send(to: str) -> dict:
        """Sends a message."""
        RAN.append("send")
        return {"sent": True}

    def broken(x: str) -> dict:
        raise ValueError("the mock broke")

    for mocks in ({}, {"send": ToolMock(lambda args, ctx: broken(args["to"]))}):
        one = LlmAgent(
            name="one", model=ScriptedLlm([tool_call("send", {"to": "a"}), "ok"]), tools=[send]
        )
        two = LlmAgent(name="two", model=ScriptedLlm(["two ok"]))
        result = await run_eval(
            EvalCase(
                name="parallel",
                agent=ParallelAgent(name="fan", sub_agents=[one, two]),
                first_message="go",
                tool_mocks=mocks,
            )
        )
        assert result.status == "error"
        assert result.error is not None
        assert result.error.type == "EvalToolError", result.error
        assert "send" in result.error.message
    assert "send" not in RAN
