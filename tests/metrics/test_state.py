"""state_metric: assertion on a final state value; missing keys fail with a reason."""

from __future__ import annotations

import pytest

from adk_eval import EvalTrace
from adk_eval.metrics import MetricResult, final_state_match, state_metric


def trace(**session) -> EvalTrace:
    return EvalTrace(events=[], final_state={"session": session, "patient": {"age": 55}})


async def test_passes_when_the_assertion_holds():
    metric = state_metric("escalated", "session", "escalation", lambda v: v["urgency"] == "999")
    result = await metric.evaluate(trace(escalation={"urgency": "999"}))
    assert result.passed
    assert result.value == {"urgency": "999"}
    assert result.evidence == [
        "`session.escalation` = {'urgency': '999'}; expected: v['urgency'] == '999'"
    ]


async def test_fails_when_the_assertion_does_not_hold():
    metric = state_metric("escalated", "session", "escalation", lambda v: v["urgency"] == "999")
    assert not (await metric.evaluate(trace(escalation={"urgency": "gp"}))).passed


async def test_missing_key_fails_with_a_reason_not_an_exception():
    metric = state_metric("escalated", "session", "escalation", lambda v: v["urgency"] == "999")
    result = await metric.evaluate(trace(other=1))
    assert not result.passed
    assert "`session.escalation` is not set in the final state" in result.evidence[0]
    assert "['other']" in result.evidence[0]


async def test_a_missing_key_lists_the_keys_that_are_there_whatever_the_assertion_does():
    metric = state_metric("escalated", "session", "escalation", lambda v: v == "999")
    result = await metric.evaluate(trace(handover=True, notes="x"))
    assert not result.passed
    assert result.evidence == [
        "`session.escalation` is not set in the final state; keys of `session`: "
        "['handover', 'notes']"
    ]


async def test_missing_key_is_passed_as_none_to_assertions_that_accept_it():
    metric = state_metric("not_escalated", "session", "escalation", lambda v: v is None)
    assert (await metric.evaluate(trace())).passed


async def test_other_scopes_and_async_assertions():
    async def older_than_50(age):
        return age > 50

    metric = state_metric("age", "patient", "age", older_than_50)
    assert (await metric.evaluate(trace())).passed


async def test_an_assertion_may_return_a_metric_result():
    metric = state_metric(
        "scored", "patient", "age", lambda v: MetricResult(passed=True, score=0.5)
    )
    assert (await metric.evaluate(trace())).score == 0.5


def test_key_and_assertion_are_required():
    with pytest.raises(ValueError, match="needs a `key`"):
        state_metric("m", "session")
    with pytest.raises(ValueError, match="needs an `assertion`"):
        state_metric("m", "session", "k")


def test_final_state_match_names_each_differing_key_with_a_bounded_excerpt():
    expected = {"escalation": "999", "patient:age": 55, "user:notes": "x" * 500, "_adk_k": 1}
    actual = trace(escalation="999", extra=True, notes="y")  # patient: {"age": 55}
    result = final_state_match("final", expected).evaluate(actual)

    assert not result.passed
    assert result.score == 0.0
    assert result.value == {"differing": ["extra", "notes", "user:notes"], "ignored": [], "keys": 5}
    assert result.evidence[0] == "`extra` = true, which the expected state does not hold"
    assert result.evidence[1] == '`notes` = "y", which the expected state does not hold'
    assert result.evidence[2].startswith('`user:notes` is not set; expected "xxxx')
    assert result.evidence[2].endswith("… (302 more characters)")  # 502 characters of JSON


def test_final_state_match_ignores_keys_and_patterns_but_names_them():
    expected = {"escalation": "999", "patient:age": 55, "seen_at": 1.0}
    actual = trace(escalation="999", seen_at=2.0)
    assert final_state_match("final", expected).evaluate(actual).passed is False

    result = final_state_match("final", expected, ignore=["*_at"]).evaluate(actual)
    assert result.passed
    assert result.score == 1.0
    assert result.evidence == [
        "the final state matches (3 keys)",
        "ignored, and different: `seen_at`",
    ]
