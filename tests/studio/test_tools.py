"""The tool runner: tools timed and cancellable; a raise or a cancel is the tool's response."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.sessions import InMemorySessionService
from google.adk.tools import FunctionTool
from google.adk.tools.tool_context import ToolContext

from adk_eval._errors import StudioError
from adk_eval.studio._notify import Notifier
from adk_eval.studio._server import status_of
from adk_eval.studio._tools import ToolRunner
from adk_eval.testing import ScriptedLlm


async def slow(seconds: float) -> dict:
    """Sleeps."""
    await asyncio.sleep(seconds)
    return {"slept": seconds}


def broken() -> dict:
    """Raises."""
    raise ConnectionError("cannot reach the host")


async def tool_context(call_id: str) -> ToolContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    agent = LlmAgent(name="agent", model=ScriptedLlm(["unused"]))
    invocation = InvocationContext(
        session_service=service, invocation_id="i1", agent=agent, session=session
    )
    return ToolContext(invocation, function_call_id=call_id)


async def test_a_result_a_raise_and_a_cancel_are_responses():
    notifier = Notifier()
    runner = ToolRunner(notifier)
    assert await runner.run("s", FunctionTool(slow), {"seconds": 0}, await tool_context("c0")) == {
        "slept": 0
    }
    assert await runner.run("s", FunctionTool(broken), {}, await tool_context("c1")) == {
        "error": {"type": "ConnectionError", "message": "cannot reach the host"}
    }

    context = await tool_context("c2")
    since = notifier.version("s")
    running = asyncio.ensure_future(runner.run("s", FunctionTool(slow), {"seconds": 600}, context))
    await notifier.wait_for_change(since, 5)  # it started
    [shown] = runner.running("s")
    assert (shown["call_id"], shown["name"], shown["args"]) == ("c2", "slow", {"seconds": 600})
    runner.cancel("s", "c2")
    error = (await running)["error"]
    assert error["type"] == "ToolCancelled"
    assert error["message"].startswith("cancelled by the person after ")
    assert runner.running("s") == []


def test_cancelling_a_call_that_is_not_running_is_404():
    with pytest.raises(StudioError) as error:
        ToolRunner(Notifier()).cancel("s", "nope")
    assert status_of(error.value) == 404
