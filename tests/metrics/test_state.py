"""state_metric: assertion on a final state value; missing keys fail with a reason."""

from __future__ import annotations

import pytest

from adk_eval import EvalTrace
from adk_eval.metrics import MetricResult, state_metric


def trace(**session) -> EvalTrace:
    return EvalTrace(events=[], final_state={"session": session, "patient": {"age": 55}})


async def test_passes_when_the_assertion_holds():
    metric = state_metric("escalated", "session", "escalation", lambda v: v["urgency"] == "999")
    result = await metric.evaluate(trace(escalation={"urgency": "999"}))
    assert result.passed
    assert result.value == {"urgency": "999"}
    assert result.evidence == ["`session.escalation` = {'urgency': '999'}"]


async def test_fails_when_the_assertion_does_not_hold():
    metric = state_metric("escalated", "session", "escalation", lambda v: v["urgency"] == "999")
    assert not (await metric.evaluate(trace(escalation={"urgency": "gp"}))).passed


async def test_missing_key_fails_with_a_reason_not_an_exception():
    metric = state_metric("escalated", "session", "escalation", lambda v: v["urgency"] == "999")
    result = await metric.evaluate(trace(other=1))
    assert not result.passed
    assert "`session.escalation` is not set in the final state" in result.evidence[0]
    assert "['other']" in result.evidence[0]


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
