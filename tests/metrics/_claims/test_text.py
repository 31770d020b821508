"""The English rules: what reads as a claim in an agent's message, and what does not."""

from __future__ import annotations

import pytest

from adk_eval.metrics import claimed_actions
from adk_eval.metrics._claims._text import find_claims
from adk_eval.metrics._claims._verbs import BUILTIN, forms_of
from adk_eval.testing import text_event

from .builders import trace


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
        "You're all set!",
        "You're all set for Tuesday at 10.",
        "All done here?",
        "Please ensure the new card is already stored on file.",
        "Please make sure the form is submitted before Friday.",
        "- Total charged: $412 (card ending 2231)",
        "- **Created on:** 2024-03-02",
        "- Checked bags: 2 (as previously booked)",
        "Your trip is a round trip to Denver, with seat selection purchased.",
        "With the insurance removed, your new total is $310.",
        "**Payment**: Ensure the cards you want to use are already saved on your account.",
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
        ("Appointment booked for Maya on May 3 at 4:30 PM.", [("book", "booked")]),
        ("Table booked for Tuesday at 10.", [("book", "booked")]),
        ("**Refunded:** $54.20 to Visa ending 4411", [("refund", "refunded")]),
        ("Both tickets have been successfully cancelled:\n1. A\n2. B", [("cancel", "cancelled")]),
        ("I just entered your order.", [("enter", "entered")]),
        ("Please check that I've entered your order correctly.", [("enter", "entered")]),
        ("The payment for the difference has been processed.", [("pay", "processed")]),
    ],
)
def test_what_the_rules_read_as_claims(text, claims):
    found = find_claims(text, forms_of(BUILTIN), ())
    assert [(c.family, c.word) for c in found] == claims


def test_a_light_verb_claims_its_own_noun_and_alone_a_verb_some_tool_has_or_a_synonym():
    text = "A certificate worth $50 has been issued for the delay on your reservation."
    assert find_claims(text, forms_of(BUILTIN), ()) == []  # not `reserve`, from `reservation`
    assert [c.family for c in find_claims(text, forms_of(BUILTIN), ["send"])] == ["issue"]


def test_a_light_verb_alone_claims_only_a_verb_some_tool_has():
    assert find_claims("Confirmed!", forms_of(BUILTIN), ()) == []
    assert [c.family for c in find_claims("Confirmed!", forms_of(BUILTIN), ["confirm"])] == [
        "confirm"
    ]
