"""The system under test in a run: its failures, its usage, and its state, each run's own.

Its model's failure (a provider down, a script run out) is the run's error of phase
``system``; its token usage is summed from its events; runs sharing one agent each get
their own state.
"""

from __future__ import annotations

import anyio
from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

from adk_eval import EvalCase, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

from .clinic import read_state


async def test_a_failing_system_model_is_a_system_error():
    system = LlmAgent(name="a", model=ScriptedLlm([ConnectionError("provider down")]))
    result = await run_eval(EvalCase(name="broken-system", agent=system, first_message="hi"))

    assert result.status == "error"
    assert result.error.phase == "system"
    assert "provider down" in result.error.message


async def test_exhausted_script_is_a_clear_system_error():
    system = LlmAgent(name="a", model=ScriptedLlm(["one"]))
    patient = ScriptedUserAgent(name="patient", script=["more please"])
    result = await run_eval(
        EvalCase(
            name="short-script",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=patient),
        )
    )

    assert result.status == "error"
    assert "has 1 steps but was asked for step #2" in result.error.message


async def test_token_usage_is_summed_from_the_events():
    system = LlmAgent(
        name="a",
        model=ScriptedLlm([tool_call("read_state", {"key": "k"}), "done"]),
        tools=[read_state],
    )
    result = await run_eval(
        EvalCase(
            name="tokens", agent=system, first_message="hi", tool_mocks={"read_state": read_state}
        )
    )

    per_event = [e.usage_metadata for e in result.events if e.usage_metadata]
    assert len(per_event) == 2
    assert result.token_usage.input_tokens == sum(u.prompt_token_count for u in per_event) > 0
    assert result.token_usage.output_tokens == sum(u.candidates_token_count for u in per_event) > 0
    assert result.token_usage.total_tokens == (
        result.token_usage.input_tokens + result.token_usage.output_tokens
    )


async def test_concurrent_cases_sharing_one_agent_do_not_see_each_others_state():
    def bump(tool_context: ToolContext) -> dict:
        """Increments a counter in state (safe)."""
        count = tool_context.state.get("user:count", 0) + 1
        tool_context.state["user:count"] = count
        return {"count": count}

    agent = LlmAgent(
        name="counter",
        model=ScriptedLlm([tool_call("bump"), tool_call("bump"), "done"]),
        tools=[bump],
    )
    cases = [
        EvalCase(
            name=f"case-{i}",
            agent=agent,
            first_message="go",
            tool_mocks={"bump": bump},
            initial_state={"user": {"count": i * 100}, "session": {"who": i}},
        )
        for i in range(10)
    ]
    results = {}

    async def run(case):
        results[case.name] = await run_eval(case)

    async with anyio.create_task_group() as group:
        for case in cases:
            group.start_soon(run, case)

    for i in range(10):
        result = results[f"case-{i}"]
        assert result.status == "passed", result.explain()
        assert result.final_state["user"]["count"] == i * 100 + 2
        assert result.final_state["session"]["who"] == i
    assert cases[3].initial_state["user"]["count"] == 300  # the case's own dict is untouched
