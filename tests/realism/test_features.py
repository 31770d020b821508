from __future__ import annotations

import dataclasses

import pytest
from google.adk.events import Event
from google.genai import types

from adk_eval.realism._features import FEATURE_KINDS, UserBehaviour, features
from adk_eval.testing import function_response_event, text_event, tool_call_event, user_event

AGENT = "helper"


def agent(text: str) -> Event:
    return text_event(AGENT, text)


def test_empty_conversation() -> None:
    assert features([]) == UserBehaviour()
    found = features([])
    assert found.words_per_message == 0.0
    assert found.answered_directly_rate is None
    assert found.abandoned is False
    assert found.outcome is None


def test_feature_kinds_name_every_field() -> None:
    names = {field.name for field in dataclasses.fields(UserBehaviour)}
    assert set(FEATURE_KINDS) == names
    assert set(FEATURE_KINDS.values()) <= {"count", "rate", "mean", "flag"}
    assert FEATURE_KINDS["answered_directly_rate"] == "rate"
    assert FEATURE_KINDS["words_per_message"] == "mean"
    assert FEATURE_KINDS["abandoned"] == "flag"
    assert list(features([]).values()) == list(FEATURE_KINDS)


def test_turns_and_words() -> None:
    found = features(
        [user_event("I need a new card"), agent("Sure thing."), user_event("Thanks a lot")]
    )
    assert found.turns == 2
    assert found.words_total == 8
    assert found.words_per_message == 4.0


def test_tool_events_are_not_user_messages() -> None:
    events = [
        user_event("Where is my order 1234?"),
        tool_call_event(AGENT, "lookup", {"order": "1234"}),
        # a function response is role "user" content; here even authored "user"
        function_response_event("user", "lookup", {"status": "shipped"}),
        function_response_event(AGENT, "lookup", {"status": "shipped"}),
        agent("It shipped yesterday."),
    ]
    found = features(events)
    assert found.turns == 1
    assert found.words_total == 5
    assert found.abandoned is False


def test_a_question_asked_through_a_long_running_tool_and_its_answer_are_messages() -> None:
    events = [
        user_event("I'd like a blood pressure check"),
        tool_call_event(
            AGENT, "ask", {"question": "Which days suit you?"}, call_id="q1", long_running=True
        ),
        function_response_event("user", "ask", {"result": "I'd rather not say"}, call_id="q1"),
        tool_call_event(
            AGENT, "ask", {"question": "What time works?"}, call_id="q2", long_running=True
        ),
        function_response_event("user", "ask", {"result": "Mornings, around 9"}, call_id="q2"),
        agent("Booked for a morning."),
    ]
    found = features(events)
    assert found.turns == 3
    assert found.agent_questions == 2
    assert (found.answers_refusing, found.answers_direct) == (1, 1)
    assert found.answered_directly_rate == 0.5


def test_only_the_users_answer_to_a_long_running_call_is_the_users() -> None:
    events = [
        user_event("Hello"),
        # an ordinary call's arguments say nothing to the user
        tool_call_event(AGENT, "lookup", {"question": "Which plan?"}, call_id="c1"),
        function_response_event("user", "lookup", {"result": "premium"}, call_id="c1"),
        # a long-running call the agent side answers itself (a job finishing) is no user's
        tool_call_event(
            AGENT, "ask", {"question": "Which days suit you?"}, call_id="q1", long_running=True
        ),
        function_response_event(AGENT, "ask", {"result": "Tuesdays"}, call_id="q1"),
    ]
    found = features(events)
    assert found.turns == 1
    assert found.agent_questions == 1
    assert found.answers_none == 1


def test_agent_texts_around_a_tool_call_are_one_message() -> None:
    events = [
        user_event("Hello"),
        agent("Let me check."),
        tool_call_event(AGENT, "lookup"),
        function_response_event(AGENT, "lookup", {"ok": True}),
        agent("Which colour would you like?"),
        user_event("Blue please"),
    ]
    found = features(events)
    assert found.agent_questions == 1
    assert found.answers_direct == 1
    assert found.answers_none == 0


def test_thoughts_and_partial_chunks_are_skipped() -> None:
    thought = Event(
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="hmm why", thought=True)]),
    )
    partial = user_event("half a")
    partial.partial = True
    assert features([thought, partial, user_event("hi there")]).turns == 1


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Where is my parcel?", True),
        ("what time do you open", True),
        ("Could you help me?", False),  # a request for an action, put as a question
        ("Can I get a flat white?", False),
        ("Can you tell me the fee?", True),
        ("I'd like to know when it opens.", True),
        ("Is it open on Sunday", True),
        ("I need to change my address.", False),
        ("My flight is at 9. Can I still check in", True),
        ("Thanks!", False),
    ],
)
def test_questions_asked(text: str, asks: bool) -> None:
    assert features([user_event(text)]).questions_asked == int(asks)


def answer_of(question: str, reply: str | None) -> str:
    events = [user_event("Hello"), agent(question)]
    if reply is not None:
        events.append(user_event(reply))
    found = features(events)
    assert found.agent_questions == 1
    counts = {
        "direct": found.answers_direct,
        "evasive": found.answers_evasive,
        "refusing": found.answers_refusing,
        "none": found.answers_none,
    }
    assert sum(counts.values()) == 1
    return next(kind for kind, count in counts.items() if count)


@pytest.mark.parametrize(
    ("question", "reply", "kind"),
    [
        # direct: shared content words, yes/no, a number or date, or anything substantive
        ("What is your order number?", "The order number is on the receipt", "direct"),
        ("Do you want express delivery?", "Yes", "direct"),
        ("Do you want express delivery?", "Actually, yes", "direct"),
        ("Do you want express delivery?", "nope, standard is fine", "direct"),
        ("Do you want express delivery?", "Yes, why?", "direct"),
        ("Do you want express delivery?", "Yes, whatever is fastest", "direct"),
        ("Could you tell me your name?", "Why?", "evasive"),  # not a yes/no question
        ("How many tickets do you need?", "4", "direct"),
        ("When did it break?", "Last Tuesday", "direct"),
        ("Which city are you in?", "Paris", "direct"),
        (
            "Is there anything else I can help you with?",
            "Could you help me with a refund?",
            "direct",
        ),
        ("Anything else?", "Could you also cancel the newsletter?", "direct"),
        ("What size?", "Which sizes do you have?", "direct"),  # a clarifying question
        # evasive: a dodge phrase, a question back, a change of subject
        ("What is your date of birth?", "Not sure", "evasive"),
        ("Is it urgent?", "not sure, does that matter?", "evasive"),  # "sure" is no yes here
        # no preference is an answer: "whatever you think", "doesn't matter", "any is fine"
        ("Which plan do you prefer?", "whatever you think", "direct"),
        ("Which plan do you prefer?", "It doesn't matter to me", "direct"),
        ("Which day suits you?", "Any day is fine", "direct"),
        ("What is your name?", "Why do you want that?", "evasive"),
        ("What is your postcode?", "Anyway, can I change my flight", "evasive"),
        ("What is your order number?", "I don't know my order number", "evasive"),
        # refusing
        ("What is your date of birth?", "I'd rather not say", "refusing"),
        ("What is your phone number?", "No, I won't say", "refusing"),
        ("What is your income?", "None of your business!", "refusing"),
        ("What is your income?", "I prefer not to share that", "refusing"),
        # the conversation ended first
        ("Can I help with anything else?", None, "none"),
    ],
)
def test_answers_to_agent_questions(question: str, reply: str | None, kind: str) -> None:
    assert answer_of(question, reply) == kind


def test_answered_directly_rate() -> None:
    events = [
        user_event("I want to book a table"),
        agent("For how many people?"),
        user_event("Two"),  # substantive: direct
        agent("What time?"),
        user_event("not sure"),
        agent("Any allergies?"),
        user_event("I'd rather not say"),
        agent("Shall I confirm the booking?"),
    ]
    found = features(events)
    assert found.agent_questions == 4
    assert (found.answers_direct, found.answers_evasive) == (1, 1)
    assert (found.answers_refusing, found.answers_none) == (1, 1)
    assert found.answered_directly_rate == 0.25


def test_no_agent_question_means_no_rate() -> None:
    found = features([user_event("Where is my parcel?"), agent("Of course. Here it is.")])
    assert found.questions_asked == 1  # the user's question ...
    assert found.answers_evasive == 0  # ... never an evasion: nothing was asked
    assert found.answered_directly_rate is None


@pytest.mark.parametrize(
    ("question", "reply", "corrects"),
    [
        ("What is your name?", "Sam. Sorry, I meant Samuel", True),
        ("Where to?", "Actually, make it Rome", True),
        ("Is your order 123?", "No, it's 456", True),  # both a direct answer and a correction
        ("Which day?", "not Monday but Tuesday", True),
        ("Which day?", "I said Tuesday", True),
        ("Do you want the blue one?", "That's wrong, I asked for red", True),
        # "Actually, yes" confirming a yes/no question is an answer, not a correction
        ("Do you want express delivery?", "Actually, yes", False),
        ("Do you want express delivery?", "Actually no", False),
        ("Which colour?", "Blue", False),
        ("Which colour?", "not only blue but also red", False),
        ("Which colour?", "I actually have no preference here", False),
    ],
)
def test_corrections(question: str, reply: str, corrects: bool) -> None:
    found = features([user_event("Hi"), agent(question), user_event(reply)])
    assert found.corrections == int(corrects)


def test_actually_without_a_yes_no_question_corrects() -> None:
    found = features([user_event("Hi"), agent("Booked for two."), user_event("Actually, yes")])
    assert found.corrections == 1


def test_volunteered_in_the_first_message() -> None:
    first = "Hi, I want to fly to New York on Monday with Anna, email anna@example.com"
    # New York, Monday, Anna, the e-mail: four items; the greeting and request are none
    assert features([user_event(first)]).volunteered == 4
    assert features([user_event("Hello, I need help with my account")]).volunteered == 0
    assert features([user_event("I'm stuck. I can't log in")]).volunteered == 0


def test_volunteered_later_only_when_not_asked() -> None:
    events = [
        user_event("Hello"),
        agent("What is your order number?"),
        user_event("It is 55512"),  # asked for: not volunteered
        agent("Thanks, I found it."),
        user_event("It was delivered to Berlin on 3/4/2025"),  # Berlin and the date: 2
        agent("I see."),
        # a description with no value: none (the rules count values)
        user_event("the parcel arrived badly damaged and the cardboard box was soaked by rain"),
        agent("Sorry to hear that."),
        user_event("ok thanks"),  # nothing in it
    ]
    assert features(events).volunteered == 2


def test_volunteered_after_an_unanswered_turn_of_the_user() -> None:
    events = [user_event("Hello"), user_event("My order is 9981")]
    assert features(events).volunteered == 1


def test_topic_changes() -> None:
    events = [
        user_event("My printer does not print"),
        agent("Is the printer switched on?"),
        user_event("Yes"),  # second user message: never a topic change
        agent("Does the printer show an error light?"),
        user_event("Also my laptop battery drains quickly"),  # new topic
        agent("Let us look at the battery settings."),
        user_event("The battery drains overnight"),  # shares "battery"
        agent("Do you use sleep mode?"),
        user_event("No, never"),  # a yes/no answer
        agent("How old is the laptop?"),
        user_event("Bought 2019 summer"),  # a number answer: not a new topic
        agent("What is your date of birth?"),
        user_event("I'd rather not say"),  # a refusal: not a new topic
    ]
    assert features(events).topic_changes == 1


def test_repetitions() -> None:
    events = [
        user_event("I want to cancel my subscription"),
        agent("Why?"),
        user_event("too expensive"),
        agent("We can offer a discount."),
        user_event("I want to cancel my subscription!"),  # identical words
        agent("Are you sure?"),
        user_event("yes"),
        agent("Really sure?"),
        user_event("yes"),  # short: not a repetition
        agent("Ok."),
        user_event("I want to cancel the subscription now"),  # Jaccard 5/8 < 0.8
    ]
    assert features(events).repetitions == 1


@pytest.mark.parametrize(
    ("events", "goal", "abandoned"),
    [
        ([user_event("Hi"), agent("Hello!"), user_event("forget it")], None, True),
        ([user_event("Hi"), agent("Hello!"), user_event("never mind")], False, True),
        ([user_event("Hi"), agent("Hello!"), user_event("never mind")], True, False),
        ([user_event("Hi"), agent("Hello!"), user_event("bye")], None, False),
        ([user_event("Hi"), agent("Hello!"), user_event("bye")], False, True),
        ([user_event("Hi"), agent("Hello!"), user_event("hello??")], False, True),
        ([user_event("Hi"), agent("Hello!"), user_event("hello??")], None, False),
        ([user_event("bye"), agent("Goodbye!")], False, True),
        ([user_event("ok"), agent("Goodbye!")], False, False),  # the agent ended it
        ([agent("Welcome!")], False, False),  # the user never spoke
    ],
)
def test_abandoned(events: list[Event], goal: bool | None, abandoned: bool) -> None:
    found = features(events, goal_reached=goal)
    assert found.abandoned is abandoned
    assert found.outcome is goal


def test_multi_user_session() -> None:
    events = [
        text_event("alice", "Hi, can we book a room for Friday?"),
        text_event("bob", "And for Saturday too?"),
        agent("Which room size do you need?"),
        text_event("alice", "A room for six"),
    ]
    alice = features(events, user="alice")
    assert alice.turns == 2
    assert alice.questions_asked == 0  # "can we book ...?" asks for an action
    # every other author (bob included) is the other side: bob's and the agent's texts
    # are one message, asking a question alice answers directly
    assert (alice.agent_questions, alice.answers_direct) == (1, 1)
    bob = features(events, user="bob")
    assert bob.turns == 1
    assert bob.agent_questions == 2
    assert bob.answers_none == 1
    assert features(events).turns == 0  # no author is "user"


def test_deterministic() -> None:
    events = [user_event("Where is order 77?"), agent("Can you spell your name?"), user_event("No")]
    assert features(events) == features(list(events))


def test_volunteering_is_a_rate_over_the_messages_the_agent_left_free() -> None:
    # the same user, one fact per free message, against an agent that asks for everything
    # and one that asks nothing: the count differs, the rate does not
    free = features(
        [
            user_event("I need a table"),
            agent("Sure."),
            user_event("for two people"),
            agent("Noted."),
            user_event("somewhere cheap"),
        ]
    )
    asked = features(
        [
            user_event("I need a table"),
            agent("How many people?"),
            user_event("two"),
            agent("Which price range?"),
            user_event("cheap"),
            agent("Noted."),
            user_event("in the north"),
        ]
    )
    assert (free.volunteered, asked.volunteered) == (2, 1)
    assert free.volunteered_rate == 2 / 3  # the first message is free too
    assert asked.volunteered_rate == 1 / 2  # the first and the last
    assert features([agent("Hello, how can I help?")]).volunteered_rate is None
