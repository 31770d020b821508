"""Calls that do not fit their tool: a script fails at that step; a real model's is marked.

Built on the order-support agent (`tests/order_support.py`): a refund that moves
money, a billing sub-agent, a long-running question.
"""

from __future__ import annotations

import logging

import jsonschema
import pytest

from adk_eval import EvalCase, ToolMock, run_eval, run_eval_suite
from adk_eval.metrics import trajectory_match
from adk_eval.reporting import load_report_schema, suite_report
from adk_eval.testing import ScriptedLlm, tool_call
from tests import order_support
from tests.order_support import RAN, build, lookup_order

MOCKS = {
    "lookup_order": ToolMock.returning({"status": "delivered", "total": 40.0}),
    "refund": ToolMock.returning({"refunded": 40.0}),
    "issue_invoice": ToolMock.returning({"invoice": "INV-A1"}),
}
LOOKUP_BEFORE_REFUND = trajectory_match(
    "lookup_before_refund", ["lookup_order", "refund"], mode="in_order", args="ignore"
)


@pytest.fixture(autouse=True)
def _clean():
    RAN.clear()
    yield
    assert RAN == [] or RAN == ["lookup_order"]  # only a test that provides it runs it


def case(model, **kwargs):
    kwargs.setdefault("tool_mocks", MOCKS)
    return EvalCase(
        name="refund", agent=build(model), first_message="Refund order A1, please", **kwargs
    )


async def test_a_scripted_call_with_a_wrong_argument_name_fails_the_run_at_that_step():
    model = ScriptedLlm(
        [
            tool_call("lookup_order", {"id": "A1"}),
            tool_call("refund", {"order_id": "A1", "amount": 40.0}),
            "Refunded.",
        ]
    )
    result = await run_eval(case(model, metrics=[LOOKUP_BEFORE_REFUND]))

    assert result.status == "error", result.explain()
    assert result.error.type == "ScriptedCallError"
    message = result.error.message
    assert "step #1 calls `lookup_order`" in message
    assert "`id` is not a parameter of `lookup_order`: did you mean `order_id`?" in message
    assert "declared: lookup_order(order_id: string)" in message
    assert result.trace.tool_calls == []  # the run stopped before the call was made
    assert "Traceback" not in result.explain()


async def test_a_sub_agents_mistyped_call_stops_the_run_naming_its_step():
    root = ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "billing"})])
    billing = ScriptedLlm([tool_call("issue_invoice", {"order_id": 1}), "Sent."])
    agent = build(root, billing_model=billing)
    result = await run_eval(
        EvalCase(name="invoice", agent=agent, first_message="Fix my invoice", tool_mocks=MOCKS)
    )

    assert result.status == "error"
    assert "step #1 calls `issue_invoice`" in result.error.message
    assert "`order_id` should be string, got 1 (int)" in result.error.message
    assert [call.name for call in result.trace.tool_calls] == ["transfer_to_agent"]


async def test_a_transfer_to_an_agent_that_is_not_a_target_is_caught():
    model = ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "biling"}), "ok"])
    result = await run_eval(case(model))
    assert result.status == "error"
    assert "`agent_name` should be one of" in result.error.message
    assert "'billing'" in result.error.message


async def test_check_calls_false_sends_a_bad_call_as_written_and_adk_answers_it():
    model = ScriptedLlm(
        [tool_call("lookup_order", {"id": "A1"}), "Sorry, which order?"], check_calls=False
    )
    result = await run_eval(case(model))
    assert result.status == "passed", result.explain()


def bad_calls():
    """A real model's mistakes: a wrong name, a made-up tool, an extra argument."""
    return ScriptedLlm(
        [
            tool_call("lookup_order", {"id": "A1"}),
            tool_call("lookup_ordr", {"order_id": "A1"}),
            tool_call("lookup_order", {"order_id": "A1", "verbose": True}),
            "Your order was delivered.",
        ],
        check_calls=False,
    )


async def test_a_call_adk_rejects_is_marked_in_the_trace_explain_and_the_report(caplog):
    caplog.set_level(logging.WARNING, logger="google_adk")
    suite = await run_eval_suite([case(bad_calls())])
    [result] = suite.results

    assert result.status == "passed"
    wrong, unknown, extra = result.trace.tool_calls
    assert result.trace.source_of(wrong) == "rejected"
    assert result.trace.source_of(unknown) == "rejected"
    assert result.trace.source_of(extra) == "mock"
    assert "mandatory input parameters are not present" in wrong.response["error"]
    assert result.argument_problems[wrong.call_id] == (
        "`id` is not a parameter of `lookup_order`: did you mean `order_id`?",
        "`order_id` is required but missing",
    )
    assert "did you mean `lookup_order`?" in result.argument_problems[unknown.call_id][0]
    assert result.argument_problems[extra.call_id] == (
        "`verbose` is not a parameter of `lookup_order`",
    )
    explained = result.explain()
    assert "calls that do not fit their tool's declaration:" in explained
    assert 'support -> lookup_order({"id": "A1"}): rejected by ADK' in explained
    assert "Tool 'lookup_ordr' not found" not in caplog.text  # reported once, in the result

    report = suite_report(suite)
    jsonschema.validate(report, load_report_schema())
    calls = [e for e in report["results"][0]["conversation"] if e["kind"] == "tool_call"]
    assert [call["answered_by"] for call in calls] == ["rejected", "rejected", "mock"]
    assert calls[0]["argument_problems"][0].endswith("did you mean `order_id`?")
    assert type(result).from_data(result.to_data()).argument_problems == result.argument_problems


async def test_a_mocked_function_tool_rejects_exactly_what_adks_own_tool_rejects():
    mocked = await run_eval(case(bad_calls()))
    provided = await run_eval(case(bad_calls(), tool_mocks={**MOCKS, "lookup_order": lookup_order}))

    assert order_support.RAN == ["lookup_order"]  # only the call ADK let through ran
    assert [c.response for c in mocked.trace.tool_calls][:2] == [
        c.response for c in provided.trace.tool_calls
    ][:2]
    sources = [provided.trace.source_of(c) for c in provided.trace.tool_calls]
    assert sources == ["rejected", "rejected", "real"]
    assert [mocked.trace.source_of(c) for c in mocked.trace.tool_calls] == [*sources[:2], "mock"]


async def test_a_count_metric_counts_made_calls_and_says_which_it_left_out():
    from adk_eval.metrics import event_count_metric

    lookups = event_count_metric(
        "one_lookup", "tool_call", lambda c: c.name == "lookup_order", lambda n: n == 1
    )
    asked = event_count_metric(
        "asked_thrice",
        "tool_call",
        lambda c: c.name.startswith("lookup_ord"),
        lambda n: n == 3,
        attempted=True,
    )
    result = await run_eval(case(bad_calls(), metrics=[lookups, asked]))

    assert result.passed, result.explain()
    assert result.metrics["one_lookup"].value == 1
    assert result.metrics["one_lookup"].evidence[1] == (
        "not counted, asked for but never made: 1 rejected by ADK for its arguments"
    )
    assert result.metrics["asked_thrice"].value == 3
