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

In a case of several sessions (`EvalCase.sessions`) each session is a conversation of its own: a
contract in a session's metrics binds a user agent of that session and is checked there, its
verdict scored on that session's trace; a contract in the case's metrics is bound afresh in
every session its user agent plays in (turn numbers, the goal, "solved" and the closing turn are
each session's own) and is kept when it was kept in each of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from google.adk.agents import BaseAgent
from google.adk.sessions import Session
from google.genai import types

from .._bridge import YieldInfo
from .._case import EvalCase
from .._errors import EvalSetupError, EvalUserAgentError
from .._lazy import is_loaded_instance
from .._state import scoped_view
from .._termination import Termination
from .._trace import EvalTrace
from .._turns import content_text
from .._user_agents import ScriptedUserAgent, UserAgents
from ..metrics._types import Metric, MetricResult
from .users import UserAgentAnswer, UserAgentRunner

if TYPE_CHECKING:
    from ..metrics._contract import Breach, Turn, UserContract

__all__ = ["ContractWatch"]

MainSession = Callable[[], Awaitable[Session]]
_CONTRACTS = "adk_eval.metrics._contract"  # imported only by a case with a contract


@dataclass
class _Bound:
    """One contract in one run: what its user agent was asked, and how it kept it."""

    contract: UserContract
    agent: str
    facts: Mapping[str, frozenset[str]]
    goal: str | None
    session: str | None = None
    asked: list[str] = field(default_factory=list)
    turns: int = 0
    solved: bool = False
    closed: bool = False
    redrawn: list[Breach] = field(default_factory=list)
    broken: Breach | None = None

    def turn(self, answer: UserAgentAnswer, prompt: str, info: YieldInfo, seen: _Seen) -> Turn:
        from ..metrics._contract import Turn

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
    """The user contracts of one run (none: every answer passes through unchecked).

    For a case of several sessions, each session has a watch of its own
    (`session`): a fresh binding of each case contract whose user agent plays in
    it, and the session's own contracts.
    """

    def __init__(
        self,
        bound: Sequence[_Bound],
        sessions: Sequence[ContractWatch] = (),
        spans: Mapping[int, Sequence[tuple[int, _Bound]]] | None = None,
    ) -> None:
        self._bound = list(bound)
        self._sessions = tuple(sessions)
        self._spans = dict(spans or {})

    @classmethod
    def of(cls, case: EvalCase) -> ContractWatch:
        """The watch of `case`'s contracts (and of its sessions').

        Raises:
            EvalSetupError: A contract binds a user agent the case (or its
                session) does not have.
        """
        contracts = _contracts(case.metrics)
        if not case.sessions:
            return cls([_bind(case, c, case.user_agents, case.first_message) for c in contracts])
        spanning = [(c, _spanning_agent(case, c)) for c in contracts]
        sessions: list[ContractWatch] = []
        spans: dict[int, list[tuple[int, _Bound]]] = {id(c): [] for c in contracts}
        for index, one in enumerate(case.sessions):
            users, label = one.user_agents or case.user_agents, one.label(index)
            bound = [
                _bind(case, c, users, one.first_message, label, agent)
                for c, agent in spanning
                if agent in _names(users)
            ]
            for found in bound:
                spans[id(found.contract)].append((index, found))
            own = _contracts(one.metrics)
            bound += [_bind(case, c, users, one.first_message, label) for c in own]
            sessions.append(cls(bound))
        return cls((), sessions, spans)

    def session(self, index: int) -> ContractWatch:
        """The watch of the `index`-th session (of a case of several sessions)."""
        return self._sessions[index]

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
                raise EvalUserAgentError(_broken(agent.name, again[1], again[0]))
            first.redrawn.append(breach)
        for one in bound:
            one.keep(one.turn(answer, prompt, info, seen), prompt)
        return answer

    def scored(self, metrics: Sequence[Metric], termination: Termination | None) -> list[Metric]:
        """`metrics` with each contract replaced by its verdict in this run."""
        by_contract = {id(b.contract): b for b in self._bound}
        return [
            _Verdict(by_contract[id(m)], termination)
            if id(m) in by_contract
            else _Spanning(m.name, tuple(self._spans[id(m)]), termination)
            if id(m) in self._spans
            else m
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


def _names(users: UserAgents) -> set[str]:
    return {a.name for a in [users.loop, *users.tools.values()] if a is not None}


def _bind(
    case: EvalCase,
    contract: UserContract,
    users: UserAgents,
    first: str | types.Content | None,
    session: str | None = None,
    agent: str | None = None,
) -> _Bound:
    """`contract` bound to its user agent among `users` (`first`: the opening message)."""
    agent = agent or contract.agent_name or (users.loop.name if users.loop else None)
    names = _names(users)
    if agent is None or agent not in names:
        raise EvalSetupError(
            f"EvalCase `{case.name}`: UserContract `{contract.name}` binds "
            + (f"user agent `{agent}`" if agent else "the loop user agent")
            + (f", which session `{session}`" if session else ", which the case")
            + f" does not have (its user agents: {', '.join(sorted(names)) or 'none'}); "
            "set UserContract(agent=...) to one"
        )
    goal = content_text(first) if isinstance(first, types.Content) else first
    metrics = [*case.metrics, *(m for one in case.sessions for m in one.metrics)]
    facts = _facts(contract, agent, metrics)
    return _Bound(contract, agent, facts, contract.goal or goal or None, session)


def _spanning_agent(case: EvalCase, contract: UserContract) -> str:
    """The user agent a case contract binds in each session of a case of several sessions."""
    every = [one.user_agents or case.user_agents for one in case.sessions]
    names = sorted(set().union(*(_names(users) for users in every)))
    loops = sorted({users.loop.name for users in every if users.loop is not None})
    agent = contract.agent_name or (case.user_agents.loop.name if case.user_agents.loop else None)
    if agent is None and len(loops) == 1:
        agent = loops[0]
    if agent is None or agent not in names:
        raise EvalSetupError(
            f"EvalCase `{case.name}`: UserContract `{contract.name}` binds "
            + (f"user agent `{agent}`" if agent else "the loop user agent")
            + (
                ", which no session has"
                if agent or len(loops) < 2
                else ", and the sessions' differ"
            )
            + f" (their user agents: {', '.join(names) or 'none'}); set UserContract(agent=...)"
            " to one"
        )
    return agent


def _contracts(metrics: Sequence[Any]) -> list[UserContract]:
    """The `UserContract`s among `metrics` (none before a contract's module is imported)."""
    return [m for m in metrics if is_loaded_instance(m, _CONTRACTS, "UserContract")]


def _facts(contract: UserContract, agent: str, metrics: Sequence[Any]) -> dict[str, frozenset[str]]:
    """The contract's held-back facts, else those of a `user_fidelity` of the same agent."""
    if contract.hold_back or "reveal_early" not in contract.never:
        return contract.facts()
    from ..metrics._contract import key_words
    from ..metrics._fidelity import UserFidelity

    for metric in metrics:
        if isinstance(metric, UserFidelity) and getattr(metric.agent, "name", agent) == agent:
            return {fact: key_words(fact) for fact in metric.hold_back}
    return {}


def _note(breach: Breach, prompt: str) -> str:
    return (
        f"[Note from the evaluation: your last answer broke the rule `{breach.rule}` "
        f"({breach.why}). Answer again, keeping to it.]\n\n{prompt}"
    )


def _broken(agent: str, breach: Breach, bound: _Bound) -> str:
    where = f" of session `{bound.session}`" if bound.session else ""
    return (
        f"User agent `{agent}` broke `{breach.rule}` at turn {breach.turn}{where}, and again "
        f"when asked once more: {breach.quote[:200]!r} ({breach.why}; contract "
        f"`{bound.contract.name}`)"
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


@dataclass(frozen=True)
class _Spanning:
    """A case contract over a case of several sessions: its verdict in each session that ran.

    Each session is a conversation of its own, checked as one (its closing turn,
    its end, solved afresh); the contract is kept when it was in every session
    its user agent played, broken when it was broken in one.
    """

    name: str
    spans: tuple[tuple[int, _Bound], ...]
    termination: Termination | None
    concurrent: ClassVar[bool] = False
    score_errored_runs: ClassVar[bool] = True

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        ran = len(trace.sessions)
        verdicts = [
            (
                bound.session,
                bound.result(trace.sessions[i], self.termination if i == ran - 1 else None),
            )
            for i, bound in self.spans
            if i < ran
        ]
        value: dict[str, Any] = {"sessions": {label: r.value for label, r in verdicts}}
        evidence = [f"{label}: {line}" for label, r in verdicts for line in r.evidence]
        if any(r.applicable and not r.passed for _, r in verdicts):
            return MetricResult(passed=False, value={**value, "faithful": False}, evidence=evidence)
        if not all(r.applicable for _, r in verdicts):
            reason = next(r.evidence[0] for _, r in verdicts if not r.applicable)
            return MetricResult(passed=False, value=value).not_applicable(reason)
        return MetricResult(passed=True, value=value, evidence=evidence or ["no session ran"])
