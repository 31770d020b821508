"""trajectory_match: four modes, three ways to compare args, explained divergences."""

from __future__ import annotations

import pytest
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.genai import types

from adk_eval import EvalTrace
from adk_eval.metrics import ExpectedCall, trajectory_match
from adk_eval.testing import tool_call_event

from .conftest import invocation


def trace_of(*calls: tuple[str, dict]) -> EvalTrace:
    return EvalTrace(
        events=[
            tool_call_event("agent", name, args, call_id=f"c{i}")
            for i, (name, args) in enumerate(calls)
        ]
    )


ACTUAL = trace_of(
    ("read", {"policy_id": "chest_pain"}),
    ("ask", {"question": "When?"}),
    ("record_answer", {"answer": "30 min"}),
    ("escalate", {"level": "999"}),
)


async def test_exact_passes_on_the_same_calls():
    metric = trajectory_match(
        "t",
        [
            ("read", {"policy_id": "chest_pain"}),
            {"name": "ask", "args": {"question": "When?"}},
            ExpectedCall("record_answer", {"answer": "30 min"}),
            types.FunctionCall(name="escalate", args={"level": "999"}),
        ],
    )
    result = metric.evaluate(ACTUAL)
    assert result.passed
    assert result.score == 1.0


async def test_exact_explains_the_first_divergence_with_deepdiff():
    metric = trajectory_match(
        "t",
        [
            ("read", {"policy_id": "chest_pain"}),
            ("ask", {"question": "Where?"}),
            ("record_answer", {"answer": "30 min"}),
            ("escalate", {"level": "999"}),
        ],
    )
    result = metric.evaluate(ACTUAL)
    assert not result.passed
    assert result.score == 0.25
    assert result.evidence[0].startswith("first divergence at call #2: `ask` args differ:")
    assert "root['question']" in result.evidence[0]
    assert "Where?" in result.evidence[0]
    assert "When?" in result.evidence[0]


async def test_exact_reports_extra_and_missing_calls():
    extra = trajectory_match("t", ["read", "ask", "record_answer"], args="ignore").evaluate(ACTUAL)
    assert extra.evidence[0] == "unexpected extra call #4: escalate({'level': '999'})"
    more = ["read", "ask", "record_answer", "escalate", "handover"]
    missing = trajectory_match("t", more, args="ignore").evaluate(ACTUAL)
    assert missing.evidence[0] == "missing call #5: handover({})"


async def test_in_order_allows_calls_in_between():
    ok = trajectory_match("t", ["read", "escalate"], mode="in_order", args="ignore")
    assert ok.evaluate(ACTUAL).passed
    wrong = trajectory_match("t", ["escalate", "read"], mode="in_order", args="ignore")
    result = wrong.evaluate(ACTUAL)
    assert not result.passed
    assert result.evidence[0] == (
        "expected call #2 read({}) not found in order; `read` was called at #1, "
        "out of the expected order"
    )


async def test_any_order_needs_every_expected_call():
    ok = trajectory_match("t", ["escalate", "read"], mode="any_order", args="ignore")
    assert ok.evaluate(ACTUAL).passed
    missing = trajectory_match("t", ["escalate", "handover"], mode="any_order", args="ignore")
    result = missing.evaluate(ACTUAL)
    assert not result.passed
    assert result.score == 0.5
    assert result.evidence[0] == "expected call handover({}) never made"


async def test_subset_refuses_unexpected_calls():
    allowed = ["read", "ask", "record_answer", "escalate", "handover"]
    assert trajectory_match("t", allowed, mode="subset", args="ignore").evaluate(ACTUAL).passed
    narrow = trajectory_match("t", ["read", "ask"], mode="subset", args="ignore")
    result = narrow.evaluate(ACTUAL)
    assert not result.passed
    assert (
        result.evidence[0]
        == "call #3 record_answer({'answer': '30 min'}) is not among the expected calls"
    )


async def test_custom_args_matcher():
    def same_level(expected, actual):
        return expected.get("level") == actual.get("level")

    metric = trajectory_match(
        "t", [("escalate", {"level": "999", "reason": "x"})], mode="in_order", args=same_level
    )
    assert metric.evaluate(ACTUAL).passed


async def test_expected_from_an_adk_golden_eval_case():
    golden = AdkEvalCase(
        eval_id="golden",
        conversation=[
            invocation(
                "chest pain",
                [("read", {"policy_id": "chest_pain"}), ("ask", {"question": "When?"})],
            ),
            invocation(
                "30 min", [("record_answer", {"answer": "30 min"}), ("escalate", {"level": "999"})]
            ),
        ],
    )
    # one list for the whole conversation: the four calls match
    assert trajectory_match("golden", golden, per_turn=False).evaluate(ACTUAL).passed
    # turn by turn (the default for goldens): ACTUAL holds one turn, the golden two
    result = trajectory_match("golden", golden).evaluate(ACTUAL)
    assert not result.passed
    assert result.score == 0
    assert result.evidence == [
        "turn 1: unexpected extra call #3: record_answer({'answer': '30 min'})",
        "turn 2: the run ended before this turn",
        "exact, turn by turn: 0 of 2 turns match",
    ]


async def test_ignore_tools_leaves_control_calls_out():
    trace = trace_of(("transfer_to_agent", {"agent_name": "b"}), ("read", {}))
    metric = trajectory_match("t", ["read"], args="ignore", ignore_tools=["transfer_to_agent"])
    assert metric.evaluate(trace).passed


def test_bad_mode_or_args():
    with pytest.raises(ValueError, match="mode must be exact, in_order, any_order or subset"):
        trajectory_match("t", [], mode="fuzzy")
    with pytest.raises(ValueError, match="args must be 'exact', 'ignore' or a function"):
        trajectory_match("t", [], args="loose")
    with pytest.raises(TypeError, match="expected calls are"):
        trajectory_match("t", [42])


async def test_an_order_or_count_problem_says_so_instead_of_an_empty_args_diff():
    twice = trajectory_match("t", ["read", "read"], mode="any_order", args="ignore")
    assert twice.evaluate(ACTUAL).evidence[0] == (
        "expected call read({}) never made; `read` was called 1 time(s), expected 2"
    )
    swapped = trajectory_match(
        "t",
        [("ask", {"question": "When?"}), ("read", {"policy_id": "chest_pain"})],
        mode="in_order",
    )
    assert swapped.evaluate(ACTUAL).evidence[0] == (
        "expected call #2 read({'policy_id': 'chest_pain'}) not found in order; "
        "`read` was called at #1, out of the expected order"
    )


async def test_bare_names_that_fail_only_on_their_arguments_hint_at_args_ignore():
    names = ["read", "ask", "record_answer", "escalate"]
    result = trajectory_match("t", names).evaluate(ACTUAL)

    assert not result.passed
    assert result.evidence[1].startswith("hint: the expected calls name tools without arguments")
    assert 'pass args="ignore"' in result.evidence[1]
    assert trajectory_match("t", names, args="ignore").evaluate(ACTUAL).passed
    wrong_order = trajectory_match("t", list(reversed(names))).evaluate(ACTUAL)
    assert not any(line.startswith("hint:") for line in wrong_order.evidence)  # no false hint
