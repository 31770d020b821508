"""RemoteMock.local: a remote agent's own ADK code run in process under the case's interception."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval import EvalCase, EvalSetupError, RemoteMock, ToolMock, run_eval
from adk_eval.testing import ScriptedLlm, tool_call
from tests.shapes_support import remote_agent, transferring_root

NOWHERE = "http://127.0.0.1:1/.well-known/agent-card.json"  # nothing listens: nothing may be sent


def far_side(ran: list[str]) -> LlmAgent:
    """The remote agent's own code: it looks the order up with its tool, then answers."""

    def lookup_order(order_id: int) -> dict:
        """Looks an order up in the real database."""
        ran.append(f"lookup_order({order_id})")
        return {"status": "real database answer"}

    def respond(request):
        answer = request.contents[-1].parts[0].function_response
        if answer is None:
            return tool_call("lookup_order", {"order_id": 7})
        return f"Order 7: {answer.response['status']}"

    model = ScriptedLlm(responder=respond)
    return LlmAgent(name="helper", model=model, tools=[lookup_order], description="Orders.")


def local_case(remote, **fields) -> EvalCase:
    return EvalCase(
        name="local", agent=transferring_root(remote), first_message="where is order 7?", **fields
    )


MOCKED = {"lookup_order": ToolMock.returning({"status": "shipped"})}


async def test_a_local_remote_agents_tool_is_answered_by_the_cases_mock_and_its_body_never_runs():
    ran: list[str] = []
    mock = RemoteMock.local(far_side(ran))
    result = await run_eval(
        local_case(remote_agent(NOWHERE), remote_mocks={"helper": mock}, tool_mocks=MOCKED)
    )

    assert result.status == "passed", result.explain()
    assert ran == []
    assert [m.text for m in result.trace.messages if m.author == "helper"] == ["Order 7: shipped"]


async def test_an_unmocked_tool_of_a_local_remote_agent_is_the_one_line_error_of_a_main_agents():
    ran: list[str] = []
    remote = await run_eval(
        local_case(remote_agent(NOWHERE), remote_mocks={"helper": RemoteMock.local(far_side(ran))})
    )
    local = await run_eval(local_case(far_side(ran)))

    assert ran == []
    assert (remote.status, remote.error.type) == ("error", "EvalToolError")
    assert remote.error.message.splitlines()[0] == local.error.message.splitlines()[0]
    assert "lookup_order" in remote.error.message.splitlines()[0]


async def test_a_local_sub_agent_and_the_same_agent_as_remote_mock_local_give_the_same_answer():
    ran: list[str] = []
    remote = await run_eval(
        local_case(
            remote_agent(NOWHERE),
            remote_mocks={"helper": RemoteMock.local(far_side(ran))},
            tool_mocks=MOCKED,
        )
    )
    local = await run_eval(local_case(far_side(ran), tool_mocks=MOCKED))

    assert (remote.status, local.status) == ("passed", "passed"), remote.explain()
    assert remote.trace.final_response == local.trace.final_response
    texts = [[m.text for m in r.trace.messages if m.author == "helper"] for r in (remote, local)]
    assert texts[0] == texts[1] == ["Order 7: shipped"]
    steps = [[_step(item) for item in r.trace.all_items] for r in (remote, local)]
    assert steps[0] == steps[1]
    assert ("ToolCall", "lookup_order", ()) in steps[0]


def _step(item) -> tuple:
    return (type(item).__name__, getattr(item, "name", None), getattr(item, "path", ()))


async def test_behind_an_agent_tool_its_calls_are_nested_under_that_call_once():
    ran: list[str] = []
    ask = tool_call("helper", {"request": "where is order 7?"})
    root = LlmAgent(
        name="root", model=ScriptedLlm([ask, "Back."]), tools=[AgentTool(remote_agent(NOWHERE))]
    )
    result = await run_eval(
        EvalCase(
            name="tool",
            agent=root,
            first_message="hi",
            remote_mocks={"helper": RemoteMock.local(far_side(ran))},
            tool_mocks=MOCKED,
        )
    )

    assert result.status == "passed", result.explain()
    steps = [_step(item) for item in result.trace.all_items]
    assert steps.count(("ToolCall", "lookup_order", ("helper",))) == 1
    assert steps.count(("ToolResponse", "lookup_order", ("helper",))) == 1
    assert ran == []


def test_a_local_remote_agent_cannot_be_served_by_mock_a2a():
    from adk_eval._tools._a2a._served import mock_routes

    mock = RemoteMock.local(far_side([]))
    with pytest.raises(
        EvalSetupError, match=r"is RemoteMock\.local: it runs its agent only inside"
    ):
        mock_routes("helper", mock, "http://127.0.0.1:8000/helper/")


def test_remote_mock_local_takes_an_adk_agent():
    with pytest.raises(EvalSetupError, match="takes the remote agent's ADK agent; got 'helper'"):
        RemoteMock.local("helper")
