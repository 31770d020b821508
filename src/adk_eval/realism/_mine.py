"""Scenarios mined from production: each stored conversation as a case a simulated user plays.

`mine_session(session)` reads one real conversation (redacted first: see
`production.Redactor`) and keeps what a simulated user needs to play it again:

* the **goal**: the user's first message (what they came for), and the starting prompt;
* the **facts** they gave and when: each later user message that tells the agent
  something about the need (`is_fact`: a new value, no preference, a new goal; not a
  closing, thanks, a bare yes or no, an offered option picked, the user's own question
  about the item at hand), in order, marked *asked* when the agent's message before it
  asked (a question, a confirmation, an offer), *volunteered* otherwise;
* their **manner**, measured by rules on the same behaviour features the realism report
  compares (`UserBehaviour`): words per message (terse under 8, wordy over 25), how often
  they answered the agent's questions directly, how much they volunteered, how many turns
  they took, whether they gave up;
* the **outcome**: whether the conversation reached its goal, when the caller knows it
  (a metric's verdict), else whether the user abandoned it.

`MinedScenario.conversation_scenario()` is ADK's own `ConversationScenario`
(starting prompt, plan, persona), so the mined cases form an EvalSet that ``adk eval``
accepts; `MinedScenario.eval_case(agent)` is the `EvalCase` that plays it here, with a
`user_fidelity` metric holding the facts the real user gave only when asked back.
Every mined scenario names its source session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from google.adk.evaluation.conversation_scenarios import ConversationScenario
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.simulation.user_simulator_personas import UserBehavior, UserPersona
from google.adk.events import Event
from google.adk.sessions import Session

from ._answers import dodges_or_refuses
from ._facts import domains, fact_items, is_closing, new_goal_marker, no_preference
from ._features import UserBehaviour, features
from ._messages import conversation
from ._text import is_question, question_in, sentences

__all__ = ["MinedFact", "MinedScenario", "is_fact", "mine_session"]

_SMALL_TALK = frozenset(
    {
        "yes",
        "yeah",
        "yep",
        "no",
        "nope",
        "ok",
        "okay",
        "thanks",
        "thank",
        "you",
        "please",
        "sure",
        "great",
        "fine",
        "bye",
        "hi",
        "hello",
    }
)


@dataclass(frozen=True)
class MinedFact:
    """A fact the real user gave: at which of their messages, and whether they were asked."""

    turn: int
    text: str
    asked: bool


@dataclass(frozen=True)
class MinedScenario:
    """One real conversation, as a simulated user needs it (see the module doc).

    Attributes:
        source: The session it was mined from (``app/user/session-id``).
        starting_prompt: The user's first message.
        goal: What the user came for, in words.
        facts: What they gave later, in order.
        behaviour: Their measured behaviour (the realism report compares it).
        outcome: Whether the conversation reached its goal (None: unknown).
        constraints: What the user set on the goal, as a model read it (`_extract`).
    """

    source: str
    starting_prompt: str
    goal: str
    facts: tuple[MinedFact, ...]
    behaviour: UserBehaviour
    outcome: bool | None = None
    constraints: tuple[str, ...] = ()

    @property
    def manner(self) -> str:
        """The user's manner, in words a simulated user follows."""
        words = self.behaviour.words_per_message
        length = "terse" if words < 8 else "wordy" if words > 25 else "moderate"
        direct = self.behaviour.answered_directly_rate
        answers = (
            "answer the agent's questions directly"
            if direct is None or direct >= 0.8
            else "sometimes answer the agent's questions vaguely or with a question of your own"
        )
        return (
            f"Write {length} messages of about {_count(max(1, round(words)), 'word')}; "
            f"{answers}; take about {_count(self.behaviour.turns, 'message')}"
            + ("; give up if the agent does not help soon." if self.behaviour.abandoned else ".")
        )

    def plan(self) -> str:
        """The conversation plan: the goal, then each fact and when to give it."""
        lines = [f"Your goal: {self.goal}"]
        lines += [f"- Hold to this: {constraint}." for constraint in self.constraints]
        for fact in self.facts:
            when = "only when the agent asks for it" if fact.asked else "without being asked"
            lines.append(f"- Say {fact.text!r} {when}.")
        if self.behaviour.abandoned:
            lines.append("If the agent has not helped after a few messages, give up and leave.")
        return "\n".join(lines)

    def conversation_scenario(self) -> ConversationScenario:
        """ADK's `ConversationScenario` for this conversation (a persona of its manner)."""
        behaviour = UserBehavior(
            name="mined_manner",
            description=self.manner,
            behavior_instructions=[self.manner],
            violation_rubrics=["The user's messages are much longer or shorter than described."],
        )
        persona = UserPersona(
            id=f"mined:{self.source}",
            description=f"A real user of this agent (mined from {self.source}).",
            behaviors=[behaviour],
        )
        return ConversationScenario(
            starting_prompt=self.starting_prompt,
            conversation_plan=self.plan(),
            user_persona=persona,
        )

    def adk_eval_case(self) -> AdkEvalCase:
        """An ADK eval case playing this scenario; its id is the source session's id."""
        return AdkEvalCase(
            eval_id=self.source.rsplit("/", 1)[-1] or self.source,
            conversation_scenario=self.conversation_scenario(),
        )

    def held_back(self) -> list[str]:
        """The facts the real user gave only when asked (a simulated user must too)."""
        return [fact.text for fact in self.facts if fact.asked]

    def to_json(self) -> dict[str, Any]:
        """The scenario's own record (beside the EvalSet): source, facts, behaviour, outcome."""
        return {
            "source": self.source,
            "starting_prompt": self.starting_prompt,
            "goal": self.goal,
            "facts": [asdict(fact) for fact in self.facts],
            "behaviour": asdict(self.behaviour),
            "outcome": self.outcome,
            "constraints": list(self.constraints),
        }


def _count(number: int, noun: str) -> str:
    """``1 word``, ``3 words``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def mine_session(
    session: Session, *, user: str = "user", outcome: bool | None = None
) -> MinedScenario | None:
    """The scenario of one conversation (None: the user said nothing to start from).

    Args:
        session: The conversation (redact it first: what is mined is written to files).
        user: The author of the user's messages.
        outcome: Whether it reached its goal, when known (a metric's verdict).
    """
    messages = _user_messages(session.events, user)
    if not messages:
        return None
    first = messages[0][1]
    behaviour = features(session.events, user=user, goal_reached=outcome)
    facts = tuple(
        MinedFact(turn=index, text=text, asked=asked)
        for index, (asked, text, fact) in enumerate(messages[1:], start=1)
        if fact
    )
    return MinedScenario(
        source=f"{session.app_name}/{session.user_id}/{session.id}",
        starting_prompt=first,
        goal=first,
        facts=facts,
        behaviour=behaviour,
        outcome=outcome if outcome is not None else (False if behaviour.abandoned else None),
    )


def _user_messages(events: Sequence[Event], user: str) -> list[tuple[bool, str, bool]]:
    """Each user message: whether the agent's message before it asked, its text, a fact?"""
    found: list[tuple[bool, str, bool]] = []
    agent, said, goal = "", set[str](), set[str]()
    for by_user, text in conversation(events, user):
        if not by_user:
            agent = text
            continue
        question = question_in(agent, prompts=True)
        new = [item for item in fact_items(text) if item not in said and item not in agent.lower()]
        named = domains(text) - domains(agent)
        opens = bool(found) and bool(named - goal or new_goal_marker(text))
        answers = question is not None and not question.yes_no and not question.open_ended
        found.append((question is not None, text, is_fact(text, new, opens, answers=answers)))
        said.update(new)
        goal = named if opens else goal | named
        agent = ""
    return found


def is_fact(
    text: str, new_items: Sequence[str], opens_goal: bool, *, answers: bool = False
) -> bool:
    """Whether a user message tells the agent something about the need.

    A fact gives a new value (not one the agent just offered, nor one said before), says
    there is no preference, opens a new goal, or (`answers`) replies to the agent's
    question for a value without dodging or refusing it ("It's crushing, down my left
    arm" to "Where is the pain?"). Closings and thanks, a bare yes or no,
    picking an offered option, a rejection without a detail and the user's own questions
    about the item at hand are not facts (a question is one when it opens a goal or gives
    a value: "Is there one on Sunday?").
    """
    if not says_something(text) or is_closing(text):
        return False
    answered = answers and not dodges_or_refuses(text) and not only_asks(text)
    if opens_goal or answered:
        return True
    return bool(new_items) or no_preference(text)


def only_asks(text: str) -> bool:
    """Whether every sentence of a message is a question (the user asking, not telling)."""
    found = sentences(text)
    return bool(found) and all(is_question(sentence) for sentence in found)


def says_something(text: str) -> bool:
    """Whether a user message says more than small talk (yes, thanks, ok, ...)."""
    words = [w.strip(".,!?;:").lower() for w in text.split()]
    return any(word and word not in _SMALL_TALK for word in words)
