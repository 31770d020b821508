"""Budgets: a case's `TerminateWhen(max_tokens=..., max_cost=...)` and a suite's `Budget`.

`ScriptedLlm` reports deterministic usage (characters / 4), so where a budget
stops is known before the run.
"""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent

from adk_eval import (
    EvalCase,
    EvalSetupError,
    ScriptedUserAgent,
    TerminateWhen,
    UserAgents,
    run_eval,
    run_eval_suite,
)
from adk_eval._termination import Budget
from adk_eval.testing import ScriptedLlm

CHATTY = "Let me tell you more about that. " * 20  # ~165 tokens a reply


def chatty_case(name: str = "chatty", **limits) -> EvalCase:
    return EvalCase(
        name=name,
        agent=LlmAgent(name="talker", model=ScriptedLlm([CHATTY] * 30, model="gpt-4o-mini")),
        first_message="hi",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="u", script=["go on"] * 30)),
        terminate_when=TerminateWhen(max_turns=25, **limits),
    )


async def test_max_tokens_terminates_the_run_at_the_next_model_call_and_keeps_the_trace():
    result = await run_eval(chatty_case(max_tokens=1000))

    assert result.status == "terminated", result.explain()
    assert result.termination.kind == "max_tokens"
    assert result.termination.limit == 1000
    spent = sum(item.total_tokens for item in result.usage)
    assert 1000 <= spent < 1000 + 2 * 400  # stopped at the first call past the limit
    assert result.termination.value >= 1000
    assert "max_tokens: " in result.explain()
    assert result.turns < 25
    unlimited = await run_eval(chatty_case())
    assert unlimited.termination.kind == "max_turns"  # the same case runs on without a budget


async def test_max_cost_terminates_the_run_once_its_price_is_spent():
    result = await run_eval(chatty_case(max_cost=0.0005))

    assert result.status == "terminated", result.explain()
    assert result.termination.kind == "max_cost"
    assert result.cost_usd >= 0.0005
    assert result.termination.value == pytest.approx(result.cost_usd, rel=0.2)


def test_a_bad_budget_is_one_clear_error():
    with pytest.raises(EvalSetupError, match="max_cost must be a positive number"):
        TerminateWhen(max_cost=0)
    with pytest.raises(EvalSetupError, match="max_tokens must be a positive number"):
        Budget(max_tokens=-5)


async def test_a_suite_budget_stops_the_suite_and_keeps_every_finished_run():
    cases = [chatty_case(f"case-{i}", max_tokens=None) for i in range(6)]
    for case in cases:
        case.terminate_when = TerminateWhen(max_turns=2)

    suite = await run_eval_suite(cases, max_concurrency=1, budget=Budget(max_tokens=4000))

    finished = len(suite.results)
    assert 0 < finished < 6
    assert suite.budget_reached is not None
    assert suite.budget_reached.kind == "max_tokens"
    assert suite.budget_reached.value >= 4000
    spent_before_last = sum(i.total_tokens for r in suite.results[:-1] for i in r.usage)
    assert spent_before_last < 4000  # it stopped at the run that crossed the limit
    assert suite.not_run == [f"case-{i}" for i in range(finished, 6)]
    assert suite.summary["not_run"] == 6 - finished
    assert suite.stopped_early


async def test_a_run_whose_last_call_crossed_its_budget_is_terminated_with_the_figures():
    huge = "word " * 80_000  # one answer of ~100,000 tokens
    case = EvalCase(
        name="huge",
        agent=LlmAgent(name="talker", model=ScriptedLlm([huge])),
        first_message="hi",
        terminate_when=TerminateWhen(max_tokens=100),
    )

    result = await run_eval(case)

    assert result.status == "terminated", result.explain()
    assert result.termination.kind == "max_tokens"
    assert result.termination.limit == 100
    assert result.termination.value > 100_000
    assert "x the limit: calls already made crossed it" in result.explain()
