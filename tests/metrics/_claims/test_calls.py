"""What backs a claim: a call before it (or with it) that did not fail; what a failed call is."""

from __future__ import annotations

import pytest

from adk_eval.metrics import claimed_actions
from adk_eval.testing import text_event

from .builders import CLAIM, answered, call, said_with, trace


def test_a_claimed_refund_with_no_refund_call_fails_quoting_the_claim():
    result = claimed_actions().evaluate(
        trace(*call("lookup_order", {"status": "paid"}, 1), text_event("support", CLAIM))
    )

    assert not result.passed
    event = result.value["event"]
    assert event == (
        f'`support` claimed "{CLAIM}" (refund), but no call before it performed it; '
        "calls before it: `lookup_order` ok"
    )
    assert result.evidence == [f"broken: {event}"]


def test_the_same_conversation_with_a_successful_refund_call_passes():
    result = claimed_actions().evaluate(
        trace(*call("refund_order", {"refunded": "A1"}, 1), text_event("support", CLAIM))
    )
    assert result.passed, result.evidence
    assert result.value == {"breached": False, "event": None}


def test_a_failed_call_is_named_with_its_error():
    failed = trace(
        *call("refund_order", {"error": "card expired"}, 1), text_event("support", CLAIM)
    )
    result = claimed_actions().evaluate(failed)
    assert "but the call `refund_order` failed: card expired" in result.value["event"]
    assert "calls before it: `refund_order` failed" in result.value["event"]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"status": "error", "error_message": "no such order"}, "status 'error': no such order"),
        ({"status": " FAILURE "}, "status 'FAILURE'"),
        ({"status": "failed", "message": "declined"}, "status 'failed': declined"),
        ({"success": False, "reason": "card expired"}, "success false: card expired"),
        ({"ok": False}, "ok false"),
        ({"status_code": 502}, "status_code 502"),
        ({"status": 404, "detail": "gone"}, "status 404: gone"),
        ({"error": {"code": 7}}, "{'code': 7}"),
        (
            {"content": [{"type": "text", "text": "no such order"}], "isError": True},
            "isError: no such order",
        ),
        ({"result": "Error: payment method not found"}, "Error: payment method not found"),
    ],
)
def test_an_answers_own_failure_markers_fail_its_call(answer, why):
    result = claimed_actions().evaluate(
        trace(*call("refund_order", answer, 1), text_event("support", CLAIM))
    )
    assert f"but the call `refund_order` failed: {why};" in result.value["event"]


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "cancelled"},
        {"status": "refunded", "error": None, "errors": [], "failed": []},
        {"status": "errored_items_skipped"},
        {"success": "false"},
        {"ok": 0},
        {"status": 200, "success": True},
        {"items": [{"status": "error"}], "refunded": ["A1"]},
        {"result": "No error: refunded"},
        {"isError": False, "content": [{"type": "text", "text": "refunded"}]},
    ],
)
def test_what_is_not_a_failure_marker(answer):
    result = claimed_actions().evaluate(
        trace(*call("refund_order", answer, 1), text_event("support", CLAIM))
    )
    assert result.passed, result.evidence


def test_a_call_after_the_claim_does_not_back_it():
    late = trace(text_event("support", CLAIM), *call("refund_order", {"ok": True}, 1))
    assert not claimed_actions().evaluate(late).passed
    no_calls = claimed_actions().evaluate(trace(text_event("support", "Booked!")))
    assert no_calls.value["event"].endswith("no tool call before it")


def test_a_claim_sent_with_its_call_waits_for_the_answer():
    ok = trace(said_with(CLAIM, ("refund_order", "r1")), answered("refund_order", {}, "r1"))
    assert claimed_actions().evaluate(ok).passed
    failed = trace(
        said_with(CLAIM, ("refund_order", "r1")), answered("refund_order", {"error": "no"}, "r1")
    )
    assert "the call `refund_order` failed: no" in claimed_actions().evaluate(failed).value["event"]


def test_a_claim_waits_for_every_call_of_its_response_that_performs_it():
    first_failed = trace(
        said_with("I've refunded both orders.", ("refund_order", "r1"), ("refund_order", "r2")),
        answered("refund_order", {"error": "no"}, "r1"),
        answered("refund_order", {"ok": True}, "r2"),
    )
    assert claimed_actions().evaluate(first_failed).passed  # one refund went through


def test_a_claim_whose_own_call_never_ran_is_decided_at_the_end():
    refused = trace(
        said_with(CLAIM, ("refund_order", "r1")),
        answered("refund_order", {"error": "refused"}, "r1"),
        tool_sources={"r1": "refused"},
    )
    result = claimed_actions().evaluate(refused)
    assert result.value["event"].endswith("no call before it performed it; no tool call before it")


def test_a_call_of_another_verb_in_the_response_or_a_later_message_backs_nothing():
    other = trace(said_with(CLAIM, ("send_email", "e1")), answered("send_email", {}, "e1"))
    assert claimed_actions().evaluate(other).value["event"].endswith("no tool call before it")
    separate = trace(  # its own message, then the call: the message came first
        text_event("support", CLAIM),
        *call("refund_order", {"ok": True}, 1),
        text_event("support", "It is now refunded."),
    )
    result = claimed_actions().evaluate(separate)
    assert result.value["event"].endswith("no tool call before it")


def test_a_call_that_never_reached_its_tool_backs_nothing_and_is_listed():
    refused = trace(
        *call("refund_order", {"error": "adk_eval stopped the run: ..."}, 1),
        text_event("support", CLAIM),
        tool_sources={"c1": "refused"},
    )
    result = claimed_actions().evaluate(refused)
    assert "no call before it performed it" in result.value["event"]
    assert result.evidence[-1] == "calls that never reached their tool: `refund_order` (refused)"
