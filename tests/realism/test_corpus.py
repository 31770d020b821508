"""The behaviour features over a corpus of labelled dialogues: what a careful reader says.

Short task dialogues written for this corpus (a booking desk, a café, a bank, a music
player, a cab), each labelled by hand with what a person reads in it: the agent's
questions (a question, an offer, a confirmation to check), how each was answered, the
facts volunteered (constraints in words count: "cheap", "for two"), the topic changes (a
new goal, not a new detail of the same goal) and the corrections. ``limit`` marks a known
miss of the rules (a strict xfail). `test_the_corpus_agrees` holds the agreement per
feature at the figures reached: every dialogue but the known misses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from google.adk.events import Event

from adk_eval.realism import UserBehaviour, features
from adk_eval.testing import text_event, user_event


@dataclass(frozen=True)
class Dialogue:
    """One labelled dialogue: turns alternate user, agent, user, ... from the user."""

    label: str
    turns: tuple[str, ...]
    agent_questions: int
    answers: tuple[str, ...]
    volunteered: int
    topic_changes: int = 0
    corrections: int = 0
    questions_asked: int = 0
    limit: dict[str, str] = field(default_factory=dict)  # feature -> why the rules miss

    def events(self) -> list[Event]:
        return [
            user_event(text) if index % 2 == 0 else text_event("desk", text)
            for index, text in enumerate(self.turns)
        ]


CORPUS: tuple[Dialogue, ...] = (
    Dialogue(
        "an information request put as a request for an action",
        (
            "What's the weather in Leeds tomorrow?",
            "Sunny, 18 degrees.",
            "Could you check the wind too?",
            "Light wind from the west.",
        ),
        agent_questions=0,
        answers=(),
        volunteered=2,
        questions_asked=2,
        limit={"questions_asked": "'Could you check ...' reads as a request for an action"},
    ),
    Dialogue(
        "a description without a value, and a new goal outside the list of services",
        (
            "My parcel never came",
            "I see it was sent on Monday.",
            "It arrived today but the box was soaked and the lamp inside is broken",
            "I'm sorry. I can send a new lamp.",
            "Thanks. Can you renew my library card as well?",
            "Done.",
        ),
        agent_questions=0,
        answers=(),
        volunteered=2,
        topic_changes=1,
        limit={
            "volunteered": "the damage is a fact without a listed value (today is counted)",
            "topic_changes": "a library card is no service in the list and 'as well' no marker",
        },
    ),
    Dialogue(
        "no preference answers a question",
        (
            "I need a table for tonight",
            "Which part of town would you like?",
            "I don't care, anywhere is fine",
            "Any price range in mind?",
            "Doesn't matter.",
            "I booked you at Rosa's for 8 pm.",
        ),
        agent_questions=2,
        answers=("direct", "direct"),
        volunteered=1,
    ),
    Dialogue(
        "a request answers 'anything else?'",
        (
            "Can you book me a haircut on Friday?",
            "Done, Friday at 10 am with Sam. Anything else?",
            "Yes, I also need a cab to get there",
            "Where will you be picked up?",
            "From 14 Hill Road",
            "Your cab is booked.",
        ),
        agent_questions=2,
        answers=("direct", "direct"),
        volunteered=1,
        topic_changes=1,
    ),
    Dialogue(
        "follow-up questions about the same item are no topic change",
        (
            "I'm looking for a cheap Italian restaurant in the north",
            "Da Mario is a cheap Italian place in the north.",
            "What is the address and postcode?",
            "It is 12 Mill Lane, CB4 1AB.",
            "Do they take reservations?",
            "Yes, they do.",
            "Great, thanks, bye",
            "Goodbye!",
        ),
        agent_questions=0,
        answers=(),
        volunteered=3,
        questions_asked=2,
    ),
    Dialogue(
        "constraints in words are volunteered facts",
        (
            "Find me a hotel",
            "Sure, where?",
            "In the city centre, somewhere cheap, for two people, tomorrow evening",
            "The Park Inn has a double room for tomorrow.",
            "Book it please",
            "Booked.",
        ),
        agent_questions=1,
        answers=("direct",),
        volunteered=3,
    ),
    Dialogue(
        "a question back that questions the question dodges it",
        (
            "I want to open a savings account",
            "What is your date of birth?",
            "Why do you need that?",
            "It is required by law. What is your date of birth?",
            "12 May 1984",
            "Thank you, the account is open.",
        ),
        agent_questions=2,
        answers=("evasive", "direct"),
        volunteered=0,
        questions_asked=1,
    ),
    Dialogue(
        "a relevant question back answers an offer",
        (
            "Play something by Nina Simone",
            "How about Feeling Good from the album I Put a Spell on You?",
            "What year is it from?",
            "It came out in 1965.",
            "OK play it in the kitchen",
            "Playing Feeling Good in the kitchen.",
        ),
        agent_questions=1,
        answers=("direct",),
        volunteered=2,
        questions_asked=1,
    ),
    Dialogue(
        "a confirmation to check is a question",
        (
            "A large oat latte and a decaf flat white please",
            "Please confirm the order on the screen is correct.",
            "Yes that's right",
            "Your drinks will be ready at the bar.",
        ),
        agent_questions=1,
        answers=("direct",),
        volunteered=5,
    ),
    Dialogue(
        "a correction of a confirmed detail",
        (
            "Book a cab to the airport for 3 people",
            "Please confirm: a cab to the airport for 3 people.",
            "No, make it 4 people",
            "Please confirm: a cab to the airport for 4 people.",
            "Yes",
            "Your cab is on its way.",
        ),
        agent_questions=2,
        answers=("direct", "direct"),
        volunteered=3,
        corrections=1,
    ),
    Dialogue(
        "two goals and a switch back",
        (
            "I need to rent a car in Denver",
            "From which date?",
            "From the 3rd of June",
            "I found a compact car at Union Station. Shall I book it?",
            "Not yet. Are there any concerts in Denver that weekend?",
            "The Lumineers play at Red Rocks on the 4th.",
            "Nice. OK now book the car you found",
            "The car is booked.",
        ),
        agent_questions=2,
        answers=("direct", "direct"),
        volunteered=2,
        topic_changes=2,
        questions_asked=1,
    ),
    Dialogue(
        "goodbyes and thanks volunteer nothing",
        (
            "Transfer 50 dollars to Maya from my checking account",
            "You would like to send $50 to Maya from checking, is that correct?",
            "Yes, thank you!",
            "Done. Anything else?",
            "No, that's all, thanks. Bye!",
            "Goodbye.",
        ),
        agent_questions=2,
        answers=("direct", "direct"),
        volunteered=3,
    ),
    Dialogue(
        "not knowing dodges the question",
        (
            "I'd like to change my flight",
            "What is your booking reference?",
            "I'm not sure, I don't have it with me",
            "Can you give me your surname instead?",
            "Okafor",
            "Found it. Which date would you like instead?",
            "Any day next week works",
            "I moved you to Tuesday.",
        ),
        agent_questions=3,
        answers=("evasive", "direct", "direct"),
        volunteered=0,
    ),
    Dialogue(
        "a promise to confirm later and a farewell ask nothing",
        (
            "I'd like a flu jab next week",
            "Which day next week?",
            "Wednesday",
            "Thanks. A nurse will confirm your slot by text. Do enjoy the rest of your day!",
            "Great, thank you",
        ),
        agent_questions=1,
        answers=("direct",),
        volunteered=1,
    ),
    Dialogue(
        "an unrelated subject dodges the question",
        (
            "I want to book a dentist appointment",
            "Which day suits you?",
            "By the way, is it going to rain?",
            "Sunny, 24 degrees. Which day suits you for the dentist?",
            "Thursday morning",
            "Booked for Thursday at 9 am.",
        ),
        agent_questions=2,
        answers=("evasive", "direct"),
        volunteered=0,
        topic_changes=1,
        questions_asked=1,
    ),
)


def _values(found: UserBehaviour) -> dict[str, object]:
    answers = (
        ["direct"] * found.answers_direct
        + ["evasive"] * found.answers_evasive
        + ["refusing"] * found.answers_refusing
        + ["none"] * found.answers_none
    )
    return {
        "agent_questions": found.agent_questions,
        "answers": sorted(answers),
        "volunteered": found.volunteered,
        "topic_changes": found.topic_changes,
        "corrections": found.corrections,
        "questions_asked": found.questions_asked,
    }


def _expected(dialogue: Dialogue) -> dict[str, object]:
    return {
        "agent_questions": dialogue.agent_questions,
        "answers": sorted(dialogue.answers),
        "volunteered": dialogue.volunteered,
        "topic_changes": dialogue.topic_changes,
        "corrections": dialogue.corrections,
        "questions_asked": dialogue.questions_asked,
    }


FEATURES = (
    "agent_questions",
    "answers",
    "volunteered",
    "topic_changes",
    "corrections",
    "questions_asked",
)

CASES = [
    pytest.param(
        dialogue,
        name,
        id=f"{name}: {dialogue.label}",
        marks=[pytest.mark.xfail(strict=True, reason=dialogue.limit[name])]
        if name in dialogue.limit
        else [],
    )
    for dialogue in CORPUS
    for name in FEATURES
]


@pytest.mark.parametrize(("dialogue", "name"), CASES)
def test_each_feature_reads_as_a_person_does(dialogue: Dialogue, name: str) -> None:
    assert _values(features(dialogue.events()))[name] == _expected(dialogue)[name]


def test_the_corpus_agrees() -> None:
    agreed = {name: 0 for name in FEATURES}
    for dialogue in CORPUS:
        found, expected = _values(features(dialogue.events())), _expected(dialogue)
        for name in FEATURES:
            agreed[name] += found[name] == expected[name]
    misses = {name: sum(name in d.limit for d in CORPUS) for name in FEATURES}
    assert agreed == {name: len(CORPUS) - misses[name] for name in FEATURES}
