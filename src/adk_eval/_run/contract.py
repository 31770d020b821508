"""The live check of a case's user contracts (`UserContract`), one user turn at a time.

Every answer of a user agent a contract binds is checked as it arrives, against the
main session as it is then (its state, the tools the agent has called) and the
prompts the user agent got so far. A turn that breaks the contract is drawn again
once: an LLM (or human) user agent is asked again, the prompt preceded by a note of
the rule it broke; a `ScriptedUserAgent` is deterministic, so its redraw is the same
turn. Both draws stay in the user agents' session. A redraw that keeps the contract
is the answer the system gets (the breach is kept in the verdict's evidence); one
that breaks it too raises `EvalUserAgentError`, which ends the run in an ``error``
of phase ``user_agent``, attributed to the simulated user.

At the end each contract's verdict replaces it among the case's metrics (`scored`):
broken, kept (the user closed as it says), or, when the run ended some other way,
the end it asks for checked on the final state ("never closed" when it wants a
closing phrase); a run cut by a limit leaves the end unchecked (not applicable).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from google.adk.agents import BaseAgent
from google.adk.sessions import Session

from .._bridge import YieldInfo
from .._case import EvalCase
from .._errors import EvalSetupError, EvalUserAgentError
from .._state import scoped_view
from .._termination import Termination
from .._trace import EvalTrace
from .._turns import content_text
from .._user_agents import ScriptedUserAgent
from ..metrics._contract import Breach, Turn, UserContract, key_words
from ..metrics._fidelity import UserFidelity
from ..metrics._types import Metric, MetricResult
from .users import UserAgentAnswer, UserAgentRunner

__all__ = ["ContractWatch"]

MainSession = Callable[[], Awaitable[Session]]


@dataclass
class _Bound:
    """One contract in one run: what its user agent was asked, and how it kept it."""

    contract: UserContract
    agent: str
    facts: Mapping[str, frozenset[str]]
    goal: str | None
    asked: list[str] = field(default_factory=list)
    turns: int = 0
    solved: bool = False
    closed: bool = False
    redrawn: list[Breach] = field(default_factory=list)
    broken: Breach | None = None

    def turn(self, answer: UserAgentAnswer, prompt: str, info: YieldInfo, seen: _Seen) -> Turn:
        said_nothing = info.type == "loop" and not (info.text or "").strip()
        return Turn(
            number=self.turns + 1,
            text=answer.text,
            closing=answer.stop,
            awaiting=said_nothing or info.type == "tool" or prompt.rstrip().endswith("?"),
            said_nothing=said_nothing,
            state=seen.state,
            called=seen.called,
            asked="\n".join([*self.asked, prompt]),
            goal=self.goal or "",
        )

    def breach(self, turn: Turn) -> Breach | None:
        solved = self.solved or self.contract.solved(turn.state, turn.called)
        return self.contract.breach(turn, solved=solved, facts=self.facts)

    def keep(self, turn: Turn, prompt: str) -> None:
        """Notes a turn that kept the contract (what it was asked, solved, closed)."""
        self.asked.append(prompt)
        self.turns += 1
        self.solved = self.solved or self.contract.solved(turn.state, turn.called)
        self.closed = self.closed or turn.closing
        if self.goal is None:
            self.goal = turn.text

    def result(self, trace: EvalTrace, termination: Termination | None) -> MetricResult:
        """The verdict (see the module doc)."""
        evidence = [f"{b.line()}; its redraw kept the contract" for b in self.redrawn]
        value: dict[str, Any] = {
            "closed": self.closed,
            "redrawn": [b.to_data() for b in self.redrawn],
        }
        if self.broken is not None:
            failed = {**value, "broken": self.broken.to_data(), "faithful": False}
            return MetricResult(
                passed=False, value=failed, evidence=[self.broken.line(), *evidence]
            )
        if self.closed or not self.contract.ends:
            said = "closed as the contract says" if self.closed else "kept the contract"
            return MetricResult(
                passed=True, value=value, evidence=[f"`{self.agent}` {said}", *evidence]
            )
        if termination is not None:
            return MetricResult(passed=False, value=value, evidence=evidence).not_applicable(
                f"not applicable: the run ended at `{termination.kind}` before `{self.agent}` "
                "closed, so the end the contract asks for was not checked"
            )
        return self._unclosed(trace, value, evidence)

    def _unclosed(
        self, trace: EvalTrace, value: dict[str, Any], evidence: list[str]
    ) -> MetricResult:
        contract = self.contract
        if contract.closings:
            why = f"`{self.agent}` never closed the conversation with {contract.closings[0]!r}"
        elif contract.end_state is not None and not contract.reached(trace.final_state):
            why = f"the run ended before the state matched {contract.end_state!r}"
        else:
            return MetricResult(passed=True, value=value, evidence=["the end state was reached"])
        return MetricResult(
            passed=False, value={**value, "faithful": False}, evidence=[why, *evidence]
        )


@dataclass(frozen=True)
class _Seen:
    """The main session when a user agent answered: its scoped state and the calls made."""

    state: Mapping[str, Any]
    called: frozenset[str]

    @classmethod
    def of(cls, session: Session) -> _Seen:
        called = frozenset(
            call.name or ""
            for event in session.events
            if event.author != "user"
            for call in event.get_function_calls()
        )
        return cls(scoped_view(session.state), called)


class ContractWatch:
    """The user contracts of one run (none: every answer passes through unchecked)."""

    def __init__(self, bound: Sequence[_Bound]) -> None:
        self._bound = list(bound)

    @classmethod
    def of(cls, case: EvalCase) -> ContractWatch:
        """The watch of `case`'s contracts.

        Raises:
            EvalSetupError: A contract binds a user agent the case does not have.
        """
        contracts = [m for m in case.metrics if isinstance(m, UserContract)]
        if not contracts:
            return cls(())
        users = case.user_agents
        names = {a.name for a in [users.loop, *users.tools.values()] if a is not None}
        first = case.first_message
        goal = content_text(first) if first is not None and not isinstance(first, str) else first
        bound = []
        for contract in contracts:
            agent = contract.agent_name or (users.loop.name if users.loop is not None else None)
            if agent is None or agent not in names:
                raise EvalSetupError(
                    f"EvalCase `{case.name}`: UserContract `{contract.name}` binds "
                    + (f"user agent `{agent}`" if agent else "the loop user agent")
                    + f", which the case does not have (its user agents: "
                    f"{', '.join(sorted(names)) or 'none'}); set UserContract(agent=...) to one"
                )
            facts = _facts(contract, agent, case.metrics)
            bound.append(_Bound(contract, agent, facts, contract.goal or goal or None))
        return cls(bound)

    async def answer(
        self,
        users: UserAgentRunner,
        agent: BaseAgent,
        prompt: str,
        info: YieldInfo,
        main: MainSession,
    ) -> UserAgentAnswer:
        """`agent`'s answer to `prompt`, checked against its contracts and redrawn once.

        Raises:
            EvalUserAgentError: The answer and its redraw both break a contract,
                or the user agent failed.
            EvalSetupError: The user agent's model cannot run here.
        """
        answer = await users.answer(agent, prompt, info)
        bound = [b for b in self._bound if b.agent == agent.name]
        if not bound:
            return answer
        seen = _Seen.of(await main())
        found = _first_breach(bound, answer, prompt, info, seen)
        if found is not None:
            first, breach = found
            if not isinstance(agent, ScriptedUserAgent):  # a script would say the same again
                answer = await users.answer(agent, _note(breach, prompt), info)
            again = _first_breach(bound, answer, prompt, info, seen)
            if again is not None:
                again[0].broken = again[1]
                raise EvalUserAgentError(_broken(agent.name, again[1], again[0].contract))
            first.redrawn.append(breach)
        for one in bound:
            one.keep(one.turn(answer, prompt, info, seen), prompt)
        return answer

    def scored(self, metrics: Sequence[Metric], termination: Termination | None) -> list[Metric]:
        """`metrics` with each contract replaced by its verdict in this run."""
        by_contract = {id(b.contract): b for b in self._bound}
        return [
            _Verdict(by_contract[id(m)], termination) if id(m) in by_contract else m
            for m in metrics
        ]


def _first_breach(
    bound: Sequence[_Bound], answer: UserAgentAnswer, prompt: str, info: YieldInfo, seen: _Seen
) -> tuple[_Bound, Breach] | None:
    for one in bound:
        breach = one.breach(one.turn(answer, prompt, info, seen))
        if breach is not None:
            return one, breach
    return None


def _facts(contract: UserContract, agent: str, metrics: Sequence[Any]) -> dict[str, frozenset[str]]:
    """The contract's held-back facts, else those of a `user_fidelity` of the same agent."""
    if contract.hold_back or "reveal_early" not in contract.never:
        return contract.facts()
    for metric in metrics:
        if isinstance(metric, UserFidelity) and getattr(metric.agent, "name", agent) == agent:
            return {fact: key_words(fact) for fact in metric.hold_back}
    return {}


def _note(breach: Breach, prompt: str) -> str:
    return (
        f"[Note from the evaluation: your last answer broke the rule `{breach.rule}` "
        f"({breach.why}). Answer again, keeping to it.]\n\n{prompt}"
    )


def _broken(agent: str, breach: Breach, contract: UserContract) -> str:
    return (
        f"User agent `{agent}` broke `{breach.rule}` at turn {breach.turn}, and again when "
        f"asked once more: {breach.quote[:200]!r} ({breach.why}; contract `{contract.name}`)"
    )


@dataclass(frozen=True)
class _Verdict:
    """A contract as a metric whose result is its verdict in one run."""

    bound: _Bound
    termination: Termination | None
    concurrent: ClassVar[bool] = False
    score_errored_runs: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return self.bound.contract.name

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        return self.bound.result(trace, self.termination)
