"""`UserContract`: how a simulated user must end a conversation, and what it must never do.

A contract is written next to the case's metrics (``EvalCase(metrics=[UserContract(...)])``),
like `user_fidelity`, and names the user agent it binds (`agent`; by default the loop
user agent). It is checked live, at every turn of that user agent; the run's result
carries its verdict under its `name`. This module holds the rules, each a pure check of
one `Turn`; the harness feeds the turns, redraws a breaking one and stops the run
(`adk_eval._run.contract`).

The end, checked at the *closing turn* (the one carrying the stop signal):

* ``ends_with``: the closing turn contains one of the closing phrases (case-insensitive);
* ``end_state``: the main session's state matches (a MongoDB-style query on the scoped
  view, as `state_query`, or a function of it returning a bool).

What the user must never do (`never`, all three by default):

* ``restart_solved``: once the task is solved (`solved_when` held at one of its
  turns: a state query, a function of the state, or a tool name the agent has
  called), a turn that does not close and brings the goal up again: it shares at
  least 60 % (and at least two) of the goal's key words (words of four letters or
  more, a few common ones left out), or asks to start over ("do it again", "one
  more time", "from scratch", ...). The goal is `goal`, else the case's first
  message, else the user's first turn.
* ``end_before_answer``: the user closes while the agent has not answered: the
  agent has said nothing yet, or it waits on the user (its last message ends in a
  question mark, or a tool yield waits for the user's input), unless the task is
  solved ("Anything else?" once it is, is answered by closing). Without
  `solved_when`, a closing turn that answers in words ("No, that's all, thanks")
  counts as an answer; a bare stop signal does not.
* ``reveal_early``: a turn reveals a held-back fact (every key word of the fact is
  in it) before the agent asked for it: before any prompt the user got held one of
  the fact's cue words. `hold_back` maps each fact to its cue words ("condition",
  "medication" for "high blood pressure"); a plain list uses each fact's own key
  words. Without `hold_back`, the facts a `user_fidelity` metric of the same user
  agent holds back are used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

from .._errors import EvalSetupError
from .._termination import compile_state_query
from .._trace import EvalTrace
from ._types import MetricResult

__all__ = ["RULES", "Breach", "Rule", "StateCondition", "Turn", "UserContract", "key_words"]

Rule: TypeAlias = Literal["restart_solved", "end_before_answer", "reveal_early"]
RULES: tuple[Rule, ...] = ("restart_solved", "end_before_answer", "reveal_early")

StateCondition: TypeAlias = "Mapping[str, Any] | Callable[[Mapping[str, Any]], bool]"
"""A MongoDB-style query on the scoped state, or a function of it returning a bool."""

_COMMON = frozenset(  # words too common to tell one request from another
    re.findall(
        r"\w+",
        "about again also been came come could does done from have hello here into just like "
        "make more much need please should some than thank thanks that them then there these "
        "they this want were what when where which will with would your yours",
    )
)
_RESTART = re.compile(
    r"\b(start (over|again)|do (it|that|this) (again|over)|one more time|once more|"
    r"all over again|from scratch|redo)\b",
    re.IGNORECASE,
)
_RESTART_SHARE = 0.6
_STOP = "</finished>"  # the stop signal (`adk_eval.STOP_SIGNAL`)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def key_words(text: str) -> frozenset[str]:
    """The words of `text` that carry its meaning: four letters or more, not common ones."""
    return frozenset(w for w in _words(text) if len(w) >= 4 and w not in _COMMON)


@dataclass(frozen=True)
class Turn:
    """One turn of the contract's user agent, as the rules read it.

    Attributes:
        number: Its place among the user agent's turns (1 first).
        text: What the user agent answered.
        closing: It carries the stop signal (it ends the conversation).
        awaiting: The agent waits on the user: it has said nothing yet, its last
            message ends in a question mark, or a tool yield waits for input.
        said_nothing: The agent has said nothing yet (the opening, or an empty message).
        state: The main session's scoped state when the user answered.
        called: The tools the agent has called so far.
        asked: Every prompt the user agent got so far, this one included.
        goal: What the task was (see the module doc).
    """

    number: int
    text: str
    closing: bool
    awaiting: bool
    said_nothing: bool
    state: Mapping[str, Any]
    called: frozenset[str]
    asked: str
    goal: str


@dataclass(frozen=True)
class Breach:
    """A rule a turn broke: the rule, the turn, its words and why."""

    rule: str
    turn: int
    quote: str
    why: str

    def line(self) -> str:
        """``turn 3 broke `restart_solved`: 'Book it again' (the task was solved ...)``."""
        return f"turn {self.turn} broke `{self.rule}`: {self.quote[:200]!r} ({self.why})"

    def to_data(self) -> dict[str, Any]:
        """Plain data, for the verdict's value."""
        return {"rule": self.rule, "turn": self.turn, "quote": self.quote, "why": self.why}


def _condition(value: Any, what: str, *, or_else: str = "") -> None:
    if value is None or callable(value):
        return
    try:
        compile_state_query(value)
    except EvalSetupError as error:
        raise EvalSetupError(
            f"UserContract `{what}` must be a state query{or_else} or a function of the state: "
            f"{error}"
        ) from None


def _holds(condition: Any, state: Mapping[str, Any]) -> bool:
    if callable(condition):
        return bool(condition(state))
    return bool(compile_state_query(condition).match(dict(state)))


@dataclass(frozen=True, kw_only=True)
class UserContract:
    """How a simulated user must end the conversation, and what it must never do.

    Put it in the case's metrics (or a `CaseSession`'s, to check it in that
    session alone); the rules are in the module doc. A turn that
    breaks it is drawn again once (an LLM user agent is asked again, told what
    it broke; a scripted one gives the same turn, so it breaks again); a redraw
    that breaks it too stops the run in an ``error`` of phase ``user_agent``,
    attributed to the simulated user, quoting the turn. Every field is a keyword
    (``UserContract("bye")`` is refused: it would have named the contract).

    Example:
        ::

            UserContract(
                agent=patient,
                ends_with="thanks, bye",
                solved_when={"session.booking": {"$exists": True}},
                hold_back={"high blood pressure": ["condition", "medication"]},
            )

    Attributes:
        name: The verdict's name among the run's metrics.
        agent: The user agent it binds (the agent or its name); None: the case's
            loop user agent.
        ends_with: The closing phrase, or phrases (one of them), the closing turn holds.
        end_state: What the state matches when the user closes.
        solved_when: When the task counts as solved: a state condition, or the
            name of a tool the agent has called.
        never: The rules the user must never break (`RULES`).
        hold_back: The facts the user reveals only when asked, each with the
            words that ask for it (a plain list: the fact's own key words).
        goal: The task, for ``restart_solved`` (None: the case's first message,
            else the user's first turn).
    """

    needs_simulation: ClassVar[bool] = True
    """It is checked as the run happens; a stored trace cannot redraw a turn."""
    concurrent: ClassVar[bool] = False

    name: str = "user_contract"
    agent: Any = None
    ends_with: str | Sequence[str] | None = None
    end_state: StateCondition | None = None
    solved_when: StateCondition | str | None = None
    never: Sequence[Rule] = RULES
    hold_back: Sequence[str] | Mapping[str, Sequence[str]] = ()
    goal: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise EvalSetupError(f"UserContract `name` must be a non-empty str, got {self.name!r}")
        among = f"UserContract `never` takes rules among {', '.join(map(repr, RULES))}"
        if isinstance(self.never, str):
            raise EvalSetupError(
                f"{among}, got {self.never!r}; write never=({self.never!r},) for one rule"
            )
        unknown = [rule for rule in self.never if rule not in RULES]
        if unknown:
            raise EvalSetupError(f"{among}, got unknown rule(s) {', '.join(map(repr, unknown))}")
        if not isinstance(self.ends_with, str | Sequence | None) or not all(
            isinstance(p, str) and p for p in self.closings
        ):
            raise EvalSetupError(
                f"UserContract `ends_with` must be a phrase or a list of phrases, got "
                f"{self.ends_with!r}"
            )
        _condition(self.end_state, "end_state")
        if not isinstance(self.solved_when, str):
            _condition(self.solved_when, "solved_when", or_else=", a tool's name")
        if isinstance(self.hold_back, str):
            raise EvalSetupError(
                f"UserContract `hold_back` must be a list of facts (or facts -> cue words), "
                f"got the string {self.hold_back!r}; write hold_back=[{self.hold_back!r}]"
            )

    @property
    def agent_name(self) -> str | None:
        """The name of the user agent it binds (None: the loop user agent)."""
        return self.agent if isinstance(self.agent, str | None) else self.agent.name

    @property
    def closings(self) -> tuple[str, ...]:
        """The closing phrases (`ends_with` as a tuple)."""
        if self.ends_with is None:
            return ()
        return (self.ends_with,) if isinstance(self.ends_with, str) else tuple(self.ends_with)

    @property
    def ends(self) -> bool:
        """Whether it says how the conversation must end."""
        return bool(self.closings) or self.end_state is not None

    def solved(self, state: Mapping[str, Any], called: frozenset[str]) -> bool:
        """Whether `solved_when` holds for this state and these tool calls."""
        if self.solved_when is None:
            return False
        if isinstance(self.solved_when, str):
            return self.solved_when in called
        return _holds(self.solved_when, state)

    def reached(self, state: Mapping[str, Any]) -> bool:
        """Whether `end_state` holds for this scoped state (True without one)."""
        return self.end_state is None or _holds(self.end_state, state)

    def facts(self) -> dict[str, frozenset[str]]:
        """Each held-back fact -> the words that ask for it."""
        if isinstance(self.hold_back, Mapping):
            return {
                fact: frozenset(w.lower() for w in ([cues] if isinstance(cues, str) else cues))
                for fact, cues in self.hold_back.items()
            }
        return {fact: key_words(fact) for fact in self.hold_back}

    def breach(
        self, turn: Turn, *, solved: bool, facts: Mapping[str, frozenset[str]]
    ) -> Breach | None:
        """The first rule `turn` breaks (None: it keeps the contract).

        Args:
            turn: The turn.
            solved: Whether the task was solved at this turn or before.
            facts: The held-back facts and their cue words (`facts`).
        """
        words = turn.text.replace(_STOP, "").strip()
        if turn.closing:
            found = self._closing_breach(turn, words, solved)
        elif "restart_solved" in self.never and solved:
            found = _restart(turn, words)
        else:
            found = None
        if found is None and "reveal_early" in self.never:
            found = _revealed(turn, words, facts)
        return Breach(found[0], turn.number, words, found[1]) if found else None

    def _closing_breach(self, turn: Turn, words: str, solved: bool) -> tuple[str, str] | None:
        if "end_before_answer" in self.never and (
            turn.said_nothing
            or (turn.awaiting and not solved and (self.solved_when is not None or not words))
        ):
            return "end_before_answer", (
                "the user closed before the agent said anything"
                if turn.said_nothing
                else "the user closed while the agent was waiting on its answer"
            )
        lowered = turn.text.lower()
        if self.closings and not any(p.lower() in lowered for p in self.closings):
            said = " or ".join(repr(p) for p in self.closings)
            return "ends_with", f"the closing turn does not say {said}"
        if not self.reached(turn.state):
            return "end_state", f"the user closed before the state matched {self.end_state!r}"
        return None

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Not applicable on a stored trace: a contract is checked live, in `run_eval`."""
        return MetricResult(passed=False, evidence=[]).not_applicable(
            "not applicable: a user contract is checked as a simulated run happens (run_eval)"
        )


def _restart(turn: Turn, words: str) -> tuple[str, str] | None:
    if _RESTART.search(words):
        return "restart_solved", "the task was solved and the user asks for it again"
    goal = key_words(turn.goal)
    shared = goal & key_words(words)
    if goal and len(shared) >= min(2, len(goal)) and len(shared) >= _RESTART_SHARE * len(goal):
        again = ", ".join(sorted(shared))
        return (
            "restart_solved",
            f"the task was solved and the user brings the goal up again ({again})",
        )
    return None


def _revealed(
    turn: Turn, words: str, facts: Mapping[str, frozenset[str]]
) -> tuple[str, str] | None:
    said = set(_words(words))
    asked = set(_words(turn.asked))
    for fact, cues in facts.items():
        needed = key_words(fact) or frozenset(_words(fact))
        if needed and needed <= said and not any(_asks(cue, asked, turn.asked) for cue in cues):
            return "reveal_early", f"it reveals the held-back {fact!r} before the agent asked"
    return None


def _asks(cue: str, asked_words: set[str], asked: str) -> bool:
    """Whether a cue (a word, or a phrase of several) was in what the user was asked."""
    return cue in asked_words if " " not in cue else cue in asked.lower()
