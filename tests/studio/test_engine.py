"""The studio engine: a person answers model calls; ADK runs the tools; sessions persist."""

from __future__ import annotations

import json

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool

from adk_eval._errors import StudioError
from adk_eval.goldens import load_eval_set
from adk_eval.studio._config import SimulatedAgentConfig, StudioTarget
from adk_eval.studio._engine import StudioEngine
from adk_eval.studio._server import status_of
from adk_eval.testing import ScriptedLlm

from .conftest import agent_targets, clinic_case, wait_for

ADD = {"type": "tool_calls", "calls": [{"name": "add", "args": {"a": 5, "b": 3}}]}


async def test_the_person_plays_the_model_and_adk_runs_the_real_tool(engine, tmp_path):
    session_id = await engine.create_session("Toolbox", "What is 5+3?")
    view, request = await wait_for(engine, session_id, kind="model")

    payload = request["payload"]
    assert payload["agent_name"] == "toolbox"
    assert payload["instruction"].startswith("You help the user with calculations")
    assert [c["parts"] for c in payload["contents"]] == [[{"text": "What is 5+3?"}]]
    search = next(t for t in payload["tools"] if t["name"] == "search")
    assert search["parameters"]["required"] == ["query"]
    assert search["parameters"]["properties"]["limit"]["default"] == 10

    await engine.answer(request["id"], ADD)
    view, request = await wait_for(engine, session_id, kind="model")
    assert [(e["kind"], e.get("response")) for e in view["entries"]][1:] == [
        ("tool_call", None),
        ("tool_result", {"result": 8}),
    ]
    # the model call now sees the real tool's response
    assert request["payload"]["contents"][-1]["parts"][0]["function_response"]["response"] == {
        "result": 8
    }

    await engine.answer(request["id"], {"type": "text", "text": "The answer is 8."})
    view, _ = await wait_for(engine, session_id, phase="idle")
    assert view["entries"][-1] == {
        **view["entries"][-1],
        "kind": "final",
        "text": "The answer is 8.",
    }
    assert view["can_export"]


async def test_a_tool_that_raises_is_an_error_entry_and_the_session_goes_on(engine):
    session_id = await engine.create_session("Toolbox", "fetch the data")
    _, request = await wait_for(engine, session_id, kind="model")
    await engine.answer(
        request["id"],
        {"type": "tool_calls", "calls": [{"name": "fetch_data", "args": {"url": "http://x"}}]},
    )
    view, request = await wait_for(engine, session_id, kind="model")
    error = next(e for e in view["entries"] if e["kind"] == "tool_error")
    assert (error["name"], error["error_type"], error["message"]) == (
        "fetch_data",
        "ConnectionError",
        "cannot reach http://x",
    )
    await engine.answer(request["id"], {"type": "text", "text": "The site is down."})
    await wait_for(engine, session_id, phase="idle")


async def test_a_running_tool_can_be_cancelled(engine):
    session_id = await engine.create_session("Toolbox", "look it up")
    _, request = await wait_for(engine, session_id, kind="model")
    await engine.answer(
        request["id"],
        {"type": "tool_calls", "calls": [{"name": "slow_lookup", "args": {"seconds": 600}}]},
    )
    for _ in range(200):
        view = await engine.view(session_id)
        if view["running_tools"]:
            break
        await __import__("asyncio").sleep(0.02)
    [running] = view["running_tools"]
    assert running["name"] == "slow_lookup"
    await engine.cancel_tool(session_id, running["call_id"])

    view, _ = await wait_for(engine, session_id, kind="model")
    error = next(e for e in view["entries"] if e["kind"] == "tool_error")
    assert error["error_type"] == "ToolCancelled"
    assert error["message"].startswith("cancelled by the person after")
    assert view["running_tools"] == []


async def test_bad_answers_are_refused_with_every_problem(engine):
    session_id = await engine.create_session("Toolbox", "order")
    _, request = await wait_for(engine, session_id, kind="model")
    with pytest.raises(StudioError) as error:
        await engine.answer(
            request["id"],
            {
                "type": "tool_calls",
                "calls": [
                    {"name": "nope", "args": {}},
                    {"name": "add", "args": {"a": "five"}},
                    {"name": "create_order", "args": {"order": {"customer": "Ann", "items": [{}]}}},
                ],
            },
        )
    assert status_of(error.value) == 422
    problems = error.value.problems
    assert "call #1: no tool named 'nope'" in problems
    assert any(p.startswith("call #2 `add`: a: 'five' is not of type 'integer'") for p in problems)
    assert any("'b' is a required property" in p for p in problems)
    assert any("order/items/0: 'sku' is a required property" in p for p in problems)
    assert any("'ship_to' is a required property" in p for p in problems)
    # the request is still waiting
    assert (await engine.view(session_id))["pending"][0]["id"] == request["id"]


async def test_output_schema_forms_are_validated(engine):
    with pytest.raises(StudioError) as bad_input:
        await engine.create_session("Structured", {"query": "q"})
    assert status_of(bad_input.value) == 422
    assert any("max_results" in p for p in bad_input.value.problems)

    session_id = await engine.create_session(
        "Structured", {"query": "capital of France", "max_results": 3}
    )
    view, request = await wait_for(engine, session_id, kind="model")
    assert json.loads(view["entries"][0]["text"]) == {
        "query": "capital of France",
        "max_results": 3,
    }
    assert request["payload"]["output_schema"]["required"] == ["answer", "confidence"]

    with pytest.raises(StudioError) as missing:
        await engine.answer(request["id"], {"type": "output", "value": {"answer": "Paris"}})
    assert missing.value.problems == ["confidence: Field required"]
    with pytest.raises(StudioError):
        await engine.answer(request["id"], {"type": "text", "text": "Paris"})

    await engine.answer(
        request["id"], {"type": "output", "value": {"answer": "Paris", "confidence": 0.9}}
    )
    view, _ = await wait_for(engine, session_id, phase="idle")
    assert json.loads(view["entries"][-1]["text"]) == {"answer": "Paris", "confidence": 0.9}


async def test_a_long_running_tool_waits_for_the_persons_answer(tmp_path):
    def ask(question: str) -> None:
        """Asks the customer."""

    agent = LlmAgent(
        name="asker", model=ScriptedLlm(["unused"]), tools=[LongRunningFunctionTool(ask)]
    )
    target = StudioTarget(
        name="Asker", config=SimulatedAgentConfig("Asker", agent, tmp_path / "a.json")
    )
    studio = StudioEngine([target], tmp_path / "studio.db")
    await studio.start()
    try:
        session_id = await studio.create_session("Asker", "help")
        _, request = await wait_for(studio, session_id, kind="model")
        await studio.answer(
            request["id"],
            {"type": "tool_calls", "calls": [{"name": "ask", "args": {"question": "Which day?"}}]},
        )
        view, tool_request = await wait_for(studio, session_id, kind="tool_answer")
        assert view["phase"] == "awaiting_tool_answer"
        assert tool_request["payload"]["args"] == {"question": "Which day?"}
        await studio.answer(tool_request["id"], {"type": "text", "text": "Tuesday"})
        view, request = await wait_for(studio, session_id, kind="model")
        assert request["payload"]["contents"][-1]["parts"][0]["function_response"]["response"] == {
            "result": "Tuesday"
        }
    finally:
        await studio.stop()


async def test_a_restart_keeps_the_session_and_asks_the_pending_model_call_again(tmp_path):
    db = tmp_path / "studio.db"
    first = StudioEngine(agent_targets(tmp_path), db)
    await first.start()
    session_id = await first.create_session("Toolbox", "What is 5+3?")
    _, request = await wait_for(first, session_id, kind="model")
    await first.answer(request["id"], ADD)
    _, waiting = await wait_for(first, session_id, kind="model")
    await first.stop()  # the server goes down while the person thinks

    second = StudioEngine(agent_targets(tmp_path), db)
    await second.start()
    try:
        view, again = await wait_for(second, session_id, kind="model")
        assert again["id"] != waiting["id"]
        assert [e["kind"] for e in view["entries"]] == ["user", "tool_call", "tool_result"]
        assert again["payload"]["contents"] == waiting["payload"]["contents"]
        await second.answer(again["id"], {"type": "text", "text": "The answer is 8."})
        view, _ = await wait_for(second, session_id, phase="idle")
        assert [e["kind"] for e in view["entries"]] == ["user", "tool_call", "tool_result", "final"]
        with pytest.raises(StudioError, match="superseded"):
            await second.answer(waiting["id"], {"type": "text", "text": "late"})
    finally:
        await second.stop()


async def test_export_appends_to_the_configured_eval_set(engine, tmp_path):
    async def finished_session(question: str, answer: str) -> str:
        session_id = await engine.create_session("Toolbox", question)
        _, request = await wait_for(engine, session_id, kind="model")
        with pytest.raises(StudioError, match="finish the conversation first"):
            await engine.export(session_id)
        await engine.answer(request["id"], {"type": "text", "text": answer})
        await wait_for(engine, session_id, phase="idle")
        return session_id

    first = await engine.export(await finished_session("hi", "Hello!"))
    second = await engine.export(await finished_session("bye", "Goodbye!"))
    assert (first["created"], first["cases"], second["created"], second["cases"]) == (
        True,
        1,
        False,
        2,
    )
    assert first["path"] == str(tmp_path / "toolbox.evalset.json")
    cases = load_eval_set(tmp_path / "toolbox.evalset.json").eval_cases
    assert [c.conversation[0].final_response.parts[0].text for c in cases] == ["Hello!", "Goodbye!"]


async def test_an_eval_case_with_the_person_as_the_model(tmp_path):
    studio = StudioEngine([clinic_case(tmp_path)], tmp_path / "studio.db")
    await studio.start()
    try:
        session_id = await studio.create_session("clinic-case", role="model")
        _, request = await wait_for(studio, session_id, kind="model")
        notes = {t["name"]: t["note"] for t in request["payload"]["tools"]}
        assert notes == {
            "lookup": "mocked in this case",
            "note": "the real tool runs",
            "ask": "a user agent answers it",
            "delete_record": "not allowed",
        }
        with pytest.raises(StudioError) as refused:
            await studio.answer(
                request["id"],
                {
                    "type": "tool_calls",
                    "calls": [{"name": "delete_record", "args": {"patient": "p"}}],
                },
            )
        assert refused.value.problems == [
            "call #1: `delete_record` is not allowed in this session (not allowed)"
        ]
        await studio.answer(
            request["id"],
            {"type": "tool_calls", "calls": [{"name": "lookup", "args": {"patient": "p"}}]},
        )
        _, request = await wait_for(studio, session_id, kind="model")
        await studio.answer(
            request["id"],
            {"type": "tool_calls", "calls": [{"name": "ask", "args": {"question": "Where?"}}]},
        )
        view, request = await wait_for(studio, session_id, kind="model")
        assert any(e.get("response") == {"result": "My head"} for e in view["entries"])
        await studio.answer(
            request["id"],
            {"type": "tool_calls", "calls": [{"name": "note", "args": {"text": "head"}}]},
        )
        _, request = await wait_for(studio, session_id, kind="model")
        await studio.answer(request["id"], {"type": "text", "text": "Rest and drink water."})
        _, request = await wait_for(
            studio, session_id, kind="model"
        )  # after the patient's "Thanks"
        await studio.answer(request["id"], {"type": "text", "text": "Take care."})
        view, _ = await wait_for(studio, session_id, phase="finished")
        assert view["result"]["status"] == "passed"
        assert view["result"]["metrics"]["noted"]["passed"]
        exported = await studio.export(session_id)
        golden = load_eval_set(exported["path"]).eval_cases[0]
        assert [i.user_content.parts[0].text for i in golden.conversation] == [
            "I feel unwell",
            "Thanks",
        ]
        assert [c.name for c in golden.conversation[0].intermediate_data.tool_uses] == [
            "lookup",
            "ask",
            "note",
        ]
        assert golden.final_session_state == {"note": "head"}
    finally:
        await studio.stop()


async def test_an_eval_case_with_the_person_as_the_user(tmp_path):
    studio = StudioEngine([clinic_case(tmp_path)], tmp_path / "studio.db")
    await studio.start()
    try:
        session_id = await studio.create_session("clinic-case", role="tool_user:ask")
        view, request = await wait_for(studio, session_id, kind="user")
        assert request["agent_name"] == "patient_answer"
        assert request["payload"]["yield"]["tool_name"] == "ask"
        assert (
            request["payload"]["prompt"] == 'Tool: ask\nArgs: {"question": "Where does it hurt?"}'
        )
        await studio.answer(request["id"], {"type": "text", "text": "My knee"})
        view, _ = await wait_for(studio, session_id, phase="finished")
        assert any(e.get("response") == {"result": "My knee"} for e in view["entries"])
        assert view["result"]["status"] == "failed"  # the scripted model never takes the note
    finally:
        await studio.stop()


async def test_unknown_targets_and_roles_are_clear_errors(engine):
    with pytest.raises(StudioError, match="no target named 'Nope'"):
        await engine.create_session("Nope", "hi")
    with pytest.raises(StudioError, match="the first message is empty"):
        await engine.create_session("Toolbox", "  ")
    with pytest.raises(StudioError, match="plays the model"):
        await engine.create_session("Toolbox", "hi", role="loop_user")


async def test_a_workflow_case_the_person_plays_an_agent_node(tmp_path):
    from google.adk.workflow import START, Workflow

    from adk_eval import EvalCase, ToolMock

    def lookup(topic: str) -> dict:
        """Looks a topic up (mocked)."""
        raise AssertionError("mocked: never runs")

    def publish(node_input: str) -> str:
        """Publishes (a side effect: mocked)."""
        raise AssertionError("mocked: never runs")

    writer = LlmAgent(name="writer", model=ScriptedLlm(["unused"]), tools=[lookup])
    case = EvalCase(
        name="pipeline-case",
        agent=Workflow(name="pipeline", edges=[(START, writer, publish)]),
        first_message="Write about owls.",
        tool_mocks={"lookup": ToolMock.returning({"facts": "owls hunt at night"})},
        node_mocks={"publish": lambda node_input: f"published: {node_input}"},
    )
    target = StudioTarget(name="pipeline-case", case=case, eval_set_path=tmp_path / "p.json")
    studio = StudioEngine([target], tmp_path / "studio.db")
    await studio.start()
    try:
        session_id = await studio.create_session("pipeline-case", role="model")
        _, request = await wait_for(studio, session_id, kind="model")
        assert request["agent_name"] == "writer"
        await studio.answer(
            request["id"],
            {"type": "tool_calls", "calls": [{"name": "lookup", "args": {"topic": "owls"}}]},
        )
        _, request = await wait_for(studio, session_id, kind="model")
        await studio.answer(request["id"], {"type": "text", "text": "Owls hunt at night."})
        view, _ = await wait_for(studio, session_id, phase="finished")
        assert view["result"]["status"] == "passed"
        exported = await studio.export(session_id)
        golden = load_eval_set(exported["path"]).eval_cases[0]
        assert [c.name for c in golden.conversation[0].intermediate_data.tool_uses] == ["lookup"]
        assert golden.conversation[0].final_response.parts[0].text == "Owls hunt at night."
    finally:
        await studio.stop()


async def test_a_cases_sync_mock_runs_off_the_servers_event_loop(tmp_path):
    import threading

    from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents
    from adk_eval.testing import tool_call

    threads: list[int] = []

    def work() -> dict:
        """Does some work."""
        raise AssertionError("mocked")

    def mock(args, ctx):  # a blocking mock would freeze every page if it ran on the loop
        threads.append(threading.get_ident())
        return {"ok": True}

    agent = LlmAgent(name="worker", model=ScriptedLlm([tool_call("work"), "Done."]), tools=[work])
    case = EvalCase(
        name="blocking",
        agent=agent,
        first_message="go",
        tool_mocks={"work": ToolMock(mock)},
        user_agents=UserAgents(loop=ScriptedUserAgent(name="customer", script=["Thanks"])),
    )
    target = StudioTarget(name="blocking", case=case, eval_set_path=tmp_path / "b.json")
    studio = StudioEngine([target], tmp_path / "studio.db")
    await studio.start()
    try:
        session_id = await studio.create_session("blocking", role="loop_user")
        await wait_for(studio, session_id, kind="user")
        assert len(threads) == 1
        assert threads[0] != threading.get_ident()
    finally:
        await studio.stop()
