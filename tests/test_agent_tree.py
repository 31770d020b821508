"""Per-case models on a copy of the agent tree, and the model checks (the root before a run,
any other agent at its first model call)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from google.adk.agents import LlmAgent
from google.adk.tools import AgentTool

from adk_eval import EvalCase, EvalSetupError, ToolMock, run_eval
from adk_eval._agent_tree import walk, with_models
from adk_eval._cli import main
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(q: str) -> dict:
    """Looks something up (mocked)."""
    raise AssertionError("never runs")


def travel_tree() -> LlmAgent:
    """A module-level singleton in real code: a sub-agent that holds an AgentTool."""
    finder = LlmAgent(name="finder", description="Finds flights.", tools=[lookup])
    planner = LlmAgent(name="planner", description="Plans trips.", tools=[AgentTool(finder)])
    return LlmAgent(name="concierge", sub_agents=[planner])


def scripted_models() -> dict:
    return {
        "concierge": ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "planner"})]),
        "planner": ScriptedLlm([tool_call("finder", {"request": "flights"}), "Booked."]),
        "finder": ScriptedLlm([tool_call("lookup", {"q": "PAR"}), "Found AF1."]),
    }


def test_the_copy_runs_other_models_and_the_original_is_untouched():
    root = travel_tree()
    models = scripted_models()
    copy = with_models(root, models)
    agents = {agent.name: agent for agent, _ in walk(copy)}
    assert {name: agents[name].model for name in models} == models
    originals = {agent.name: agent for agent, _ in walk(root)}
    assert all(originals[name].model == "" for name in models)
    assert all(agents[name] is not originals[name] for name in models)
    assert agents["planner"].parent_agent is copy
    assert agents["planner"].tools[0].agent is agents["finder"]  # the AgentTool's copy
    assert originals["planner"].tools[0].agent is originals["finder"]
    assert agents["finder"].tools == originals["finder"].tools  # tools are shared, not copied


def test_a_star_gives_every_other_agent_a_model():
    default = ScriptedLlm(["hi"])
    copy = with_models(travel_tree(), {"*": default, "finder": ScriptedLlm(["x"])})
    models = {agent.name: agent.model for agent, _ in walk(copy)}
    assert models["concierge"] is default
    assert models["planner"] is default
    assert models["finder"] is not default


async def test_a_case_runs_on_its_models_and_the_shared_agent_keeps_its_own():
    root = travel_tree()
    result = await run_eval(
        EvalCase(
            name="books",
            agent=root,
            models=scripted_models(),
            tool_mocks={"lookup": ToolMock.returning({"flight": "AF1"})},
            first_message="a trip to Paris",
        )
    )
    assert result.status == "passed", result.explain()
    assert [c.name for c in result.trace.nested_tool_calls][-1] == "lookup"
    assert root.model == ""


def test_model_names_are_checked_against_the_tree():
    with pytest.raises(EvalSetupError, match=r"models names `fnider`.*Did you mean `finder`\?"):
        EvalCase(name="x", agent=travel_tree(), models={"fnider": "x"}, first_message="hi")


def no_gemini_key(monkeypatch) -> None:
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)


async def test_a_root_without_a_usable_model_is_named_before_anything_runs(monkeypatch):
    no_gemini_key(monkeypatch)
    with pytest.raises(
        EvalSetupError,
        match=r"agent `concierge` cannot run: model 'gemini-.*' needs a Gemini API key.*"
        r"\(inherited: the agent sets no model\)",
    ):
        await run_eval(EvalCase(name="x", agent=travel_tree(), first_message="hi"))


async def test_an_agent_without_a_usable_model_is_named_at_its_first_model_call(monkeypatch, capfd):
    no_gemini_key(monkeypatch)
    models = scripted_models()
    del models["finder"]
    result = await run_eval(
        EvalCase(name="x", agent=travel_tree(), models=models, first_message="hi")
    )
    assert (result.status, result.error.phase, result.error.type) == (
        "error",
        "setup",
        "EvalSetupError",
    )
    assert re.search(
        r"agent `finder` inside AgentTool `finder` of `planner` cannot run: model "
        r"'gemini-.*' needs a Gemini API key.*\(inherited: the agent sets no model\)",
        result.error.message,
    )
    assert [c.name for c in result.trace.tool_calls] == ["transfer_to_agent", "finder"]
    assert "Traceback" not in capfd.readouterr().err


def big_tree() -> LlmAgent:
    """A 17-agent tree (like travel-concierge): every agent on Gemini, no key in the tests."""
    leaves = [
        LlmAgent(name=f"{area}_{job}", model="gemini-2.5-flash", tools=[lookup])
        for area in ("booking", "planning", "in_trip", "post_trip")
        for job in ("search", "check", "act")
    ]
    areas = [
        LlmAgent(
            name=area,
            model="gemini-2.5-flash",
            tools=[AgentTool(leaf) for leaf in leaves if leaf.name.startswith(area)],
        )
        for area in ("booking", "planning", "in_trip", "post_trip")
    ]
    return LlmAgent(name="root", model="gemini-2.5-flash", sub_agents=areas)


async def test_a_case_needs_models_only_for_the_agents_it_reaches(monkeypatch):
    no_gemini_key(monkeypatch)
    tree = big_tree()
    assert sum(1 for _ in walk(tree)) == 17
    scripted = {  # the three agents the case reaches
        "root": ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "planning"})]),
        "planning": ScriptedLlm([tool_call("planning_search", {"request": "Paris"}), "Planned."]),
        "planning_search": ScriptedLlm([tool_call("lookup", {"q": "Paris"}), "Found it."]),
    }
    result = await run_eval(
        EvalCase(
            name="plans",
            agent=tree,
            models=scripted,
            tool_mocks={"lookup": ToolMock.returning({"hotel": "H1"})},
            first_message="plan a trip",
        )
    )
    assert result.status == "passed", result.explain()


SHARED_AGENT = """
from google.adk.agents import LlmAgent

root_agent = LlmAgent(name="greeter")
"""


def greeter_eval(word: str, message: str, reply: str) -> str:
    """An eval file: its case `says-<word>` has the shared greeter answer `message` with `reply`."""
    return f"""
from shared_agent import root_agent

{word} = EvalCase(
    name="says-{word}", agent=root_agent, first_message="{message}",
    models={{"greeter": ScriptedLlm(["{reply}"])}},
    metrics=[event_count_metric("said_{word}", "agent_message",
                                lambda m: m.text == "{reply}", lambda n: n == 1)],
)
"""


def test_two_eval_files_script_one_shared_agent_each_their_own_way(write_evals, monkeypatch):
    root = write_evals(
        {
            "shared_agent.py": SHARED_AGENT,
            "a_eval.py": greeter_eval("hello", "hi", "Hello!"),
            "b_eval.py": greeter_eval("bye", "bye", "Goodbye!"),
        }
    )
    monkeypatch.syspath_prepend(str(root))
    result = CliRunner().invoke(main, ["run", str(root), "--no-store"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "2 passed" in result.output


MUTATES_A = """
from shared_agent import root_agent

root_agent.model = ScriptedLlm(["Hello!"])
hello = EvalCase(name="says-hello", agent=root_agent, first_message="hi")
"""

MUTATES_B = """
from shared_agent import root_agent

root_agent.model = ScriptedLlm(["Goodbye!"])
bye = EvalCase(name="says-bye", agent=root_agent, first_message="bye")
"""


def test_two_eval_files_that_set_one_shared_agents_model_get_a_warning(write_evals, monkeypatch):
    root = write_evals(
        {"shared_agent.py": SHARED_AGENT, "a_eval.py": MUTATES_A, "b_eval.py": MUTATES_B}
    )
    monkeypatch.syspath_prepend(str(root))
    result = CliRunner().invoke(main, ["run", str(root), "--no-store"], catch_exceptions=False)
    assert "adk-eval: warning: " in result.output
    assert "changed the model of agent `greeter`, which cases of" in result.output
    assert 'EvalCase(models={"greeter": ...})' in result.output
