"""claimed_actions: an agent's text claims an action no successful tool call before it made.

Post hoc on traces built from ADK events, and in real runs (`run_eval` with `ScriptedLlm`):
live as an invariant, with sub-agents and AgentTools, on a stored session, with a judge.
"""

from __future__ import annotations

import json

import pytest
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from adk_eval import (
    EvalCase,
    EvalSetupError,
    EvalTrace,
    ScriptedUserAgent,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval.metrics import claimed_actions, score_session
from adk_eval.metrics._claim_text import find_claims
from adk_eval.metrics._claim_verbs import BUILTIN, forms_of, tool_families
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    text_event,
    tool_call,
    tool_call_event,
    user_event,
)


def call(name: str, answer: dict, n: int, author: str = "support") -> list:
    return [
        tool_call_event(author, name, {"order": "A1"}, call_id=f"c{n}"),
        function_response_event(author, name, answer, call_id=f"c{n}"),
    ]


def trace(*events, **fields) -> EvalTrace:
    return EvalTrace(events=(user_event("please refund order A1"), *events), **fields)


CLAIM = "I've refunded your order A1."


# -- post hoc, on traces --------------------------------------------------------------


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
        {"result": "Error: nothing"},
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


def said_with(text: str, *calls: tuple[str, str]) -> Event:
    """One model response: `text` and the function calls ``(name, id)`` sent with it."""
    parts = [types.Part(text=text), *(tool_call(name, {}, id=id_) for name, id_ in calls)]
    return Event(author="support", content=types.Content(role="model", parts=parts))


def answered(name: str, answer: dict, id_: str) -> Event:
    return function_response_event("support", name, answer, call_id=id_)


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


@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("send_email", "Your email has been sent."),
        ("book_table", "Booked! See you at 7."),
        ("cancel_booking", "Your booking is now cancelled."),
        ("cancel_booking", "Done — cancelled the booking."),
        ("save_note", "I've saved your note."),
        ("create_event", "I added the meeting to your calendar."),
        ("schedule_meeting", "I've added the meeting to your calendar."),
        ("process_refund", "Your refund has been processed."),
        ("send_email", "I've emailed you the receipt."),
        ("transfer_funds", "We have transferred $20 to your savings."),
    ],
)
def test_the_claim_is_backed_by_a_tool_of_its_verb_or_a_synonym(tool, text):
    backed = trace(*call(tool, {"ok": True}, 1), text_event("support", text))
    assert claimed_actions().evaluate(backed).passed
    assert not claimed_actions().evaluate(trace(text_event("support", text))).passed


@pytest.mark.parametrize(
    "text",
    [
        "Shall I refund your order?",
        "Would you like me to cancel the booking?",
        "Has the email been sent?",
        "I will refund your order once you confirm.",
        "I can cancel it for you.",
        "I'll make sure it's cancelled.",
        "Once you confirm, your booking is cancelled.",
        "If you'd like, I can have it cancelled and refunded.",
        "I couldn't refund your order: the card expired.",
        "I haven't sent the email yet.",
        "The email has not been sent.",
        "Your refund was never processed.",
        "I'm unable to book a table tonight.",
        "I understand you've been charged twice.",
        "You have cancelled this booking before.",
        "I found that your order was cancelled last week.",
        "Your saved cards are listed below.",
        "Let me check your order.",
    ],
)
def test_questions_offers_negations_and_reports_are_not_claims(text):
    result = claimed_actions().evaluate(trace(text_event("support", text)))
    assert result.passed, result.evidence


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("I've refunded your order.", [("refund", "refunded")]),
        ("I have sent the email.", [("send", "sent")]),
        ("Your table has been booked.", [("book", "booked")]),
        ("It is now cancelled.", [("cancel", "cancelled")]),
        ("Done — refunded.", [("refund", "refunded")]),
        ("Email sent.", [("send", "sent")]),
        ("I went ahead and booked a table for 4.", [("book", "booked")]),
        ("Billing has refunded your order.", [("refund", "refunded")]),
        ("Your booking is now confirmed!", [("book", "confirmed")]),
        ("Your card was successfully charged.", [("charge", "charged")]),
        ("I can confirm your order has been cancelled.", [("cancel", "cancelled")]),
        ("I couldn't refund it, so I've cancelled the order.", [("cancel", "cancelled")]),
        (
            "I've cancelled the booking and sent you a confirmation.",
            [("cancel", "cancelled"), ("send", "sent")],
        ),
    ],
)
def test_what_the_rules_read_as_claims(text, claims):
    found = find_claims(text, forms_of(BUILTIN), ())
    assert [(c.family, c.word) for c in found] == claims


def test_a_light_verb_alone_claims_only_a_verb_some_tool_has():
    assert find_claims("Confirmed!", forms_of(BUILTIN), ()) == []
    assert [c.family for c in find_claims("Confirmed!", forms_of(BUILTIN), ["confirm"])] == [
        "confirm"
    ]


@pytest.mark.parametrize(
    ("name", "description", "families"),
    [
        ("refund_order", "", {"refund"}),
        ("sendEmail", "", {"send"}),
        ("cancel_booking", "", {"cancel"}),
        ("create_booking", "", {"create", "book"}),
        ("lookup_order", "Looks up an order.", set()),
        ("get_weather", "", set()),
        ("escalate_ticket", "", {"escalate"}),
        ("zap", "Deletes the account. Irreversible.", {"zap", "delete"}),
        ("issue_credit", "Issues a refund to the customer.", {"issue", "refund"}),
    ],
)
def test_the_verbs_a_tool_performs_come_from_its_name_and_description(name, description, families):
    assert tool_families(name, description) == families


# -- options ----------------------------------------------------------------------------


def test_tools_add_the_verbs_of_their_descriptions():
    claim = trace(*call("zap_account", {"ok": True}, 1), text_event("support", "I deleted it."))
    assert claimed_actions(tools=[zap_account]).evaluate(claim).passed
    assert not claimed_actions().evaluate(claim).passed  # `zap` alone says nothing of deleting


def test_an_agent_as_tools_reads_its_tree_and_its_tools_verbs_are_claims():
    inner = LlmAgent(name="ops", tools=[zap_account])
    agent = LlmAgent(name="support", sub_agents=[inner])
    said = trace(text_event("support", "I've zapped your account."))
    assert claimed_actions().evaluate(said).passed  # `zap`: no verb the rules know
    assert not claimed_actions(tools=agent).evaluate(said).passed


def test_verbs_map_a_verb_to_tools_and_ignore_leaves_tools_out():
    credit = trace(*call("issue_voucher", {"ok": True}, 1), text_event("support", CLAIM))
    assert not claimed_actions().evaluate(credit).passed
    assert claimed_actions(verbs={"refunded": "issue_voucher"}).evaluate(credit).passed
    refund = trace(*call("refund_order", {"ok": True}, 1), text_event("support", CLAIM))
    ignoring = claimed_actions(ignore=["refund_order"]).evaluate(refund)
    assert ignoring.value["event"].endswith("no tool call before it")
    assert claimed_actions(ignore_verbs=["refund"]).evaluate(trace(text_event("s", CLAIM))).passed


def test_bad_options_and_the_metric_declares_it_reads_content():
    with pytest.raises(EvalSetupError, match="is not a verb"):
        claimed_actions(verbs={"sign up": ["register"]})
    with pytest.raises(EvalSetupError, match=r"verbs=\) maps a verb .*, got \['refund'\]$"):
        claimed_actions(verbs=["refund"])  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match=r"write ignore=\['audit_log'\]$"):
        claimed_actions(ignore="audit_log")
    with pytest.raises(EvalSetupError, match=r"write ignore_verbs=\['charge'\]$"):
        claimed_actions(ignore_verbs="charge")
    with pytest.raises(EvalSetupError, match="got the name 'refund_order'; to say which tools"):
        claimed_actions(tools=["refund_order"])
    rule = claimed_actions(name="no_false_claims", on_breach="record")
    assert (rule.name, rule.on_breach, rule.needs) == (
        "no_false_claims",
        "record",
        frozenset({"content"}),
    )


# -- real runs ---------------------------------------------------------------------------


def refund_order(order: str) -> dict:
    """Refunds an order to the card it was paid with."""
    raise AssertionError("mocked")


def send_email(to: str, body: str) -> dict:
    """Sends an email."""
    raise AssertionError("mocked")


def support(steps: list, **fields) -> LlmAgent:
    return LlmAgent(
        name="support", model=ScriptedLlm(steps), tools=[refund_order, send_email], **fields
    )


REFUND = tool_call("refund_order", {"order": "A1"})


async def test_a_run_whose_refund_call_succeeded_passes_and_one_without_it_fails():
    mocks = {"refund_order": ToolMock.returning({"refunded": "A1"})}
    backed = EvalCase(
        name="backed",
        agent=support([REFUND, CLAIM]),
        first_message="refund A1",
        tool_mocks=mocks,
        metrics=[claimed_actions()],
    )
    unbacked = EvalCase(
        name="unbacked",
        agent=support([CLAIM]),
        first_message="refund A1",
        tool_mocks=mocks,
        metrics=[claimed_actions()],
    )

    passed, failed = await run_eval(backed), await run_eval(unbacked)

    assert passed.status == "passed", passed.metrics["claimed_actions"].evidence
    assert failed.status == "failed"
    assert f'claimed "{CLAIM}" (refund)' in failed.metrics["claimed_actions"].value["event"]


async def test_a_tool_that_answers_an_error_is_named_in_the_result():
    case = EvalCase(
        name="declined",
        agent=support([REFUND, CLAIM]),
        first_message="refund A1",
        tool_mocks={"refund_order": ToolMock.returning({"error": "card expired"})},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    assert result.status == "failed"
    verdict = result.metrics["claimed_actions"]
    assert "the call `refund_order` failed: card expired" in verdict.value["event"]
    assert "checked live: the run stopped at this step" in verdict.evidence


@pytest.mark.parametrize(
    ("answer", "status"), [({"status": "error"}, "failed"), ({"status": "cancelled"}, "passed")]
)
async def test_a_run_whose_tool_answers_status_error_fails_the_claim_after_it(answer, status):
    def cancel_appointment(day: str) -> dict:
        """Cancels the user's appointment on a day."""
        raise AssertionError("mocked")

    claim = "Your appointment has been cancelled."
    agent = LlmAgent(
        name="clinic",
        model=ScriptedLlm([tool_call("cancel_appointment", {"day": "Friday"}), claim]),
        tools=[cancel_appointment],
    )
    case = EvalCase(
        name="cancel",
        agent=agent,
        first_message="cancel my Friday appointment",
        tool_mocks={"cancel_appointment": ToolMock.returning(answer)},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    verdict = result.metrics["claimed_actions"]
    assert result.status == status, verdict.evidence
    if status == "failed":
        assert verdict.value["event"] == (
            f'`clinic` claimed "{claim}" (cancel), but the call `cancel_appointment` failed: '
            "status 'error'; calls before it: `cancel_appointment` failed"
        )


async def test_a_tool_that_raises_is_named_in_the_result():
    def as_error(tool, args, tool_context, error):  # the agent answers the model with the error
        return {"error": f"{type(error).__name__}: {error}"}

    case = EvalCase(
        name="raised",
        agent=support([REFUND, CLAIM], on_tool_error_callback=as_error),
        first_message="refund A1",
        tool_mocks={"refund_order": ToolMock.raising(RuntimeError("payment gateway down"))},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    event = result.metrics["claimed_actions"].value["event"]
    assert "the call `refund_order` failed: RuntimeError: payment gateway down" in event


async def test_live_the_run_stops_at_the_breaking_agent_turn():
    sent: list = []
    agent = support(
        [
            "Let me look into it.",
            [CLAIM, tool_call("send_email", {"to": "ann@example.com", "body": "refunded"})],
            "Anything else?",
        ]
    )
    case = EvalCase(
        name="stops",
        agent=agent,
        first_message="refund A1",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="ann", script=["ok", "thanks"])),
        tool_mocks={"send_email": ToolMock(lambda args, ctx: sent.append(args) or {"ok": True})},
        invariants=[claimed_actions()],
    )

    result = await run_eval(case)

    assert result.status == "failed"
    said = [m.text for m in result.trace.messages]
    assert said == ["refund A1", "Let me look into it.", "ok", CLAIM]  # no "thanks", no more
    assert sent == []  # the call in the breaking turn never reached its mock
    assert (
        result.metrics["claimed_actions"].value["event"].startswith(f'`support` claimed "{CLAIM}"')
    )


async def test_live_a_claim_sent_with_its_call_passes_when_the_call_succeeds():
    case = EvalCase(
        name="same-response",
        agent=support([[CLAIM, REFUND], "Anything else?"]),
        first_message="refund A1",
        tool_mocks={"refund_order": ToolMock.returning({"refunded": "A1"})},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    assert result.status == "passed", result.metrics["claimed_actions"].evidence
    assert [m.text for m in result.trace.messages][-1] == "Anything else?"


async def test_live_a_claim_sent_with_a_call_that_fails_stops_the_run_at_its_answer():
    sent: list = []
    case = EvalCase(
        name="same-response-failed",
        agent=support([[CLAIM, REFUND], tool_call("send_email", {"to": "a", "body": "b"}), "Bye"]),
        first_message="refund A1",
        tool_mocks={
            "refund_order": ToolMock.returning({"error": "card expired"}),
            "send_email": ToolMock(lambda args, ctx: sent.append(args) or {"ok": True}),
        },
        invariants=[claimed_actions()],
    )

    result = await run_eval(case)

    assert result.status == "failed"
    verdict = result.metrics["claimed_actions"]
    assert verdict.value["event"] == (
        f'`support` claimed "{CLAIM}" (refund), but the call `refund_order` failed: card expired; '
        "calls before it: `refund_order` failed"
    )
    assert "checked live: the run stopped at this step" in verdict.evidence
    assert sent == []  # the next turn's call never ran
    assert [m.text for m in result.trace.messages] == ["refund A1", CLAIM]


def billing(steps: list) -> LlmAgent:
    return LlmAgent(
        name="billing",
        description="Handles refunds.",
        model=ScriptedLlm(steps),
        tools=[refund_order],
    )


async def test_a_sub_agent_claims_after_a_transfer():
    mocks = {"refund_order": ToolMock.returning({"refunded": "A1"})}
    transfer = tool_call("transfer_to_agent", {"agent_name": "billing"})

    def case(steps: list) -> EvalCase:
        root = LlmAgent(name="front", model=ScriptedLlm([transfer]), sub_agents=[billing(steps)])
        return EvalCase(
            name="transfer",
            agent=root,
            first_message="refund A1",
            tool_mocks=mocks,
            invariants=[claimed_actions()],
        )

    lied, did = await run_eval(case([CLAIM])), await run_eval(case([REFUND, CLAIM]))

    assert lied.status == "failed"
    event = lied.metrics["claimed_actions"].value["event"]
    assert event.startswith(f'`billing` claimed "{CLAIM}" (refund), but no call')
    assert "`transfer_to_agent` ok" in event
    assert did.status == "passed", did.metrics["claimed_actions"].evidence


async def test_the_agent_inside_an_agent_tool_claims():
    mocks = {"refund_order": ToolMock.returning({"refunded": "A1"})}

    def case(steps: list) -> EvalCase:
        front = LlmAgent(
            name="front",
            model=ScriptedLlm([tool_call("billing", {"request": "refund A1"}), "All done."]),
            tools=[AgentTool(billing(steps))],
        )
        return EvalCase(
            name="agent-tool",
            agent=front,
            first_message="refund A1",
            tool_mocks=mocks,
            invariants=[claimed_actions()],
        )

    lied, did = await run_eval(case([CLAIM])), await run_eval(case([REFUND, CLAIM]))

    assert lied.status == "failed"
    assert lied.metrics["claimed_actions"].value["event"].startswith(f'`billing` claimed "{CLAIM}"')
    assert did.status == "passed", did.metrics["claimed_actions"].evidence


async def test_the_same_rule_scores_a_stored_adk_session():
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(agent=support([CLAIM]), app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="refund A1")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    stored = await runner.session_service.get_session(
        app_name="shop", user_id="u", session_id=session.id
    )

    scored = await score_session(stored, [claimed_actions()])

    assert not scored["claimed_actions"].passed
    assert "no tool call before it" in scored["claimed_actions"].value["event"]


# -- the judge ----------------------------------------------------------------------------


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


def zap_account(user: str) -> dict:
    """Deletes the user's account and all their data."""
    raise AssertionError("mocked")


async def test_in_a_case_the_rule_reads_the_descriptions_of_the_agents_tools():
    steps = [tool_call("zap_account", {"user": "ann"}), "I've deleted your account."]
    agent = LlmAgent(name="support", model=ScriptedLlm(steps), tools=[zap_account])
    rule = claimed_actions()  # no tools=: the run gives it the agent under test
    case = EvalCase(
        name="zapped",
        agent=agent,
        first_message="delete my account",
        tool_mocks={"zap_account": ToolMock.returning({"deleted": True})},
        invariants=[rule],
    )

    result = await run_eval(case)

    assert result.status == "passed", result.metrics["claimed_actions"].evidence
    # the name alone says nothing of deleting: scored by hand without tools=, the claim is unbacked
    assert not rule.evaluate(result.trace).passed
    assert rule.for_agent(agent).evaluate(result.trace).passed
    assert claimed_actions(tools=agent).for_agent(LlmAgent(name="x")).vocabulary.described


def test_an_agent_tool_performs_nothing_itself_its_agents_tools_do():
    inner = billing(["Done."])  # "Handles refunds."
    front = LlmAgent(name="front", model=ScriptedLlm(["hi"]), tools=[AgentTool(inner)])

    described = claimed_actions(tools=front).vocabulary.described

    assert "billing" not in described  # the call of the AgentTool refunds nothing
    assert "refund_order" in described
