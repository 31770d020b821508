"""Remote agents answered by mocks in a case: states, the user's answer, invariants, a model."""

from __future__ import annotations

import logging

import pytest

from adk_eval import (
    EvalCase,
    EvalRunner,
    EvalSetupError,
    RemoteMock,
    RemoteReply,
    ScriptedUserAgent,
    UserAgents,
    run_eval,
)
from adk_eval.metrics import never_called
from adk_eval.testing import ScriptedLlm
from tests._tools.test_remote import trees
from tests.shapes_support import remote_agent, remote_case, transferring_root

NOWHERE = "http://127.0.0.1:1/.well-known/agent-card.json"  # nothing listens: nothing may be sent
ASKS = "mock_function_call_for_required_user_input"  # ADK's call for a remote agent's question


async def test_an_input_required_reply_is_answered_by_a_user_agent_then_the_script_goes_on():
    seen: list[str] = []

    def reply(request: str) -> RemoteReply:
        seen.append(request.splitlines()[0])
        if len(seen) == 1:
            return RemoteReply("Which city?", state="input-required")
        return RemoteReply(f"Booked for {seen[-1]}.")

    case = remote_case(
        NOWHERE,
        remote_mocks={"helper": reply},
        user_agents=UserAgents(tools={ASKS: ScriptedUserAgent(name="traveller", script=["Paris"])}),
    )
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    assert seen[0] == "my private words"
    assert "Paris" in seen[1]
    assert [m.text for m in result.trace.messages if m.author == "helper"][
        -1
    ] == "Booked for Paris."


async def test_an_input_required_reply_without_a_user_agent_is_one_clear_error():
    script = [RemoteReply("Which city?", state="input-required")]
    result = await run_eval(remote_case(NOWHERE, remote_mocks={"helper": script}))

    assert result.status == "error"
    assert result.error.message.startswith(f"Tool `{ASKS}` yielded but no user agent")


async def test_a_script_that_runs_out_answers_failed_naming_the_request():
    mock = RemoteMock.scripted(["Only once."])

    first = await mock.reply("helper", "hi", 0)
    second = await mock.reply("helper", "again", 1)

    assert (first.text, first.state) == ("Only once.", "completed")
    assert (second.text, second.state) == (
        "remote mock `helper` scripts 1 replies; request 2 has none",
        "failed",
    )


async def test_never_called_names_a_remote_agent_through_the_call_that_reaches_it():
    rule = never_called("transfer_to_agent", args={"agent_name": "helper"})
    result = await run_eval(remote_case(NOWHERE, remote_mocks={"helper": ["x"]}, invariants=[rule]))

    assert result.status == "failed", result.explain()
    breach = result.metrics[rule.name].value["event"]
    assert breach == '`transfer_to_agent` called by `root` with {"agent_name": "helper"}'
    assert [m.author for m in result.trace.messages] == ["user"]  # stopped before it answered


async def test_a_simulated_remote_agent_is_played_by_its_model_from_the_card():
    asked = []

    def answer(request):
        asked.append(request)
        return "Your flight to Paris is booked."

    llm = ScriptedLlm(responder=answer)
    mock = RemoteMock.simulated("Books flights.", skills={"book": "Books a flight"}, model=llm)
    result = await run_eval(remote_case(NOWHERE, remote_mocks={"helper": mock}))

    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.messages if m.author == "helper"] == [
        "Your flight to Paris is booked."
    ]
    instruction = str(asked[0].config.system_instruction)
    assert instruction == mock.persona("helper")
    assert asked[0].contents[0].parts[0].text.startswith("my private words")
    assert "`helper`" in instruction
    assert "Books flights." in instruction
    assert "- book: Books a flight" in instruction


def test_a_reply_state_outside_the_three_is_one_setup_error():
    with pytest.raises(EvalSetupError, match="state must be one of completed, input-required"):
        RemoteReply("x", state="working")  # type: ignore[arg-type]


async def test_a_remote_mock_value_that_is_no_mock_names_what_it_may_be():
    with pytest.raises(EvalSetupError, match="must be a mock of it \\(RemoteMock, RemoteReply"):
        await run_eval(remote_case(NOWHERE, remote_mocks={"helper": 42}))


async def test_the_refusal_says_how_to_mock_the_remote_agent():
    result = await run_eval(remote_case(NOWHERE))

    assert 'mock it: remote_mocks={"helper": RemoteMock.scripted(["<its reply>"])}' in (
        result.error.message
    )


async def test_a_golden_of_the_run_holds_the_mocked_remote_agents_answer():
    from adk_eval.goldens import to_golden

    result = await run_eval(remote_case(NOWHERE, remote_mocks={"helper": ["Answered remotely."]}))
    (turn,) = to_golden(result).conversation

    assert turn.final_response.parts[0].text == "Answered remotely."
    uses = [(use.name, use.args) for use in turn.intermediate_data.tool_uses]
    assert uses == [("transfer_to_agent", {"agent_name": "helper"})]


def test_the_a2a_servers_closed_queue_warning_is_dropped_and_nothing_else(caplog):
    import adk_eval._tools._a2a._served  # noqa: F401 - installs the filter

    logger = logging.getLogger("a2a.server.events.event_queue_v2")
    with caplog.at_level(logging.WARNING):
        logger.warning("Dispatcher task is not running. Cannot wait for event dispatch.")
        logger.warning("Something else.")

    assert [r.getMessage() for r in caplog.records] == ["Something else."]


CALLED = [
    "sub-agent `helper` of `root`",
    "agent `helper` inside AgentTool `helper` of `root`",
    "node `helper` of workflow `flow`",
]
"""The places of `trees` whose scripted models reach the remote agent (the root is the agent
under test itself; the writer's model never transfers)."""


@pytest.mark.parametrize("where", CALLED)
async def test_a_remote_agent_anywhere_in_the_tree_is_answered_by_its_mock(where):
    agent = trees(NOWHERE)[where]
    mocks = {"helper": ["Answered by the mock."]}
    case = EvalCase(name="anywhere", agent=agent, first_message="hi", remote_mocks=mocks)
    result = await run_eval(case)

    assert result.error is None, result.explain()
    assert "Answered by the mock." in str([e.content for e in result.trace.events])


async def test_a_runner_by_hand_runs_the_mock_in_the_remote_agents_place():
    runner = EvalRunner(transferring_root(remote_agent(NOWHERE)), remote_mocks={"helper": ["Hi."]})
    session = await runner.create_session()
    authors = [
        (event.author, event.content.parts[0].text)
        async for event in runner.run_async(session_id=session.id, new_message="hi")
        if event.content and event.content.parts and event.content.parts[0].text
    ]

    assert ("helper", "Hi.") in authors
