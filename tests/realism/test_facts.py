"""What a user's message tells the agent: its values, no preference, the service it names."""

from __future__ import annotations

import pytest

from adk_eval.realism._facts import (
    domains,
    fact_items,
    is_closing,
    new_goal_marker,
    no_preference,
    reports_done,
)


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("a cheap Italian restaurant in the north", ["cheap", "italian", "north"]),
        ("for two people, tomorrow evening", ["two people", "tomorrow evening"]),
        ("on the 9th of March at 11 am", ["the 9th of march at 11 am"]),  # one date and time
        ("Book a cab to the airport", ["airport"]),
        ("a decaf chai latte with oat milk", ["decaf", "chai latte", "oat milk"]),
        ("send forty four dollars to Maya", ["forty four dollars", "maya"]),
        ("I want 1 latte", ["latte"]),  # "1" before one thing is an article
        ("the address is 115 De Anza Boulevard", ["115 de anza boulevard"]),
        ("Is it ultra high-end?", []),  # a question about the item at hand gives nothing
        ("Hello, I need help with my account", []),
        ("Thank you, bye", []),
    ],
)
def test_fact_items(text: str, items: list[str]) -> None:
    assert fact_items(text) == items


@pytest.mark.parametrize(
    ("text", "none"),
    [
        ("I don't care", True),
        ("any day is fine", True),
        ("Doesn't matter to me", True),
        ("I don't mind which one", True),
        ("Tuesday", False),
        ("I don't know", False),  # not knowing is no preference
    ],
)
def test_no_preference(text: str, none: bool) -> None:
    assert no_preference(text) is none


def test_kinds_of_service_closings_markers_and_tasks_done() -> None:
    assert domains("Can you find me a cab and a hotel?") == {"ride", "hotel"}
    assert domains("What is the address and postcode?") == set()
    assert is_closing("Thank you car! Bye")
    assert not is_closing("Thanks, and I also need a cab")
    assert not is_closing("No, make it 4 people")  # gives a value
    assert new_goal_marker("By the way, is it going to rain?")
    assert new_goal_marker("Yes, I also need a taxi")
    assert not new_goal_marker("Can I also get a muffin?")  # more of the same order
    assert reports_done("Your table is booked.")
    assert not reports_done("A nurse will call you.")
