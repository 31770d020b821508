"""A remote (A2A) agent is a side effect: refused unless mocked or declared, nothing sent."""

from __future__ import annotations

import logging
import warnings

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.tools import AgentTool
from google.adk.workflow import START, Workflow

from adk_eval import EvalCase, EvalRunner, EvalSetupError, ToolMock, run_eval
from adk_eval.testing import ScriptedLlm, tool_call
from tests.shapes_support import remote_agent, remote_case, remote_server, transferring_root


@pytest.fixture
def server():
    with remote_server() as found:
        yield found


def remote_case_of(remote) -> EvalCase:
    return EvalCase(name="remote", agent=transferring_root(remote), first_message="hi")


def asking_root(remote) -> LlmAgent:
    """A root agent that asks `remote` through an `AgentTool`."""
    model = ScriptedLlm([tool_call(remote.name, {"request": "hi"}), "Done."])
    return LlmAgent(name="root", model=model, tools=[AgentTool(remote)])


def trees(url: str) -> dict[str, object]:
    """A remote agent at every place of a tree, by where the refusal says it sits."""
    in_node = LlmAgent(name="writer", model=ScriptedLlm(["x"]), sub_agents=[remote_agent(url)])
    return {
        "sub-agent `helper` of `root`": transferring_root(remote_agent(url)),
        "agent `helper` inside AgentTool `helper` of `root`": asking_root(remote_agent(url)),
        "node `helper` of workflow `flow`": Workflow(
            name="flow", edges=[(START, remote_agent(url))]
        ),
        "sub-agent `helper` of `writer`": Workflow(name="flow", edges=[(START, in_node)]),
    }  # at the root, a remote agent is the agent under test (tests/_tools/test_deployed.py)


async def test_a_remote_sub_agent_without_a_mock_is_one_error_and_nothing_reaches_it(
    server, caplog
):
    with caplog.at_level(logging.DEBUG):
        result = await run_eval(remote_case(server.card_url))

    assert server.requests == []  # not even the agent card's fetch
    assert result.status == "error"
    assert (result.error.phase, result.error.type) == ("system", "EvalToolError")
    first = result.error.message.splitlines()[0]
    assert first == (
        "Remote agent `helper` (sub-agent `helper` of `root`) would be called during eval but "
        f"no mock was provided; nothing was sent to its agent card {server.card_url}. To let it "
        'run for real: remote_mocks={"helper": <the RemoteA2aAgent itself>}'
    )
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("where", list(trees("http://127.0.0.1:1/card.json")))
async def test_a_remote_agent_anywhere_in_the_tree_is_refused_before_it_sends(server, where):
    agent = trees(server.card_url)[where]
    result = await run_eval(EvalCase(name="anywhere", agent=agent, first_message="hi"))

    assert server.requests == []
    assert result.error.type == "EvalToolError", result.explain()
    assert result.error.message.startswith(f"Remote agent `helper` ({where}) would be called")


async def test_a_remote_agent_given_its_card_is_refused_naming_the_cards_url(server):
    from a2a.types import AgentCard, AgentInterface

    rpc = server.card_url.replace("/.well-known/agent-card.json", "/")
    interface = AgentInterface(url=rpc, protocol_binding="JSONRPC")
    card = AgentCard(name="far", description="Far away.", supported_interfaces=[interface])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        remote = RemoteA2aAgent(name="helper", agent_card=card)
    result = await run_eval(remote_case_of(remote))

    assert server.requests == []
    assert f"nothing was sent to {rpc}." in result.error.message.splitlines()[0]


async def test_a_declared_remote_agent_runs_for_real_even_on_the_cases_copy(server):
    script = [tool_call("transfer_to_agent", {"agent_name": "helper"}), "Back."]
    async with httpx.AsyncClient() as client:
        remote = remote_agent(server.card_url, client=client)
        case = EvalCase(
            name="declared",
            agent=transferring_root(remote),
            first_message="hi",
            models={"root": ScriptedLlm(script)},  # the run's tree is a copy: so is its agent
            remote_mocks={"helper": remote},
        )
        result = await run_eval(case)

    assert result.status == "passed", result.explain()
    assert ("GET", "/.well-known/agent-card.json") in server.requests
    assert ("POST", "/") in server.requests  # the conversation went to it, as declared
    assert [m.text for m in result.trace.messages if m.author == "helper"] == ["Answered remotely."]


async def test_a_remote_agent_inside_a_mocked_agent_tool_never_runs(server):
    case = EvalCase(
        name="mocked",
        agent=asking_root(remote_agent(server.card_url)),
        first_message="hi",
        tool_mocks={"helper": ToolMock.returning({"answer": "mocked"})},
    )
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    assert server.requests == []
    assert [c.response for c in result.trace.tool_calls] == [{"answer": "mocked"}]


async def test_remote_mocks_name_the_trees_remote_agents_and_hold_them_only():
    url = "http://127.0.0.1:1/.well-known/agent-card.json"
    with pytest.raises(EvalSetupError, match="Did you mean `helper`"):
        await run_eval(remote_case(url, remote_mocks={"helpr": remote_agent(url)}))
    other = remote_agent("http://127.0.0.1:2/.well-known/agent-card.json")
    with pytest.raises(EvalSetupError, match="or the RemoteA2aAgent `helper` itself"):
        await run_eval(remote_case(url, remote_mocks={"helper": other}))
    with pytest.raises(EvalSetupError, match="or the RemoteA2aAgent `helper` itself"):
        await run_eval(remote_case(url, remote_mocks={"helper": ToolMock.returning("x")}))


async def test_a_runner_by_hand_refuses_the_remote_agent_at_every_run(server):
    runner = EvalRunner(transferring_root(remote_agent(server.card_url)))
    session = await runner.create_session()
    for _ in range(2):
        with pytest.raises(Exception, match="Remote agent `helper`") as raised:
            async for _event in runner.run_async(session_id=session.id, new_message="hi"):
                pass
        assert type(raised.value).__name__ == "EvalToolError"
    assert server.requests == []
