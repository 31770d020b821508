"""The broker: requests for the person, their answers checked, remote answers polled."""

from __future__ import annotations

import asyncio

import pytest

from adk_eval import STOP, YieldInfo
from adk_eval._errors import StudioError
from adk_eval.studio._broker import Broker
from adk_eval.studio._notify import Notifier
from adk_eval.studio._server import status_of
from adk_eval.studio._store import SessionRow, StudioStore


@pytest.fixture
async def store(tmp_path):
    studio_store = StudioStore(tmp_path / "studio.db")
    await studio_store.open()
    await studio_store.add_session(SessionRow(id="s1", target="t", kind="agent", role="model"))
    yield studio_store
    await studio_store.close()


@pytest.fixture
def notifier():
    return Notifier()


@pytest.fixture
def broker(store, notifier):
    return Broker(store, notifier)


async def test_an_unknown_request_is_404_and_an_answered_one_409(broker):
    with pytest.raises(StudioError) as unknown:
        await broker.answer("nope", {"type": "text", "text": "hi"})
    assert status_of(unknown.value) == 404

    row = await broker.add("s1", "tool_answer", "agent", {"tool_name": "ask"}, waited=False)
    answered = await broker.answer(row.id, {"type": "text", "text": "Tuesday"})
    assert (answered.value, answered.delivered) == ({"result": "Tuesday"}, False)
    with pytest.raises(StudioError, match="is answered; reload the session") as again:
        await broker.answer(row.id, {"type": "text", "text": "Wednesday"})
    assert status_of(again.value) == 409


async def test_answers_that_do_not_fit_are_422_with_the_problem(broker):
    user = await broker.add("s1", "user", "patient", {"prompt": "?"}, waited=False)
    tool = await broker.add("s1", "tool_answer", "agent", {"tool_name": "ask"}, waited=False)
    with pytest.raises(StudioError) as bad_user:
        await broker.answer(user.id, {"type": "text", "text": "   "})
    with pytest.raises(StudioError) as bad_tool:
        await broker.answer(tool.id, {"type": "stop"})
    assert (status_of(bad_user.value), status_of(bad_tool.value)) == (422, 422)
    assert bad_user.value.problems == ["text: the answer is empty"]
    assert bad_tool.value.problems == ["type: must be one of text, value, got 'stop'"]
    for answer, problem in [
        (
            {"type": "text", "text": {"not": "text"}},
            "text: {'not': 'text'} is not of type 'string'",
        ),
        ({"type": "value"}, "(top level): 'value' is a required property"),
        ({"type": "stop", "why": "done"}, "Additional properties are not allowed ('why' was"),
        (["text"], "(top level): an answer is an object"),
    ]:
        with pytest.raises(StudioError) as bad:
            await broker.answer(user.id, answer)
        assert status_of(bad.value) == 422
        assert bad.value.problems[0].startswith(problem) or problem in bad.value.problems[0]


async def test_a_tool_answer_is_the_response_adk_expects(broker):
    async def answer(tool_name: str, value: object) -> dict:
        row = await broker.add("s1", "tool_answer", "a", {"tool_name": tool_name}, waited=False)
        return (await broker.answer(row.id, {"type": "value", "value": value})).value

    assert await answer("ask", {"day": "Tuesday"}) == {"day": "Tuesday"}
    assert await answer("ask", 3) == {"result": 3}
    assert await answer("adk_request_confirmation", True) == {"confirmed": True}


async def test_wait_for_user_returns_the_reply_and_restores_the_phase(broker, store, notifier):
    async def person(answer: dict) -> None:
        await notifier.wait_for_change(notifier.version("s1"), 10)  # the request is stored
        [pending] = await store.requests("s1", status="pending")
        assert (await store.get_session("s1")).phase == "awaiting_user"
        assert pending.payload["yield"]["tool_name"] == "ask"
        assert (await broker.answer(pending.id, answer)).delivered

    info = YieldInfo(type="tool", invocation_id="i1", tool_name="ask", call_id="c1", args={})
    for answer, reply in [
        ({"type": "text", "text": "My knee"}, "My knee"),
        ({"type": "value", "value": {"where": "knee"}}, {"where": "knee"}),
        ({"type": "stop"}, STOP),
    ]:
        waited, _ = await asyncio.gather(
            broker.wait_for_user("s1", "patient", "Where?", info), person(answer)
        )
        assert waited == reply
        assert (await store.get_session("s1")).phase == "running"


async def test_remote_answers_are_polled(broker, store):
    with pytest.raises(StudioError) as unknown:
        await broker.remote_answer("nope", 0.01)
    assert status_of(unknown.value) == 404

    row = await broker.add("s1", "model", "triage", {"tools": [], "output_schema": None})
    assert await broker.remote_answer(row.id, 0.01) is None  # not answered yet
    poll = asyncio.ensure_future(broker.remote_answer(row.id, 10))
    await broker.answer(row.id, {"type": "text", "text": "Call 999."})
    assert await poll == {"type": "text", "text": "Call 999."}
    assert await broker.remote_answer(row.id, 0.01) == {"type": "text", "text": "Call 999."}

    lost = await broker.add("s1", "model", "triage", {"tools": []})
    await store.supersede_pending("s1")
    with pytest.raises(StudioError) as gone:
        await broker.remote_answer(lost.id, 0.01)
    assert status_of(gone.value) == 410
