"""trajectory_match against a golden agrees with ADK's own TrajectoryEvaluator, case by case.

Each case is a run (a list of turns, each a list of tool calls) and a golden. ADK's
evaluator scores invocations built from them; trajectory_match scores a trace built
from ADK events with the same calls. With ADK's rule (``threshold``) the score and
the verdict must be ADK's; the default (every turn must match) agrees on the verdict
at threshold 1.0.
"""

from __future__ import annotations

import pytest
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, EvalStatus, ToolTrajectoryCriterion
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

from adk_eval import EvalTrace
from adk_eval.metrics import trajectory_match
from adk_eval.testing import tool_call_event, user_event

from .conftest import invocation

T1 = ("get_weather", {"city": "Paris"})
T2 = ("get_time", {"tz": "CET"})
T3 = ("book", {"what": "table"})
T1_ROME = ("get_weather", {"city": "Rome"})

# (id, mode, actual turns, expected turns)
CASES = [
    ("exact-same", "exact", [[T1, T2]], [[T1, T2]]),
    ("exact-order", "exact", [[T2, T1]], [[T1, T2]]),
    ("exact-extra", "exact", [[T1, T2, T3]], [[T1, T2]]),
    ("exact-missing", "exact", [[T1]], [[T1, T2]]),
    ("exact-args", "exact", [[T1_ROME]], [[T1]]),
    ("exact-empty-both", "exact", [[]], [[]]),
    ("exact-empty-expected", "exact", [[T1]], [[]]),
    ("exact-empty-actual", "exact", [[]], [[T1]]),
    ("exact-two-turns", "exact", [[T1], [T2]], [[T1], [T2]]),
    ("exact-wrong-turn", "exact", [[T1, T2], []], [[T1], [T2]]),
    ("exact-one-of-three", "exact", [[T1], [T3], [T2]], [[T1], [T2], [T2]]),
    ("in-order-same", "in_order", [[T1, T2]], [[T1, T2]]),
    ("in-order-between", "in_order", [[T1, T3, T2]], [[T1, T2]]),
    ("in-order-swapped", "in_order", [[T2, T1]], [[T1, T2]]),
    ("in-order-missing", "in_order", [[T1, T3]], [[T1, T2]]),
    ("in-order-empty-expected", "in_order", [[T1]], [[]]),
    ("in-order-empty-actual", "in_order", [[]], [[T1]]),
    ("in-order-two-turns", "in_order", [[T1, T3], [T2]], [[T1], [T2]]),
    ("in-order-wrong-turn", "in_order", [[T1, T2], []], [[T1], [T2]]),
    ("any-order-swapped", "any_order", [[T2, T1]], [[T1, T2]]),
    ("any-order-extra", "any_order", [[T3, T2, T1]], [[T1, T2]]),
    ("any-order-missing", "any_order", [[T1, T3]], [[T1, T2]]),
    ("any-order-duplicate", "any_order", [[T1]], [[T1, T1]]),
    ("any-order-args", "any_order", [[T1_ROME, T2]], [[T1, T2]]),
    ("any-order-wrong-turns", "any_order", [[T2], [T1]], [[T1], [T2]]),
    ("any-order-empty-expected", "any_order", [[T1]], [[]]),
]

ADK_MODES = {
    "exact": ToolTrajectoryCriterion.MatchType.EXACT,
    "in_order": ToolTrajectoryCriterion.MatchType.IN_ORDER,
    "any_order": ToolTrajectoryCriterion.MatchType.ANY_ORDER,
}


def invocations(turns) -> list[Invocation]:
    """The turns as a golden's invocations, the user saying ``turn <index>`` in each."""
    return [invocation(f"turn {index}", calls) for index, calls in enumerate(turns)]


def golden_of(turns) -> AdkEvalCase:
    """A golden of those turns (what `trace_of` of the same turns would match)."""
    return AdkEvalCase(eval_id="g", conversation=invocations(turns))


def trace_of(turns) -> EvalTrace:
    events = []
    for index, calls in enumerate(turns):
        events.append(user_event(f"turn {index}"))
        events.extend(
            tool_call_event("agent", name, args, call_id=f"c{index}-{n}")
            for n, (name, args) in enumerate(calls)
        )
    return EvalTrace(events=events)


def adk_result(mode, actual, expected, threshold):
    evaluator = TrajectoryEvaluator(
        eval_metric=EvalMetric(
            metric_name="tool_trajectory_avg_score",
            threshold=threshold,
            criterion=ToolTrajectoryCriterion(threshold=threshold, match_type=ADK_MODES[mode]),
        )
    )
    return evaluator.evaluate_invocations(invocations(actual), invocations(expected))


@pytest.mark.parametrize("threshold", [1.0, 0.5])
@pytest.mark.parametrize(
    ("mode", "actual", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_adk_scoring_gives_adks_score_and_verdict(mode, actual, expected, threshold):
    adk = adk_result(mode, actual, expected, threshold)
    golden = golden_of(expected)
    ours = trajectory_match("t", golden, mode=mode, threshold=threshold).evaluate(trace_of(actual))

    assert ours.score == pytest.approx(adk.overall_score)
    assert ours.passed == (adk.overall_eval_status == EvalStatus.PASSED)
    default = trajectory_match("t", golden, mode=mode).evaluate(trace_of(actual))
    assert default.passed == (
        adk_result(mode, actual, expected, 1.0).overall_eval_status == EvalStatus.PASSED
    )


def test_a_call_in_the_wrong_turn_fails_turn_by_turn_but_not_as_one_list():
    golden = golden_of([[T1], [T2]])
    run = trace_of([[T1, T2], []])
    per_turn = trajectory_match("t", golden).evaluate(run)
    assert not per_turn.passed
    assert per_turn.score == 0.0
    assert per_turn.evidence == [
        "turn 1: unexpected extra call #2: get_time({'tz': 'CET'})",
        "turn 2: missing call #1: get_time({'tz': 'CET'})",
        "exact, turn by turn: 0 of 2 turns match",
    ]
    assert trajectory_match("t", golden, per_turn=False).evaluate(run).passed


def test_a_golden_without_invocations_is_not_evaluated_rather_than_passed():
    adk = TrajectoryEvaluator(threshold=1.0).evaluate_invocations([], [])
    assert adk.overall_eval_status == EvalStatus.NOT_EVALUATED
    result = trajectory_match("t", golden_of([])).evaluate(trace_of([[T1]]))
    assert not result.passed  # fails, never passes silently
    assert result.score is None
    assert result.evidence == ["nothing to compare: the golden holds no invocations"]


def test_a_failing_exact_match_never_has_a_perfect_score():
    result = trajectory_match("t", [], mode="exact").evaluate(trace_of([[T1]]))
    assert not result.passed
    assert result.score == 0.0
