"""The judge of claimed_actions: a model reads what the rules found no claim in, post hoc."""

from __future__ import annotations

import json

import pytest

from adk_eval import EvalCase, run_eval
from adk_eval.metrics import claimed_actions
from adk_eval.testing import ScriptedLlm, text_event

from .builders import CLAIM, call, refund_order, support, trace


def modify_booking(booking: str, flight: str) -> dict:
    """Moves a booking to another flight."""
    raise AssertionError("mocked")


def judge_matching(tools: list[str], asked: list) -> ScriptedLlm:
    """A judge that matches every action to `tools` and reads no claim in quiet messages."""

    def reply(request):
        asked.append(request)
        if "whose call would perform it" in request.config.system_instruction:
            return json.dumps({"matches": [{"action": 1, "tools": tools}]})
        return json.dumps({"claims": []})

    return ScriptedLlm(responder=reply)


REBOOKED = "I've rebooked you on the 9am flight."


async def test_the_judge_matches_a_claimed_verb_no_tool_performs_by_the_tables_to_the_tools():
    said = trace(*call("modify_booking", {"ok": True}, 1), text_event("support", REBOOKED))
    assert not claimed_actions(tools=[modify_booking]).evaluate(said).passed  # no table match
    asked: list = []
    judge = judge_matching(["modify_booking"], asked)

    result = await claimed_actions(judge=judge, tools=[modify_booking]).evaluate(said)

    assert result.passed, result.evidence
    prompt = asked[0].contents[0].parts[0].text
    assert "- modify_booking: Moves a booking to another flight." in prompt
    assert f"1. rebook: {REBOOKED}" in prompt
    refused = await claimed_actions(judge=judge_matching([], []), tools=[modify_booking]).evaluate(
        said
    )
    assert not refused.passed
    invented = judge_matching(["book_flight"], [])  # a tool the agent does not have backs nothing
    assert not (await claimed_actions(judge=invented, tools=[modify_booking]).evaluate(said)).passed


def judge_saying(*claims: dict, asked: list | None = None) -> ScriptedLlm:
    def reply(request):
        if asked is not None:
            asked.append(request)
        return json.dumps({"claims": list(claims)})

    return ScriptedLlm(responder=reply)


VAGUE = "All taken care of, your money is on its way back."


async def test_the_judge_reads_what_the_rules_found_no_claim_in():
    asked: list = []
    judge = judge_saying(
        {"message": 1, "action": "refund", "tool": "refund_order", "quote": VAGUE}, asked=asked
    )
    said = trace(*call("lookup_order", {"status": "paid"}, 1), text_event("support", VAGUE))

    assert claimed_actions().evaluate(said).passed  # the rules read no claim
    result = await claimed_actions(judge=judge, tools=[refund_order]).evaluate(said)

    assert not result.passed
    assert result.value["event"] == (
        f'`support` claimed "{VAGUE}" (refund), but no call before it performed it; '
        "calls before it: `lookup_order` ok"
    )
    assert result.evidence[-1] == "read by the judge in a message the rules found no claim in"
    prompt = asked[0].contents[0].parts[0].text
    assert "- refund_order: Refunds an order to the card it was paid with." in prompt
    assert "- lookup_order" in prompt
    assert f"1. [support] {VAGUE}" in prompt


async def test_a_judged_claim_a_call_backs_passes_and_the_judge_skips_what_the_rules_read():
    asked: list = []
    judge = judge_saying({"message": 1, "action": "refunded", "quote": VAGUE}, asked=asked)
    said = trace(
        *call("refund_order", {"ok": True}, 1),
        text_event("support", CLAIM),
        text_event("support", VAGUE),
    )
    result = await claimed_actions(judge=judge).evaluate(said)
    assert result.passed, result.evidence
    assert result.value["judged"] == 1
    assert CLAIM not in asked[0].contents[0].parts[0].text  # the rules read it: not judged


async def test_the_judge_is_not_asked_when_the_rules_already_fail():
    asked: list = []
    judge = judge_saying(asked=asked)
    result = await claimed_actions(judge=judge).evaluate(trace(text_event("support", CLAIM)))
    assert not result.passed
    assert asked == []


async def test_a_reply_that_is_no_verdict_is_a_metric_error():
    with pytest.raises(ValueError, match="not a verdict"):
        await claimed_actions(judge=ScriptedLlm(["no idea"])).evaluate(
            trace(text_event("support", VAGUE))
        )


async def test_a_run_with_a_judge_checks_the_rules_live_and_asks_the_judge_at_the_end():
    judge = judge_saying({"message": 1, "action": "refund", "quote": VAGUE})
    case = EvalCase(
        name="judged",
        agent=support([VAGUE]),
        first_message="refund A1",
        invariants=[claimed_actions(judge=judge)],
    )
    result = await run_eval(case)
    assert result.status == "failed"
    verdict = result.metrics["claimed_actions"]
    assert verdict.evidence[-1] == "read by the judge in a message the rules found no claim in"
