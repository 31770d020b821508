"""`user_fidelity`: did the simulated user stay in its role?

Simulated users are models and make mistakes: they contradict their persona,
give away what they were told to hold back, invent requirements, answer as the
agent would, or end the conversation too early (or never). A failure caused by
such a user is not the agent's. This metric reads the user agent's turns, from
the user agents' own session (the prompt each got, and its reply):

1. **Deterministic checks first.** A user agent that answers without a model
   (`ScriptedUserAgent`, `HumanUserAgent`: its replies carry no model) is
   faithful by construction. Otherwise each turn is flagged when it is empty,
   when it repeats the agent's words (80 % alike or more, or the agent's whole
   message of five words or more said again before its own answer; never a
   goodbye said back), or when it ends the conversation (``</finished>``) before
   the agent answered anything: when the agent said nothing, or at the agent's
   first question or request ("Does this look right?", "Please confirm the order").
2. **Then a judge** (the judge role's model, or `model`) reads the user agent's
   instruction (its persona), the `facts` it was given, what it was told to
   `hold_back`, and its turns, and says per turn whether it stayed in role.

The verdict is structured (`MetricResult.value`): ``{"faithful": bool, "turns":
[{"turn": n, "in_role": bool, "problem": ..., "quote": ...}]}``, with problems
``contradicted_facts``, ``revealed_held_back``, ``invented_requirement``,
``acted_as_agent``, ``ended_early``, ``never_ended``, ``repeated_agent``,
``empty``. The evidence quotes each offending turn. Failure attribution reads
it to tell an agent's failure from the simulated user's (`EvalResult.attribution`).
A verdict the judge gave carries the judge's identity (``value["judge"]``: model and
instruction hash), so people's labels on it calibrate it as they do an `llm_judge`.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from google.adk.events import Event
from pydantic import BaseModel

from .._trace import EvalTrace
from .._turns import content_text
from ..models import ModelSpec, default_judge_model, resolve_model
from ..models._gateway._ask import ask_for
from ._types import MetricResult

__all__ = ["FIDELITY_INSTRUCTION", "UserFidelity", "user_fidelity"]

FIDELITY_INSTRUCTION = """\
You check whether a simulated user stayed in its role. You get the user's
instructions (its persona), the facts it was given, what it was told to hold back,
and its numbered turns, each after what the agent said to it. For each turn decide
whether the user stayed in role. A turn is out of role when it contradicts the
persona or the facts, reveals what it was told to hold back without being asked,
invents a requirement the persona does not have, speaks as the agent would, ends
the conversation before its goal was met, or refuses to end once it was met.
Reply with JSON only, exactly in this form:
{"turns": [{"turn": 1, "in_role": true, "problem": "none", "quote": ""}]}
where problem is one of none, contradicted_facts, revealed_held_back,
invented_requirement, acted_as_agent, ended_early, never_ended, and quote is the
offending words of that turn.
"""

_STOP = "</finished>"
_ASKS = re.compile(
    r"\?\s*$|\b(?:please|kindly|just)\s+(?:\w+\s+){0,2}"
    r"(?:confirm|check|review|read|verify|tell|let me know|choose|pick)\b",
    re.IGNORECASE,
)
"""The agent asks the user something: a question, or a request to confirm, check, tell ..."""
_FAREWELL = re.compile(
    r"\b(?:good ?bye|bye|see you(?: soon| later)?|take care(?: of yourself)?|enjoy|"
    r"have (?:yourself )?an? (?:\w+ )?(?:day|evening|night|trip|time|one|weekend)|"
    r"my pleasure|you'?re (?:very )?welcome|thanks?(?: you)?)\b",
    re.IGNORECASE,
)


class _Turn(BaseModel):
    turn: int
    in_role: bool
    problem: str = "none"
    quote: str = ""


class _Verdict(BaseModel):
    turns: list[_Turn]


@dataclass(frozen=True)
class UserTurn:
    """One turn of a user agent: what the agent said to it, and its reply."""

    number: int
    prompt: str
    reply: str


def user_turns(events: Sequence[Event], user: str | None = None) -> tuple[list[UserTurn], bool]:
    """The user agents' turns (of `user` only, when given) and whether a model played them."""
    turns: list[UserTurn] = []
    modelled = False
    prompt = ""
    for event in events:
        text = content_text(event.content) if event.content else ""
        if event.author == "user":
            prompt = text
            continue
        if user is not None and event.author != user:
            continue
        if event.partial or not (text or event.content):
            continue
        if event.get_function_calls() and not text:
            continue  # a tool call of the user agent (a state change), not a turn
        modelled = modelled or event.model_version is not None or event.usage_metadata is not None
        turns.append(UserTurn(len(turns) + 1, prompt, text))
    return turns, modelled


def deterministic_problems(turns: Sequence[UserTurn]) -> list[dict[str, Any]]:
    """The turns the rules flag (see the module doc), as verdict entries."""
    found = []
    for turn in turns:
        words = turn.reply.replace(_STOP, "").strip()
        problem = None
        if not turn.reply.strip():
            problem = "empty"
        elif _STOP in turn.reply and (
            not turn.prompt.strip() or (turn.number == 1 and _ASKS.search(turn.prompt))
        ):  # before the agent said anything, or at its first question
            problem = "ended_early"
        elif words and _repeats(words, turn.prompt):
            problem = "repeated_agent"
        if problem:
            found.append(
                {"turn": turn.number, "in_role": False, "problem": problem, "quote": words}
            )
    return found


def _repeats(words: str, prompt: str) -> bool:
    """The user says the agent's words again (a goodbye said back is no repeat)."""
    if len(_FAREWELL.sub(" ", prompt).split()) <= 3:
        return False
    if difflib.SequenceMatcher(None, words, prompt).ratio() >= 0.8:
        return True
    said, heard = words.lower().split(), prompt.lower().split()
    if len(heard) < 5:
        return False
    block = difflib.SequenceMatcher(None, said, heard, autojunk=False).find_longest_match(
        0, len(said), 0, len(heard)
    )
    return block.a == 0 and block.size >= 0.8 * len(heard)


@dataclass
class UserFidelity:
    """Whether the simulated user stayed in role (see the module doc).

    Attributes:
        name: The metric's name.
        instruction: The user agent's persona; None reads it from `agent`.
        agent: The user agent (its name selects its turns; its instruction is
            the persona when `instruction` is None).
        facts: What the user was given to know.
        hold_back: What it was told to reveal only when asked.
        model: The judge's model (None: the judge role's; see `adk_eval.models`).
        judge: Ask a judge after the deterministic checks (False: the checks only).
    """

    needs: ClassVar[frozenset[str]] = frozenset({"content"})
    """It reads what was said (a trace exported without content does not carry it)."""

    name: str = "user_fidelity"
    instruction: str | None = None
    agent: Any = None
    facts: Sequence[str] = field(default_factory=tuple)
    hold_back: Sequence[str] = field(default_factory=tuple)
    model: ModelSpec | None = None
    judge: bool = True

    score_errored_runs: ClassVar[bool] = False

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """The checks, then the judge, on the user agent's turns."""
        user = getattr(self.agent, "name", None)
        turns, modelled = user_turns(trace.user_agent_events, user)
        if not turns:
            return _result([], "no turn of a simulated user to check")
        if not modelled:
            return _result([], "scripted: the user agent answers without a model")
        flagged = deterministic_problems(turns)
        if flagged or not self.judge:
            return _result(flagged, "checked by rule")
        verdicts = await self._judge(turns)
        offending = [v for v in verdicts if not v["in_role"]]
        return _result(offending, "checked by rule and judge", judge=self.identity())

    def identity(self) -> dict[str, str]:
        """Which judge this is, for calibration: its model and a hash of its instruction.

        People's agree/disagree labels on the judge's verdicts (``adk-eval view``)
        calibrate it in ``adk-eval judges``, as they do an `llm_judge`'s.
        """
        spec = self.model if self.model is not None else default_judge_model()
        model = spec if isinstance(spec, str) else str(getattr(spec, "model", spec))
        return {
            "model": model,
            "prompt_hash": hashlib.sha256(FIDELITY_INSTRUCTION.encode()).hexdigest()[:12],
        }

    async def _judge(self, turns: Sequence[UserTurn]) -> list[dict[str, Any]]:
        llm = resolve_model(self.model if self.model is not None else default_judge_model())
        persona = self.instruction or str(getattr(self.agent, "instruction", "") or "")
        lines = [f"Instructions (persona):\n{persona or '(none given)'}"]
        if self.facts:
            lines.append("Facts it was given:\n" + "\n".join(f"- {f}" for f in self.facts))
        if self.hold_back:
            lines.append(
                "To reveal only when asked:\n" + "\n".join(f"- {h}" for h in self.hold_back)
            )
        lines += [f"Turn {t.number}. Agent: {t.prompt}\nUser: {t.reply}" for t in turns]
        verdict, reply = await ask_for(
            llm,
            "\n\n".join(lines),
            instruction=FIDELITY_INSTRUCTION,
            answer=_Verdict,
            role=f"judge:{self.name}",
        )
        if verdict is not None:
            return [turn.model_dump() for turn in verdict.turns]
        raise ValueError(f"the fidelity judge's reply is not a verdict: {reply[:200]!r}")


def _result(
    offending: list[dict[str, Any]], how: str, judge: dict[str, str] | None = None
) -> MetricResult:
    evidence = [
        f"turn {v['turn']}: {v['problem']}" + (f": {v['quote']!r}" if v.get("quote") else "")
        for v in offending
    ] or [f"the simulated user stayed in role ({how})"]
    value: dict[str, Any] = {"faithful": not offending, "turns": offending, "checked": how}
    if judge is not None:  # the judge's verdict, so people's labels calibrate it
        value["judge"] = judge
    return MetricResult(passed=not offending, value=value, evidence=evidence)


def user_fidelity(
    agent: Any = None,
    *,
    name: str = "user_fidelity",
    instruction: str | None = None,
    facts: Sequence[str] = (),
    hold_back: Sequence[str] = (),
    model: ModelSpec | None = None,
    judge: bool = True,
) -> UserFidelity:
    """A metric of whether the simulated user stayed in role (see the module doc).

    Example:
        ::

            user_fidelity(patient, facts=["pain started 30 minutes ago"],
                          hold_back=["high blood pressure"])
    """
    return UserFidelity(
        name=name,
        instruction=instruction,
        agent=agent,
        facts=tuple(facts),
        hold_back=tuple(hold_back),
        model=model,
        judge=judge,
    )
