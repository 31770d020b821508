"""The verbs: synonyms back each other, tools perform the verbs of their names and descriptions."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval import EvalCase, ToolMock, run_eval
from adk_eval.metrics import claimed_actions
from adk_eval.metrics._claims._verbs import tool_families
from adk_eval.testing import ScriptedLlm, text_event, tool_call

from .builders import CLAIM, billing, call, trace, zap_account


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
        ("browser_goto", "Navigates the browser to a URL.", {"goto", "navigate"}),
        ("take_screenshot", "", {"screenshot"}),
        (
            "finish_order",
            "Finishes the order and sends it to the bar.",
            {"finish", "order", "send"},
        ),
        ("add_order_item", "Adds an item to the customer's order.", {"add"}),
        ("update_reservation_flights", "", {"update"}),
        ("fetch_profile", "Returns the user's profile.", set()),
    ],
)
def test_the_verbs_a_tool_performs_come_from_its_name_and_description(name, description, families):
    assert tool_families(name, description) == families


def browser_goto(url: str) -> dict:
    """Navigates the browser to a URL."""
    raise AssertionError("mocked")


def test_a_verb_of_the_description_lemmatised_backs_its_claim():
    said = text_event("support", "I navigated to the pricing page.")
    backed = trace(*call("browser_goto", {"ok": True}, 1), said)
    assert claimed_actions(tools=[browser_goto]).evaluate(backed).passed
    unbacked = trace(*call("get_page", {"ok": True}, 1), said)
    assert not claimed_actions(tools=[browser_goto]).evaluate(unbacked).passed


def update_booking_bags(booking: str, bags: int) -> dict:
    """Updates the checked bags of a booking."""
    raise AssertionError("mocked")


def update_booking_flights(booking: str, flights: list) -> dict:
    """Updates the flights of a booking."""
    raise AssertionError("mocked")


def test_of_the_tools_that_perform_a_verb_the_one_naming_the_claims_object_backs_it():
    said = text_event("support", "Your flight now leaves at 9am, and two bags have been added.")
    tools = [update_booking_bags, update_booking_flights]
    flights_only = trace(*call("update_booking_flights", {"ok": True}, 1), said)
    both = trace(*flights_only.events[1:-1], *call("update_booking_bags", {"ok": True}, 2), said)
    assert claimed_actions(tools=tools).evaluate(both).passed
    assert not claimed_actions(tools=tools).evaluate(flights_only).passed
    assert claimed_actions().evaluate(flights_only).passed  # no tool known names the bags


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
