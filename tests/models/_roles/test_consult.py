"""ADK's ModelConsultTool: its advisor is a model of the case (models=, the key check, usage)."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.tools.model_consult import ModelConsultTool

from adk_eval import EvalCase, run_eval
from adk_eval.fake_provider import FakeProviderServer
from adk_eval.testing import ScriptedLlm, tool_call


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)


def consulting(tool: ModelConsultTool, **case) -> EvalCase:
    executor = LlmAgent(
        name="executor",
        model=ScriptedLlm([tool_call("model_consult", {"question": "Refund first?"}), "Done."]),
        tools=[tool],
    )
    return EvalCase(name="consult", agent=executor, first_message="help", **case)


def consult_answer(result) -> dict:
    return next(c.response for c in result.trace.tool_calls if c.name == "model_consult")


async def test_an_advisor_without_its_key_ends_the_run_at_the_call_naming_the_tool():
    result = await run_eval(consulting(ModelConsultTool()))

    assert result.status == "error", result.explain()
    assert result.error.phase == "setup"
    assert "the advisor of tool `model_consult` cannot run" in result.error.message
    assert "needs a Gemini API key" in result.error.message
    assert 'models={"model_consult": ...}' in result.error.message


async def test_the_cases_models_reach_the_advisor_by_the_tools_name_and_its_usage_counts():
    tool = ModelConsultTool()
    advisor = ScriptedLlm(["Look the order up before refunding."])
    result = await run_eval(consulting(tool, models={"model_consult": advisor}))

    assert result.passed, result.explain()
    answer = consult_answer(result)
    assert answer["status"] == "ok"
    assert answer["guidance"] == "Look the order up before refunding."
    roles = {usage.role for usage in result.usage}
    assert "tool:model_consult" in roles
    assert tool.advisor_model.model == "gemini-3.1-pro-preview"  # the user's tool is not changed


async def test_a_gemini_advisor_runs_as_adks_own_against_a_provider():
    with FakeProviderServer(["Check the stock first."]) as server:
        advisor = Gemini(
            model="gemini-2.5-pro",
            base_url=server.gemini_base,
            client_kwargs={"api_key": "test-key"},
        )
        result = await run_eval(consulting(ModelConsultTool(model=advisor), sandbox="strict"))

    assert result.passed, result.explain()
    assert consult_answer(result)["guidance"] == "Check the stock first."
    assert result.warnings == ()  # its connection is model traffic, even in strict mode
