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


def test_does_not_match_and_shows_the_state():
    result = state_query("old", {"patient.age": {"$gte": 65}}).evaluate(TRACE)
    assert not result.passed
    assert "does not match" in result.evidence[0]
    assert '"age": 55' in result.evidence[0]


def test_invalid_query_is_refused_up_front():
    with pytest.raises(EvalSetupError, match="invalid"):
        state_query("bad", {"x": {"$nope": 1}})
