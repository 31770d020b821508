"""EvalRunner on its own: an ADK Runner whose every tool call is checked."""

from __future__ import annotations

import logging
import uuid

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.plugins.base_plugin import BasePlugin

from adk_eval import EvalCase, EvalRunner, EvalToolError, ToolMock, run_eval
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(q: str) -> dict:
    """Looks something up."""
    return {"real": q}


def delete_all() -> dict:
    """Deletes everything."""
    raise AssertionError("must never run")


async def collect(runner, session_id, message):
    return [event async for event in runner.run_async(session_id=session_id, new_message=message)]


async def test_runs_an_agent_with_mocks_and_passthrough():
    agent = LlmAgent(
        name="a",
        model=ScriptedLlm([[tool_call("lookup", {"q": "x"})], "found"]),
        tools=[lookup],
    )
    runner = EvalRunner(agent, {"lookup": lookup})
    session = await runner.create_session({"patient": {"age": 1}})
    events = await collect(runner, session.id, "hello")
    assert events[-1].content.parts[0].text == "found"
    assert (await runner.get_session(session.id)).state == {"patient:age": 1}
    await runner.close()


async def test_unmocked_tool_raises_the_eval_tool_error_itself():
    agent = LlmAgent(name="a", model=ScriptedLlm([tool_call("delete_all")]), tools=[delete_all])
    runner = EvalRunner(agent, {})
    session = await runner.create_session()
    with pytest.raises(
        EvalToolError, match="Tool `delete_all` was called by agent `a` during eval"
    ) as caught:
        await collect(runner, session.id, "go")
    # the fix-it names the module the real function comes from
    assert "from tests._run.test_runner import delete_all" in str(caught.value)


async def test_app_plugins_see_a_mocked_call_as_they_would_the_real_one():
    seen = []

    class Audit(BasePlugin):
        async def before_tool_callback(self, *, tool, tool_args, tool_context):
            seen.append(tool.name)

    agent = LlmAgent(
        name="a", model=ScriptedLlm([tool_call("lookup", {"q": "y"}), "ok"]), tools=[lookup]
    )
    app = App(name="my_app", root_agent=agent, plugins=[Audit(name="audit")])
    runner = EvalRunner(app, {"lookup": ToolMock.returning({"mock": True})})
    session = await runner.create_session()
    await collect(runner, session.id, "hi")
    # only the tool's body is replaced: the app's plugin sees the call as it would the real tool's
    assert seen == ["lookup"]
    assert runner.app_name == "my_app"


async def test_apply_state_delta_is_invisible_to_the_model_but_visible_in_state():
    requests = []

    def respond(request):
        requests.append(request)
        return "ok"

    runner = EvalRunner(LlmAgent(name="a", model=ScriptedLlm(responder=respond)), {})
    session = await runner.create_session()
    await runner.apply_state_delta(session.id, {"patient:flag": True}, source="test")
    await collect(runner, session.id, "hi")
    assert (await runner.get_session(session.id)).state["patient:flag"] is True
    assert [c.role for c in requests[0].contents] == ["user"]


async def test_run_before_create_session_is_refused():
    runner = EvalRunner(LlmAgent(name="a", model=ScriptedLlm(["x"])), {})
    with pytest.raises(RuntimeError, match="create_session"):
        await collect(runner, "nope", "hi")


async def test_adks_cache_advice_is_left_out_for_the_app_the_harness_makes_not_for_yours(caplog):
    def tree(name):
        helper = LlmAgent(name="helper", model=ScriptedLlm(["ok"]))
        return LlmAgent(name=name, model=ScriptedLlm(["Hello."]), sub_agents=[helper])

    caplog.set_level(logging.WARNING, logger="google_adk")
    plain = tree(f"plain_{uuid.uuid4().hex[:8]}")
    await run_eval(EvalCase(name="plain", agent=plain, first_message="hi"))
    assert "context_cache_config" not in caplog.text
    yours = App(name=f"yours_{uuid.uuid4().hex[:8]}", root_agent=tree("root"))
    await run_eval(EvalCase(name="yours", agent=yours, first_message="hi"))
    assert "has no context_cache_config" in caplog.text  # ADK's advice, for your own App
