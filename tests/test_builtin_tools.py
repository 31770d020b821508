"""Gemini's built-in tools run offline on a default ScriptedLlm (the model provider runs them
for real models; nothing of them runs in adk-eval)."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import VertexAiSearchTool, google_search, url_context

from adk_eval import EvalCase, run_eval
from adk_eval.testing import ScriptedLlm


async def test_an_agent_with_built_in_tools_runs_on_the_default_scripted_model():
    seen = []

    def model(request):
        seen.append(request)
        return "The minutes say rates hold."

    agent = LlmAgent(
        name="researcher",
        model=ScriptedLlm(responder=model),
        tools=[google_search, url_context, VertexAiSearchTool(data_store_id="projects/p/x")],
    )
    result = await run_eval(EvalCase(name="search", agent=agent, first_message="Fed news?"))
    assert result.status == "passed", result.explain()
    tools = seen[0].config.tools
    assert any(tool.google_search for tool in tools)  # the request is as Gemini would get it
    assert any(tool.url_context for tool in tools)
    assert any(tool.retrieval for tool in tools)
