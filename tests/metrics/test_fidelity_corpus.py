"""user_fidelity's rules over a corpus of simulated users' turns: what they flag, and what not.

Each entry is one turn of a user agent (what the agent said, the user's reply, and
the turn's number), written in the shapes task dialogues take (answers, confirmations,
corrections, goodbyes, a user leaving once it has what it came for), with a careful
reader's verdict: ``out`` of role or ``in`` role. `test_the_corpus_scores` holds the
rules' precision and recall at the figures reached; each known miss is a strict xfail
with its reason (the judge's part: speaking as the agent, leaving before the goal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from adk_eval.metrics._fidelity import UserTurn, deterministic_problems

STOP = "</finished>"


@dataclass(frozen=True)
class Said:
    """One user turn of the corpus and a reader's verdict on it."""

    label: str
    prompt: str
    reply: str
    expect: Literal["in", "out"]
    number: int = 2
    limit: str | None = None  # a known limit of the rules (strict xfail)

    def flagged(self) -> bool:
        return bool(deterministic_problems([UserTurn(self.number, self.prompt, self.reply)]))


CORPUS = [
    Said("answers-a-day", "Which day suits you?", "Tuesday, please.", "in"),
    Said("answers-a-size", "Would you like a large or a small?", "Large.", "in"),
    Said(
        "confirms",
        "Please confirm: 2 tickets to Boston on Friday at 9 am.",
        "Yes, that's right.",
        "in",
    ),
    Said(
        "corrects",
        "Please confirm the appointment with Dr. Lee on March 3 at 10:30 am.",
        "Actually, make it 11 am instead.",
        "in",
    ),
    Said(
        "ends-when-booked",
        "Your table for 4 at Nopa on Friday at 7 pm is booked.",
        f"Great, thanks! That's all. {STOP}",
        "in",
        number=3,
    ),
    Said("ends-at-anything-else", "Anything else I can help with?", f"No. {STOP}", "in", 4),
    Said(
        "goodbye-said-back",
        "Goodbye, have a nice day!",
        f"Goodbye, have a nice day! {STOP}",
        "in",
        5,
    ),
    Said("you-too", "Have a great evening.", "You too, have a great evening.", "in", 5),
    Said(
        "answers-in-the-agents-words",
        "What is your date of birth?",
        "My date of birth is 4 May 1980.",
        "in",
    ),
    Said(
        "follow-up-question",
        "The flight leaves at 6:45 pm and costs $99.",
        "Okay, and what time does it land?",
        "in",
    ),
    Said("leaves-with-the-answer", "We carry oat, almond and soy milk.", STOP, "in", 1),
    Said("volunteers", "How many people?", "Three of us, two adults and a child.", "in"),
    Said("echoes-a-question", "Which day suits you?", "Which day suits you?", "out"),
    Said(
        "echoes-then-answers",
        "Can you confirm the refund of $40 to your Visa card?",
        "Can you confirm the refund of $40 to your Visa card? Yes, to the Visa ending in 4421.",
        "out",
    ),
    Said("ends-before-the-agent", "", f"Hi. {STOP}", "out", 1),
    Said("ends-at-the-first-question", "What can I get for you?", f"Bye. {STOP}", "out", 1),
    Said(
        "ends-at-the-first-request",
        "Just confirm the order on the screen and I'll send it to the bar.",
        f"Okay, bye. {STOP}",
        "out",
        1,
    ),
    Said("ends-at-a-check", "Please check the booking details below.", STOP, "out", 1),
    Said("empty", "How can I help?", "", "out"),
    Said("blank", "How can I help?", "   ", "out"),
    Said(
        "says-the-agents-answer",
        "The address is 1532 20th Street.",
        "The address is 1532 20th Street.",
        "out",
    ),
    Said(
        "says-the-agents-promise",
        "Your order will be ready at the bar shortly.",
        "Your order will be ready at the bar shortly.",
        "out",
    ),
    Said(
        "confirms-in-the-agents-words",
        "Is the order on the screen correct?",
        "Yes, the order on the screen is correct.",
        "in",
        limit="a confirmation that repeats the agent's question reads as a repeat (80 % alike)",
    ),
    Said(
        "leaves-when-nothing-fits",
        "Sorry, we don't sell hot dogs. Would you like something else from the menu?",
        STOP,
        "in",
        1,
        limit="leaving at the agent's first question is flagged even when the agent cannot help",
    ),
    Said(
        "afternoon-goodbye",
        "Have a pleasant afternoon.",
        "Have a pleasant afternoon.",
        "in",
        6,
        limit="the goodbyes are a list: 'a pleasant afternoon' is not on it",
    ),
    Said(
        "speaks-as-the-agent",
        "Which size would you like?",
        "Your latte will be ready at the coffee bar in a few minutes.",
        "out",
        limit="speaking as the agent in new words: the judge's (acted_as_agent)",
    ),
    Said(
        "leaves-midway",
        "I found 3 flights; the cheapest leaves at 8 am. Shall I book it?",
        f"Okay, bye. {STOP}",
        "out",
        3,
        limit="leaving before the goal after the first turn: the judge's (it knows the goal)",
    ),
    Said(
        "leaves-at-a-suggestion",
        "How about the Ace Hotel? It is a 4 star hotel.",
        f"Thanks, bye. {STOP}",
        "out",
        1,
        limit="an offer that does not end as a question or a request is not read as one",
    ),
]


@pytest.mark.parametrize(
    "said",
    [
        pytest.param(
            s, id=s.label, marks=[pytest.mark.xfail(reason=s.limit, strict=True)] if s.limit else []
        )
        for s in CORPUS
    ],
)
def test_a_corpus_turn(said: Said):
    assert ("out" if said.flagged() else "in") == said.expect


def test_the_corpus_scores():
    flagged = [s for s in CORPUS if s.flagged()]
    out = [s for s in CORPUS if s.expect == "out"]
    true = sum(s.expect == "out" for s in flagged)
    # 10 of 13 flags right (3 false: the known misses); 10 of 13 out-of-role turns found.
    assert (true, len(flagged), len(out)) == (10, 13, 13)
