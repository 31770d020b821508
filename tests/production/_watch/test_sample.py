"""The judges' sample is seeded and stable per conversation; the budget holds over any hour."""

from __future__ import annotations

from adk_eval.metrics import event_count_metric, llm_judge
from adk_eval.production._watch._sample import JudgeBudget, is_judge, sampled

NAMES = [f"shop/u{i % 7}/session-{i}" for i in range(4000)]


def test_the_sample_is_stable_seeded_and_of_the_rate() -> None:
    chosen = {n for n in NAMES if sampled(n, 1, 0.1)}
    assert chosen == {n for n in reversed(NAMES) if sampled(n, 1, 0.1)}  # order does not matter
    assert 320 <= len(chosen) <= 480  # 10 % of 4,000, within about 5 standard deviations
    assert chosen != {n for n in NAMES if sampled(n, 2, 0.1)}  # another seed, another sample
    assert all(sampled(n, 1, 1.0) for n in NAMES[:50])
    assert not any(sampled(n, 1, 0.0) for n in NAMES[:50])


def test_the_budget_refuses_past_its_calls_per_hour_and_frees_after_an_hour() -> None:
    now = [0.0]
    budget = JudgeBudget(5, clock=lambda: now[0])
    assert [budget.take(2), budget.take(2), budget.take(2), budget.take(1)] == [
        True, True, False, True,
    ]  # fmt: skip
    assert (budget.spent, budget.in_last_hour()) == (5, (5, 0, 0.0))
    now[0] = 3599.0
    assert not budget.take(1)
    now[0] = 3600.0  # the first calls are an hour old
    assert budget.take(4)
    assert JudgeBudget(None).take(10**6)


def test_judges_are_told_from_cheap_metrics() -> None:
    judge = llm_judge("polite", "Is the agent polite?")
    cheap = event_count_metric("replied", "agent_message", lambda m: True, lambda n: n >= 1)
    assert is_judge(judge)
    assert not is_judge(cheap)


def test_a_token_or_dollar_budget_is_passed_by_one_conversation_at_most_then_held() -> None:
    now = [0.0]
    budget = JudgeBudget(None, tokens_per_hour=1000, cost_per_hour=None, clock=lambda: now[0])
    assert budget.take(1)
    budget.used(900, 0.0)
    assert budget.take(1)  # 900 < 1,000: affordable, whatever this one uses
    budget.used(400, 0.0)
    assert not budget.take(1)  # 1,300 spent in the hour: held
    now[0] = 3600.0  # the first 900 are an hour old: 400 left in the hour
    assert budget.take(1)
    dollars = JudgeBudget(None, cost_per_hour=0.5, clock=lambda: now[0])
    assert dollars.take(2)
    dollars.used(10_000, 0.5)
    assert not dollars.take(1)
    assert (dollars.tokens, dollars.cost, dollars.spent) == (10_000, 0.5, 2)
