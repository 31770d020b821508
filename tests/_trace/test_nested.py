"""Calls made inside `AgentTool`s are part of the trace: recorded with their path, opt-in for
metrics, and shown indented under their AgentTool call."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import AgentTool

from adk_eval import EvalCase, ToolMock, run_eval
from adk_eval._transcript import render_transcript
from adk_eval.metrics import event_count_metric, trajectory_match
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(q: str) -> dict:
    """Looks something up (mocked in these tests)."""
    raise AssertionError("the real lookup never runs")


def two_deep_case(**metrics_and_more) -> EvalCase:
    """root -> AgentTool `research` -> AgentTool `finder`, each calling `lookup`."""
    finder = LlmAgent(
        name="finder",
        description="Finds facts.",
        model=ScriptedLlm([tool_call("lookup", {"q": "inner"}), "found it"]),
        tools=[lookup],
    )
    research = LlmAgent(
        name="research",
        description="Researches.",
        model=ScriptedLlm(
            [[tool_call("finder", {"request": "dig"}), tool_call("lookup", {"q": "mid"})], "done"]
        ),
        tools=[AgentTool(finder), lookup],
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([tool_call("research", {"request": "go"}), "all done"]),
        tools=[AgentTool(research)],
    )
    return EvalCase(
        name="nested",
        agent=root,
        tool_mocks={"lookup": ToolMock(lambda args, ctx: {"answer": args["q"]})},
        first_message="research please",
        **metrics_and_more,
    )


async def test_calls_inside_agent_tools_are_recorded_with_their_path():
    result = await run_eval(two_deep_case())
    assert result.status == "passed", result.explain()
    trace = result.trace
    assert [c.name for c in trace.tool_calls] == ["research"]
    nested = [(c.path, c.author, c.name, c.args, c.response) for c in trace.nested_tool_calls]
    assert nested[0][:3] == ((), "root", "research")
    assert nested[1:] == [
        (("research",), "research", "finder", {"request": "dig"}, {"result": "found it"}),
        (("research", "finder"), "finder", "lookup", {"q": "inner"}, {"answer": "inner"}),
        (("research",), "research", "lookup", {"q": "mid"}, {"answer": "mid"}),
    ]
    texts = [(m.path, m.text) for m in trace.select("agent_message", nested=True)]
    assert (("research", "finder"), "found it") in texts
    assert texts[-1] == ((), "all done")


async def test_metrics_see_nested_calls_only_when_they_ask():
    result = await run_eval(
        two_deep_case(
            metrics=[
                trajectory_match("top_level", ["research"], args="ignore"),
                trajectory_match(
                    "nested",
                    ["research", "finder", "lookup", "lookup"],
                    args="ignore",
                    nested=True,
                ),
                event_count_metric(
                    "no_top_lookups", "tool_call", lambda c: c.name == "lookup", lambda n: n == 0
                ),
                event_count_metric(
                    "finder_looked_up_once",
                    "tool_call",
                    lambda c: c.name == "lookup" and c.path[-1:] == ("finder",),
                    lambda n: n == 1,
                    nested=True,
                ),
            ]
        )
    )
    assert result.status == "passed", result.explain()
    wrong = await run_eval(
        two_deep_case(
            metrics=[trajectory_match("nested", ["research", "lookup"], args="ignore", nested=True)]
        )
    )
    assert wrong.status == "failed"


async def test_the_transcript_indents_nested_calls_under_their_agent_tool():
    result = await run_eval(two_deep_case())
    lines = render_transcript(result.trace, include_state=False).splitlines()
    research = lines.index('[root] calls research({"request": "go"})')
    assert lines[research + 1] == '    [research] calls finder({"request": "dig"})'
    assert '        [finder] calls lookup({"q": "inner"})' in lines
    assert '        [lookup result] {"answer": "inner"}' in lines
    assert "        [finder] found it" in lines
    assert lines[-1] == "[root] all done"
    explained = result.explain(last_turns=20)
    assert '      finder -> lookup({"q": "inner"}) = {"answer": "inner"}' in explained
