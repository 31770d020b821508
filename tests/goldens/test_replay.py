"""From goldens back to evals: trajectories and replayed cases that score new runs."""

from __future__ import annotations

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.goldens import (
    append_golden,
    eval_case_from_golden,
    expected_trajectories,
    load_goldens,
    to_golden,
)
from adk_eval.metrics import ExpectedCall
from adk_eval.testing import ScriptedLlm, tool_call
from examples.calculator.agent import add, multiply, root_agent

TOOLS = {"add": add, "multiply": multiply}


async def golden_file(tmp_path):
    result = await run_eval(
        EvalCase(
            name="calc",
            agent=root_agent,
            first_message="What is 2+3?",
            tool_mocks=TOOLS,
            user_agents=UserAgents(loop=ScriptedUserAgent(name="asker", script=["And 4*5?"])),
        )
    )
    path = tmp_path / "calculator.evalset.json"
    append_golden(path, to_golden(result, eval_id="two_questions"), "calculator")
    return path


async def test_expected_trajectories_of_an_eval_set(tmp_path):
    path = await golden_file(tmp_path)
    assert expected_trajectories(path) == {
        "two_questions": [
            ExpectedCall("add", {"a": 2, "b": 3}),
            ExpectedCall("multiply", {"a": 4, "b": 5}),
        ]
    }


async def test_a_golden_scores_a_later_run(tmp_path):
    golden = load_goldens(await golden_file(tmp_path))["two_questions"]

    same = await run_eval(eval_case_from_golden(golden, root_agent, tool_mocks=TOOLS))
    assert same.passed, same.explain()
    assert same.turns == 1  # "And 4*5?"; the script's end (STOP) is not a turn

    def add(a: int, b: int) -> dict:
        """Adds."""
        return {"result": a + b}

    def multiply(a: int, b: int) -> dict:
        """Multiplies."""
        return {"result": a * b}

    regressed = LlmAgent(
        name="calculator",
        model=ScriptedLlm(
            [tool_call("add", {"a": 3, "b": 2}), "5", tool_call("multiply", {"a": 4, "b": 5}), "20"]
        ),
        tools=[add, multiply],
    )
    later = await run_eval(
        eval_case_from_golden(
            golden, regressed, tool_mocks={"add": add, "multiply": multiply}, name="regressed"
        )
    )
    assert later.status == "failed"
    evidence = later.metrics["golden_trajectory"].evidence[0]
    assert evidence.startswith("turn 1: first divergence at call #1: `add` args differ")
