"""Agents a tool builds and runs while the case runs get the case's models, checked where they run.

The shape is the one adk-samples use: a function tool builds an `LlmAgent` and
runs it with ``AgentTool(agent).run_async(...)``. No walk of the tree before the
run can see that agent.
"""

from __future__ import annotations

import logging

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.tools import AgentTool, ToolContext
from google.adk.tools.google_search_tool import GoogleSearchTool

from adk_eval import EvalCase, EvalSetupError, ToolMock, run_eval
from adk_eval.fake_provider import FakeProviderServer, text_reply
from adk_eval.testing import ScriptedLlm, tool_call

RAN: list[str] = []
SEEN_BY_CALLBACK: list[str] = []
CRITIC_MODEL: dict[str, object] = {"model": "gemini-2.5-flash"}
"""What the tool builds its critic on (a test points it at a fake Gemini server)."""


def fetch_style_guide(topic: str) -> dict:
    """Fetches the house style guide (calls a real service)."""
    RAN.append("fetch_style_guide")
    return {"guide": "real"}


def remember(callback_context, llm_request):
    SEEN_BY_CALLBACK.append(callback_context.agent_name)


async def review(text: str, tool_context: ToolContext) -> dict:
    """Reviews a draft with a critic agent it builds for the purpose."""
    critic = LlmAgent(
        name="critic",
        model=CRITIC_MODEL["model"],
        instruction="Critique the draft against the style guide.",
        tools=[fetch_style_guide],
        before_model_callback=remember,
    )
    verdict = await AgentTool(critic).run_async(args={"request": text}, tool_context=tool_context)
    return {"review": verdict}


def writer() -> LlmAgent:
    return LlmAgent(
        name="writer",
        model=ScriptedLlm([tool_call("review", {"text": "draft"}), "Reviewed."]),
        tools=[review],
    )


def critic_script() -> ScriptedLlm:
    return ScriptedLlm([tool_call("fetch_style_guide", {"topic": "tone"}), "Too formal."])


MOCKS = {"review": review, "fetch_style_guide": ToolMock.returning({"guide": "be brief"})}


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)
    RAN.clear()
    SEEN_BY_CALLBACK.clear()
    CRITIC_MODEL["model"] = "gemini-2.5-flash"
    yield
    assert RAN == []


def case(**kwargs) -> EvalCase:
    kwargs.setdefault("tool_mocks", MOCKS)
    return EvalCase(name="review", agent=writer(), first_message="Review my draft", **kwargs)


@pytest.mark.parametrize("key", ["critic", "*"])
async def test_models_by_name_or_star_reach_an_agent_a_tool_builds(key):
    models = {key: critic_script()}
    if key == "*":  # the writer gets its own script back by name
        models["writer"] = ScriptedLlm([tool_call("review", {"text": "draft"}), "Reviewed."])
    result = await run_eval(case(models=models))

    assert result.status == "passed", result.explain()
    assert result.trace.tool_calls[0].response == {"review": "Too formal."}
    [nested] = [call for call in result.trace.nested_tool_calls if call.path]
    assert (nested.author, nested.name, nested.response) == (
        "critic",
        "fetch_style_guide",
        {"guide": "be brief"},
    )
    assert SEEN_BY_CALLBACK == ["critic", "critic"]  # only the model changed, callbacks ran


async def test_an_agent_built_without_a_runnable_model_stops_the_run_in_one_line(caplog):
    caplog.set_level(logging.WARNING)
    result = await run_eval(case())

    assert result.status == "error"
    assert result.error.phase == "setup"
    assert result.error.message.startswith(
        "EvalCase `review`: agent `critic` (built at run time by tool `review` of agent "
        "`writer`) cannot run: model 'gemini-2.5-flash' needs a Gemini API key"
    )
    assert 'EvalCase(models={"critic": ...})' in result.error.message
    assert "Traceback" not in caplog.text


async def test_with_a_key_set_a_scripted_case_sends_nothing_to_the_provider(monkeypatch):
    with FakeProviderServer([text_reply("real Gemini answered")]) as server:
        CRITIC_MODEL["model"] = Gemini(
            model="gemini-2.5-flash",
            base_url=server.gemini_base,
            client_kwargs={"api_key": "test-key"},
        )
        scripted = await run_eval(case(models={"critic": critic_script()}))
        assert scripted.status == "passed", scripted.explain()
        assert server.requests == []

        unscripted = await run_eval(case())  # the leak the models prevent, seen
        assert unscripted.trace.tool_calls[0].response == {"review": "real Gemini answered"}
        assert len(server.requests) == 1


async def test_the_tools_of_an_agent_built_at_run_time_are_intercepted_and_named():
    result = await run_eval(case(models={"critic": critic_script()}, tool_mocks={"review": review}))
    assert result.status == "error"
    assert result.error.message.startswith(
        "Tool `fetch_style_guide` was called by agent `critic` (built at run time inside "
        "tool `review`) during eval but no mock was provided."
    )


async def test_a_misspelt_mock_of_such_a_tool_is_named_when_the_real_one_is_refused():
    mocks = {"review": review, "fetch_styleguide": ToolMock.returning({"guide": "x"})}
    result = await run_eval(case(models={"critic": critic_script()}, tool_mocks=mocks))
    assert result.status == "error"
    assert (
        "tool_mocks names `fetch_styleguide`, which no tool of this run has: did you mean "
        "`fetch_style_guide`?" in result.error.message
    )


async def test_a_mock_no_agent_used_that_resembles_a_tool_is_reported_after_the_run():
    mocks = {**MOCKS, "fetch_style_guides": ToolMock.returning({})}
    result = await run_eval(case(models={"critic": critic_script()}, tool_mocks=mocks))
    assert result.status == "error"
    assert result.error.phase == "setup"
    assert result.error.message.startswith(
        "tool_mocks names `fetch_style_guides`, but no agent of this run had a tool by that "
        "name, so it was never used. Did you mean `fetch_style_guide`?"
    )


async def test_a_misspelt_models_key_is_named_with_the_agent_that_could_not_run():
    result = await run_eval(case(models={"critik": critic_script()}))
    assert result.status == "error"
    assert result.error.message.endswith("(models names `critik`: did you mean `critic`?)")


async def test_names_near_the_trees_own_are_typos_at_set_up():
    with pytest.raises(EvalSetupError, match=r"models names `writr`.*Did you mean `writer`\?"):
        case(models={"writr": critic_script()})
    misspelt = case(tool_mocks={"reveiw": ToolMock.returning({})})
    with pytest.raises(EvalSetupError, match=r"tool_mocks names `reveiw`.*Did you mean `review`"):
        await run_eval(misspelt)


async def test_a_tree_with_no_code_of_its_own_takes_no_unknown_name():
    agent = LlmAgent(name="greeter", model=ScriptedLlm(["Hi."]))
    with pytest.raises(EvalSetupError, match="models names `critic`"):
        EvalCase(name="x", agent=agent, first_message="hi", models={"critic": "x"})
    mocked = EvalCase(
        name="x", agent=agent, first_message="hi", tool_mocks={"nope": ToolMock.returning({})}
    )
    with pytest.raises(EvalSetupError, match=r"tool_mocks names `nope`.*no tool by that name"):
        await run_eval(mocked)


async def test_adks_own_search_agent_gets_its_model_by_name():
    """With other tools and bypass_multi_tools_limit, ADK wraps search in an agent of its own."""
    search = ScriptedLlm(["Rates held in March."])
    agent = LlmAgent(
        name="analyst",
        model=ScriptedLlm([tool_call("google_search_agent", {"request": "fed"}), "They held."]),
        tools=[GoogleSearchTool(bypass_multi_tools_limit=True), fetch_style_guide],
    )
    result = await run_eval(
        EvalCase(
            name="search",
            agent=agent,
            first_message="What did the Fed do?",
            tool_mocks={"fetch_style_guide": ToolMock.returning({})},
            models={"google_search_agent": search},
        )
    )
    assert result.status == "passed", result.explain()
    assert result.trace.tool_calls[0].response == {"result": "Rates held in March."}
