"""The in-process mock and the served one run one protocol: same scripted answers, same events."""

from __future__ import annotations

import httpx
import pytest

from adk_eval import EvalCase, RemoteMock, RemoteReply, run_eval
from adk_eval._mock_a2a import MockA2aServer
from adk_eval.testing import ScriptedLlm, tool_call
from tests.a2a_support import served
from tests.shapes_support import remote_agent, transferring_root

SCRIPT = [
    RemoteReply("Which city?", state="input-required"),
    RemoteReply("Booked: Paris.", artifacts={"receipt": {"id": 7}, "note": "window seat"}),
]


def case(remote, **fields) -> EvalCase:
    hand_over = tool_call("transfer_to_agent", {"agent_name": "helper"})
    root = transferring_root(remote)
    return EvalCase(
        name="remote-mocked",
        agent=root,
        first_message="book a flight",
        models={"root": ScriptedLlm([hand_over, "Back."])},
        **fields,
    )


def remote_events(result) -> list[tuple]:
    """What the remote agent's events hold: author, texts, function calls, states."""
    found = []
    for event in result.trace.events:
        if event.author != "helper":
            continue
        parts = event.content.parts if event.content else []
        found.append(
            (
                event.author,
                [p.text for p in parts if p.text],
                [(p.function_call.name, p.function_call.args) for p in parts if p.function_call],
            )
        )
    return found


async def test_a_mocked_remote_agent_answers_in_process_and_nothing_is_sent():
    url = "http://127.0.0.1:1/.well-known/agent-card.json"  # nothing listens there
    result = await run_eval(
        case(remote_agent(url), remote_mocks={"helper": ["Answered by the mock."]})
    )

    assert result.status == "passed", result.explain()
    texts = [(m.author, m.text) for m in result.trace.messages]
    assert texts == [("user", "book a flight"), ("helper", "Answered by the mock.")]


@pytest.mark.parametrize("state", ["input-required", "failed"])
async def test_the_same_script_gives_the_same_events_in_process_and_served(state):
    script = [RemoteReply("Which city?" if state == "input-required" else "No seats.", state=state)]
    in_process = await run_eval(
        case(remote_agent("http://127.0.0.1:1/card.json"), remote_mocks={"helper": script})
    )
    with served(MockA2aServer({"helper": RemoteMock.scripted(script)})) as server:
        async with httpx.AsyncClient() as client:
            remote = remote_agent(server.card_url("helper"), client=client)
            over_http = await run_eval(case(remote, remote_mocks={"helper": remote}))

    assert ("POST", "/helper/") in server.requests
    assert [e.request.splitlines()[0] for e in server.server.exchanges] == ["book a flight"]
    assert remote_events(in_process) == remote_events(over_http)
    assert remote_events(in_process), in_process.explain()
    if state == "input-required":  # ADK asks the user the remote agent's question
        calls = [c for _, _, calls in remote_events(in_process) for c in calls]
        assert calls, in_process.explain()
        assert "Which city?" in str(calls[0][1])
    else:
        assert any("No seats." in " ".join(t) for _, t, _ in remote_events(in_process))


async def test_artifacts_and_completion_give_the_same_events_in_process_and_served():
    script = [SCRIPT[1]]
    in_process = await run_eval(
        case(remote_agent("http://127.0.0.1:1/card.json"), remote_mocks={"helper": script})
    )
    with served(MockA2aServer({"helper": RemoteMock.scripted(script)})) as server:
        async with httpx.AsyncClient() as client:
            remote = remote_agent(server.card_url("helper"), client=client)
            over_http = await run_eval(case(remote, remote_mocks={"helper": remote}))

    assert in_process.status == over_http.status == "passed", in_process.explain()
    assert remote_events(in_process) == remote_events(over_http)
    assert [m.text for m in in_process.trace.messages if m.author == "helper"][
        -1
    ] == "Booked: Paris."


def send(text: str, message_id: str, **ids: str) -> dict:
    message = {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": message_id}
    message.update(kind="message", **ids)
    return {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}


async def test_message_send_holds_the_task_its_state_and_artifacts_one_context_at_a_time():
    mock = RemoteMock.scripted(SCRIPT)
    app = MockA2aServer({"helper": mock}).app("http://mock")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://mock") as client:
        asked = (await client.post("/helper/", json=send("book", "m1"))).json()["result"]
        ids = {"contextId": asked["contextId"], "taskId": asked["id"]}
        done = (await client.post("/helper/", json=send("Paris", "m2", **ids))).json()["result"]
        other = (await client.post("/helper/", json=send("book", "m3"))).json()["result"]

    assert asked["status"]["state"] == "input-required"
    assert asked["status"]["message"]["parts"][0]["text"] == "Which city?"
    assert done["status"]["state"] == "completed"
    artifacts = {a["name"]: a["parts"][0] for a in done["artifacts"]}
    assert artifacts["note"]["text"] == "window seat"
    assert artifacts["receipt"]["data"] == {"id": 7}
    assert other["status"]["state"] == "input-required"  # another context starts the script over


async def test_message_stream_answers_as_server_sent_events():
    app = MockA2aServer({"helper": RemoteMock.scripted(["Streamed."])}).app("http://mock")
    body = send("hi", "m1") | {"method": "message/stream"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://mock") as client:
        answer = await client.post("/helper/", json=body)

    assert answer.headers["content-type"].startswith("text/event-stream")
    assert '"state":"completed"' in answer.text.replace(" ", "")
    assert "Streamed." in answer.text
