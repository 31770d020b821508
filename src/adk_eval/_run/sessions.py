"""A case of several sessions, played in turn on one memory (`EvalCase.sessions`).

The run's parts serve every session: the system under test (one ADK runner
with the interception plugin and tool policy, one memory service), the record,
the watch of the live invariants, the meters and the limits of model calls and
budget. Each session in turn:

1. gets its main session: the run's first for the first session, then a new one
   of the same user and app. Session state starts empty (the first starts with
   the case's `initial_state`); ``user:`` and ``app:`` state carry over, as ADK's
   session services keep them;
2. is played by the loop's own conversation (`loop` hands it in) on the run's
   parts narrowed to it: its opening, user agents (on a user-agent session of
   their own), ``max_turns`` and user contracts (its own, and the case's bound
   afresh), the case's bridge and ``state_matches``;
3. ends: its user agents close, and its main session is added to the memory
   service (``add_session_to_memory``), where the next sessions' ``load_memory``
   and ``preload_memory`` find it.

A session that ends in an error, at a limit or at a broken invariant ends the
run there: the sessions after it do not run. The case's ``max_duration`` counts
over them all.

Each session's metrics score its own trace, under ``"<session>/<metric>"``; a
session that did not run gets its metrics not applicable. The case's metrics and
live invariants score the whole trace: every session's events, one after
another, with each session's own trace in `EvalTrace.sessions`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import anyio

from .._case import EvalCase
from .._result import EvalErrorInfo
from .._state import scoped_view
from .._termination import Termination
from .._trace import EvalTrace
from .._user_agents import CaseSession
from ..metrics._scoring import MetricFailure, score_stopped_trace, score_trace
from ..metrics._types import MetricResult
from .parts import RunParts
from .users import UserAgentRunner

__all__ = ["Conversation", "SessionRuns"]


class Conversation(Protocol):
    """One session's conversation, as the loop plays it."""

    turns: int
    termination: Termination | None

    async def converse(self) -> EvalErrorInfo | None:
        """Plays the conversation to its end; the error that ended it, if one did."""
        ...


@dataclass
class _Played:
    """A session that started: where it ran and how it ended."""

    label: str
    session: CaseSession
    session_id: str
    initial_state: dict[str, dict[str, object]]
    users: UserAgentRunner
    conversation: Conversation
    error: EvalErrorInfo | None = None


class SessionRuns:
    """The sessions of one run of a case, played in turn (see the module doc)."""

    def __init__(self, parts: RunParts) -> None:
        self.parts = parts
        self.played: list[_Played] = []

    @property
    def turns(self) -> int:
        """The user-agent answers of every session so far."""
        return sum(played.conversation.turns for played in self.played)

    @property
    def termination(self) -> Termination | None:
        """The limit that ended a session (None: none did)."""
        return next(
            (p.conversation.termination for p in self.played if p.conversation.termination), None
        )

    async def play(self, conversation: Callable[[RunParts], Conversation]) -> EvalErrorInfo | None:
        """Plays the sessions in turn (`conversation`: the loop's, on a session's parts).

        Returns:
            The error a session ended with (the last session to run), or None.
        """
        case, system = self.parts.case, self.parts.system
        for index, one in enumerate(case.sessions):
            if index == 0:
                session = self.parts.session
                initial = copy.deepcopy({k: dict(v) for k, v in case.initial_state.items()})
            else:
                session = await system.create_session()
                initial = scoped_view(session.state)
            users = self.parts.session_users[index]
            narrowed = dataclasses.replace(
                self.parts,
                case=_session_case(case, one),
                users=users,
                contracts=self.parts.contracts.session(index),
                session=session,
            )
            played = _Played(
                one.label(index), one, session.id, initial, users, conversation(narrowed)
            )
            self.played.append(played)
            await users.start()
            try:
                played.error = await played.conversation.converse()
            finally:
                with anyio.CancelScope(shield=True):
                    await users.close()
            await system.remember(session.id)
            if played.error or played.conversation.termination or self.parts.watch.stop:
                return played.error
        return None

    async def trace(self) -> EvalTrace:
        """The run's trace: every session's events in turn, each session's own in `sessions`."""
        system, record = self.parts.system, self.parts.record
        shares = []
        for played in self.played:
            events, state = await system.final(played.session_id)
            users = await played.users.events()
            artifacts = await system.artifacts(played.session_id)
            shares.append((events, users, scoped_view(state), played.initial_state, artifacts))
        whole = record.trace(
            [event for share in shares for event in share[0]],
            shares[-1][2] if shares else {},
            initial_state=self.played[0].initial_state if self.played else {},
            user_agent_events=[event for share in shares for event in share[1]],
            case_name=self.parts.case.name,
            artifacts={name: part for share in shares for name, part in share[4].items()},
        )
        sessions = tuple(
            whole.session_part(
                events, users, final_state=final, initial_state=initial, artifacts=artifacts
            )
            for events, users, final, initial, artifacts in shares
        )
        return dataclasses.replace(whole, sessions=sessions)

    async def score(
        self,
        trace: EvalTrace,
        error: EvalErrorInfo | None,
        case_metrics: tuple[dict[str, MetricResult], list[MetricFailure]],
    ) -> tuple[dict[str, MetricResult], list[MetricFailure]]:
        """Each session's metrics on its own trace, then the case's (`case_metrics`).

        A session that ended in the run's error, or at a broken invariant, gets
        its metrics not applicable, as a run of one session would; so does every
        session after it, and every session when the error came after them all.
        """
        scored: dict[str, MetricResult] = {}
        failures: list[MetricFailure] = []
        for index, one in enumerate(self.parts.case.sessions):
            if index >= len(self.played):
                not_run = f"not applicable: session `{one.label(index)}` did not run"
                results = {
                    m.name: MetricResult(passed=False).not_applicable(not_run) for m in one.metrics
                }
            else:
                played = self.played[index]
                ending = played.conversation.termination
                metrics = self.parts.contracts.session(index).scored(one.metrics, ending)
                if (stopped := self._stopped(played, error)) is not None:
                    results = await score_stopped_trace(metrics, trace.sessions[index], stopped)
                else:
                    results, raised = await score_trace(metrics, trace.sessions[index])
                    failures.extend(raised)
            scored.update({f"{one.label(index)}/{name}": r for name, r in results.items()})
        return {**scored, **case_metrics[0]}, [*failures, *case_metrics[1]]

    def _stopped(self, played: _Played, error: EvalErrorInfo | None) -> str | None:
        """Why `played`'s metrics are not applicable (None: they are scored)."""
        if error is not None and (
            played.error is error or all(p.error is not error for p in self.played)
        ):
            return f"the run stopped with an error ({error.phase}) before it finished"
        stop = self.parts.watch.stop
        if stop is not None and played is self.played[-1]:
            return f"the run stopped at a broken invariant ({stop.invariant.name})"
        return None


def _session_case(case: EvalCase, one: CaseSession) -> EvalCase:
    """`case` as one session plays it: its opening, user agents, turn limit and metrics."""
    max_turns = case.terminate_when.max_turns if one.max_turns == "case" else one.max_turns
    return dataclasses.replace(
        case,
        first_message=one.first_message,
        user_agents=one.user_agents or case.user_agents,
        terminate_when=dataclasses.replace(case.terminate_when, max_turns=max_turns),
        metrics=list(one.metrics),
        invariants=(),
        sessions=(),
    )
