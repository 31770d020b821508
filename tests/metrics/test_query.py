"""state_query: a MongoDB-style query over the final scoped state."""

from __future__ import annotations

import pytest

from adk_eval import EvalSetupError, EvalTrace
from adk_eval.metrics import state_query

TRACE = EvalTrace(
    events=[],
    final_state={"session": {"escalation": {"urgencyLevel": "urgent_111"}}, "patient": {"age": 55}},
)


def test_matches():
    metric = state_query(
        "routed", {"session.escalation.urgencyLevel": {"$in": ["emergency_999", "urgent_111"]}}
    )
    result = metric.evaluate(TRACE)
    assert result.passed
    assert "matches" in result.evidence[0]


def test_a_failure_names_the_condition_that_failed_and_the_value_it_saw():
    result = state_query(
        "old", {"patient.age": {"$gte": 65}, "session.escalation.urgencyLevel": "urgent_111"}
    ).evaluate(TRACE)
    assert not result.passed
    assert result.evidence == ['`patient.age` is 55; expected {"$gte": 65}']


def test_a_failure_shows_a_bounded_excerpt_of_a_large_value_and_missing_keys():
    profile = {f"field_{i}": "x" * 30 for i in range(60)}
    trace = EvalTrace(events=[], final_state={"session": {"profile": profile}})
    result = state_query(
        "q", {"session.profile": {"$size": 3}, "session.missing": {"$exists": True}}
    ).evaluate(trace)
    assert not result.passed
    assert len(result.evidence) == 2
    assert result.evidence[0].startswith('`session.profile` is {"field_0": "xxx')
    assert "more characters)" in result.evidence[0]
    assert len(result.evidence[0]) < 300
    assert result.evidence[1] == (
        '`session.missing` is not set (keys of `session`: ["profile"]); expected {"$exists": true}'
    )


def test_a_missing_path_names_what_is_there_where_it_stops():
    trace = EvalTrace(events=[], final_state={"session": {"order": {"id": 1}, "log": [1, 2]}})
    result = state_query(
        "q", {"session.order.status": "paid", "session.log.5": 1, "user.name": "x"}
    ).evaluate(trace)
    assert result.evidence == [
        '`session.order.status` is not set (keys of `session.order`: ["id"]); expected "paid"',
        "`session.log.5` is not set (`session.log` is a list of 2); expected 1",
        '`user.name` is not set (keys of the state: ["session"]); expected "x"',
    ]


def test_invalid_query_is_refused_up_front():
    with pytest.raises(EvalSetupError, match="invalid"):
        state_query("bad", {"x": {"$nope": 1}})
