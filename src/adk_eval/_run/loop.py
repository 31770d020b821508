"""The simulation loop: run the system, route its yields to user agents, stop, score.

`run_eval` enters the run's sandbox scope (what the case's own code does
outside its mocks is seen, or refused in strict mode; its telemetry is held
back from the user's exporters) and builds the run's parts complete
(`parts.RunParts`: the system under test with its policy, the user agents, the
watch of the live invariants, the record, the meters). Then, with the model
calls that are not the agent's metered:

1. Seed the main session's artifacts and memory; start the user agents' session.
2. Send `first_message` (or the loop user agent's opening); run the system.
3. Classify how the run ended: an exception or error event -> ``error``;
   pending long-running calls -> tool yields; final text -> loop yield.
4. Loop yield: no loop user agent -> completed. Otherwise prompt it through the
   bridge, run it, apply its state changes, send its answer as the next message.
5. Tool yields: every pending call goes to the user agent of its tool (missing
   -> `EvalUserAgentError`). Distinct user agents answer in parallel; one user
   agent answers its calls one after another, in call order. All answers go
   back in one message; state changes are applied in call order first.
6. `state_matches` is checked after every system run and after state changes;
   `max_turns` before a user agent is asked again; `max_duration` cancels
   whatever is running (a hung model or tool call included), and an injected
   latency counts against it; a live invariant that breaks, or a strict
   sandbox's refusal, ends the conversation at once; the budget and the model
   calls are limited before each of the agent's model calls, and a run that
   ended over its budget is terminated.
7. Metrics and live invariants score the trace (`scoring`); status is ``error``
   if anything raised, else ``terminated`` if a limit hit, else ``passed`` iff
   every metric passed (`EvalCase.expect_error` turns the expected error into a
   passed metric).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
from google.adk.agents import BaseAgent
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from .._bridge import Bridge, YieldInfo, as_message
from .._case import EvalCase
from .._errors import CassetteMissError, EvalRunError, EvalSetupError, EvalUserAgentError
from .._result import ErrorPhase, EvalErrorInfo, EvalResult, run_status
from .._result._status import EXPECT_ERROR, expected_error
from .._sandbox._guard import watched
from .._sandbox._scope import CURRENT
from .._state import merge_changes, scoped_view
from .._termination import (
    MODEL_CALL_LIMIT_CODE,
    Termination,
    TerminationKind,
    compile_state_query,
    state_query_matches,
)
from .._trace import EvalTrace
from .._turns import PendingCall, RunEnd, classify_run, resume_message, tool_response
from ..metrics._invariants import StateNow
from ..metrics._types import MetricResult
from ..models._gateway._gate import Gateway, gating
from .parts import RunParts, scope_of
from .scoring import score_run
from .sessions import SessionRuns
from .users import UserAgentAnswer

if TYPE_CHECKING:
    from mongoquery import Query

__all__ = ["run_case", "run_eval"]


@dataclass(frozen=True)
class _Stop:
    """The conversation is over (with the error that ended it, if one did)."""

    error: EvalErrorInfo | None = None


_Next: TypeAlias = str | types.Content | _Stop
"""What a step of the loop leads to: the system's next message, or the end."""


def _failed(phase: ErrorPhase, error: BaseException) -> _Stop:
    return _Stop(EvalErrorInfo.from_exception(phase, error))


async def run_eval(case: EvalCase, *, seed: int | None = None, attempt: int = 0) -> EvalResult:
    """Runs one case and scores it.

    Args:
        case: The case.
        seed: The seed injected faults are drawn from (`ToolMock.with_faults`);
            None draws a random one. The result keeps it (`EvalResult.seed`), so
            ``run_eval(case, seed=result.seed)`` injects the same faults again.
        attempt: Which repetition this is (kept in the result; faults with their
            own seed differ by attempt).

    Its model calls follow the project's settings (``[tool.adk-eval.limits]``),
    paced on their own; `run_eval_suite` takes `ModelCalls`.

    Raises:
        EvalSetupError: If the case is misconfigured (nothing ran). Every other
            failure is recorded in the result (status ``error``, with its phase).
    """
    return await run_case(case, seed=seed, attempt=attempt, gateway=Gateway.alone())


async def run_case(
    case: EvalCase, *, seed: int | None, attempt: int, gateway: Gateway
) -> EvalResult:
    """`run_eval`, its model calls through `gateway` (a suite's: its settings and pacer)."""
    async with watched(scope_of(case, run_case.__code__)):
        started = time.perf_counter()
        parts = await RunParts.build(case, seed=seed, attempt=attempt, gateway=gateway)
        with gating(parts.gate):
            return await _Simulation(parts, started).run()


class _Simulation:
    """One run of one case: its parts, the count of turns, and how it ended."""

    def __init__(self, parts: RunParts, started: float) -> None:
        self.parts = parts
        self.case = parts.case
        self.system = parts.system
        self.users = parts.users
        self.watch = parts.watch
        self.bridge = self.case.bridge or Bridge()
        query = self.case.terminate_when.state_matches
        self.query: Query | None = compile_state_query(query) if query is not None else None
        self.session_id = parts.session.id
        self.started = started
        self.turns = 0
        self.termination: Termination | None = None
        self.sessions = SessionRuns(parts) if self.case.sessions else None

    async def run(self) -> EvalResult:
        try:
            await self.system.seed_artifacts(self.session_id, self.case.artifacts)
            await self.system.seed_memory(self.case.memory)
            await self.users.start()
            error = await self._converse_within_limit()
            if error is None and self.termination is None:  # the last calls crossed it
                self.termination = self.system.model_calls.overspent()
            if error is None and (unused := self.system.unused_names()) is not None:
                error = EvalErrorInfo.from_exception("setup", unused)
            trace = await self._trace()
            scored = self.parts.contracts.scored(self.case.metrics, self.termination)
            metrics, failures = await score_run(scored, self.watch, trace, error, self.parts.lacks)
            if self.sessions is not None:  # each session's own metrics first
                metrics, failures = await self.sessions.score(trace, error, (metrics, failures))
        finally:
            with anyio.CancelScope(shield=True):
                await self.system.close()
                await self.users.close()
            self.parts.gate.close()
            self.parts.clock.close()
        if error is None and failures:  # a metric raised: the run is an error of that metric
            first = failures[0]
            error = EvalErrorInfo("metric", str(first), type(first.error).__name__)
        if self.case.expect_error is not None:
            error, metrics[EXPECT_ERROR] = expected_error(self.case.expect_error, error)
        return self._result(trace, metrics, error)

    async def _converse_within_limit(self) -> EvalErrorInfo | None:
        limit = self.case.terminate_when.max_duration
        scope = anyio.move_on_after(limit) if limit is not None else anyio.CancelScope()
        if limit is not None:
            self._count_time_against(scope)
        error = None
        sandbox = CURRENT.get()
        if sandbox is not None:  # a strict sandbox's refusal ends the conversation
            sandbox.stop_with(scope.cancel)
        with scope:
            error = await self.converse()
        if sandbox is not None and sandbox.violation is not None:
            return EvalErrorInfo("system", sandbox.violation.line(), "EvalSandboxError")
        if scope.cancelled_caught:
            self.termination = Termination("max_duration", limit, self._elapsed())
        return error

    def _count_time_against(self, scope: anyio.CancelScope) -> None:
        """Moves `scope`'s deadline: earlier by injected latency; not while waiting for quota."""
        base, gate = scope.deadline, self.parts.gate
        paused = False

        def place() -> None:
            shift = gate.waited - self.parts.clock.injected
            scope.deadline = math.inf if paused else base + shift

        def pause(waiting: bool) -> None:
            nonlocal paused
            paused = waiting
            place()

        self.parts.clock.on_advance(lambda seconds: place())
        gate.on_pause(pause)

    def _elapsed(self) -> float:
        """Seconds the run counts: wall clock plus injected latency, less waits for quota."""
        wall = time.perf_counter() - self.started
        return wall + self.parts.clock.injected - self.parts.gate.waited

    async def _trace(self) -> EvalTrace:
        if self.sessions is not None:
            return await self.sessions.trace()
        events, state = await self.system.final(self.session_id)
        return self.parts.record.trace(
            events,
            scoped_view(state),
            initial_state=copy.deepcopy({k: dict(v) for k, v in self.case.initial_state.items()}),
            user_agent_events=await self.users.events(),
            case_name=self.case.name,
            artifacts=await self.system.artifacts(self.session_id),
        )

    def _result(
        self, trace: EvalTrace, metrics: dict[str, MetricResult], error: EvalErrorInfo | None
    ) -> EvalResult:
        return EvalResult.of_trace(
            trace,
            status=run_status(error, self.termination, metrics),
            metrics=metrics,
            duration_ms=(time.perf_counter() - self.started) * 1000,
            turns=self.turns,
            error=error,
            termination=self.termination,
            description=self.case.description,
            xfail=self.case.xfail,
            agent_name=self.system.root_agent.name,
            attempt=self.parts.attempt,
            seed=self.parts.seed,
            usage=tuple(self.parts.gate.meter.usage()),
            provider=self.parts.gate.stats(),
            warnings=(
                *self.system.warnings(),
                # a strict refusal that ended the run is its error, not a warning as well
                *(w for w in _sandbox_warnings() if not error or w != error.message),
            ),
        )

    def _stop(self, kind: TerminationKind, limit: Any, value: Any) -> _Stop:
        self.termination = Termination(kind, limit, value)
        return _Stop()

    # -- the loop ---------------------------------------------------------------

    async def converse(self) -> EvalErrorInfo | None:
        """Plays the case's conversation (each of its sessions in turn), no time limit set."""
        if self.sessions is not None:  # each session is a conversation of its own, in turn
            try:
                return await self.sessions.play(lambda parts: _Simulation(parts, self.started))
            finally:
                self.turns, self.termination = self.sessions.turns, self.sessions.termination
        step: _Next
        if self.case.first_message is not None:
            step = self.case.first_message
        else:
            opening = YieldInfo(type="loop", invocation_id="", awaiting_input=True)
            step = await self._answer_loop(opening, opening=True)
        while not isinstance(step, _Stop):
            step = await self._turn(step)
        return step.error

    async def _turn(self, message: str | types.Content) -> _Next:
        """Runs the system on `message` and asks whoever must answer how it ended."""
        end = await self._run_system(message)
        if isinstance(end, _Stop):
            return end
        if stop := await self._state_stop():
            return stop
        if not end.pending and self.case.user_agents.loop is None:
            return _Stop()
        max_turns = self.case.terminate_when.max_turns
        if max_turns is not None and self.turns >= max_turns:
            return self._stop("max_turns", max_turns, self.turns)
        if end.pending:
            return await self._answer_tools(end.pending)
        info = YieldInfo(
            type="loop",
            invocation_id=end.invocation_id,
            agent_name=end.author,
            awaiting_input=True,
            text=end.text,
        )
        return await self._answer_loop(info)

    async def _run_system(self, message: str | types.Content) -> RunEnd | _Stop:
        events: list[Event] = []
        try:
            async for event in self.system.run_async(
                session_id=self.session_id, new_message=message
            ):
                events.append(event)
        except Exception as error:  # (an agent reached that cannot run: a set-up error)
            setup = error is self.system.model_check.problem or isinstance(error, CassetteMissError)
            return _failed("setup" if setup else "system", error)
        last = events[-1] if events else None
        if self.watch.stop is not None:  # an invariant was broken: the run ends there
            return _Stop()
        if last is not None and last.error_code == MODEL_CALL_LIMIT_CODE:
            return self._stop(*self.system.model_calls.reason())
        if last is not None and last.error_code:
            return _failed(
                "system",
                EvalRunError(
                    f"agent `{last.author}` ended with error `{last.error_code}`: "
                    f"{last.error_message or '(no message)'}"
                ),
            )
        return classify_run(events, self.parts.interim)

    async def _state_stop(self) -> _Stop | None:
        if self.query is None:
            return None
        session = await self.system.get_session(self.session_id, events=False)
        if not state_query_matches(self.query, session.state):
            return None
        return self._stop(
            "state_matches", self.case.terminate_when.state_matches, scoped_view(session.state)
        )

    async def _main_session(self) -> Session:
        return await self.system.get_session(self.session_id)

    async def _ask(self, agent: BaseAgent, info: YieldInfo) -> tuple[UserAgentAnswer, Any]:
        """One user agent's answer to one yield, through the bridge."""
        prompt = await self.bridge.prompt(self._main_session, info)
        answer = await self.parts.contracts.answer(
            self.users, agent, prompt, info, self._main_session
        )
        return answer, await self.bridge.response(answer.output, self.users.session, info)

    async def _answer_loop(self, info: YieldInfo, *, opening: bool = False) -> _Next:
        agent = self.case.user_agents.loop
        assert agent is not None
        try:
            answer, response = await self._ask(agent, info)
        except (EvalUserAgentError, EvalSetupError) as error:
            return _failed("setup" if self.users.cannot_run(error) else "user_agent", error)
        if not opening and not answer.stop:  # a turn is an answer the system gets
            self.turns += 1
        if stop := await self._apply_changes([answer]):
            return stop
        return _Stop() if answer.stop else as_message(response)

    async def _answer_tools(self, pending: Sequence[PendingCall]) -> _Next:
        tool_agents = self.case.user_agents.tools
        missing = next((call for call in pending if call.name not in tool_agents), None)
        if missing is not None:
            return _failed(
                "user_agent", EvalUserAgentError(tool_name=missing.name, args=missing.args)
            )
        try:
            answers = await self.users.answer_calls(pending, self._ask)
        except (EvalUserAgentError, EvalSetupError) as error:
            return _failed("setup" if self.users.cannot_run(error) else "user_agent", error)
        ordered = [answers[call.call_id] for call in pending]
        if stop := await self._apply_changes([answer for answer, _ in ordered]):
            return stop
        if any(answer.stop for answer, _ in ordered):
            return _Stop()
        self.turns += 1
        return resume_message(
            [
                (call, tool_response(call.name, response))
                for call, (_, response) in zip(pending, ordered, strict=True)
            ]
        )

    async def _apply_changes(self, answers: Sequence[UserAgentAnswer]) -> _Stop | None:
        """Applies the answers' state changes to the main session (in order)."""
        changes = [change for answer in answers for change in answer.state_changes]
        if not changes:
            return None
        session = await self.system.get_session(self.session_id, events=False)
        try:
            delta = merge_changes(session.state, changes)
        except Exception as error:
            return _failed("user_agent", error)
        source = ", ".join(
            sorted({answer.agent_name for answer in answers if answer.state_changes})
        )
        await self.system.apply_state_delta(self.session_id, delta, source=source)
        if self.watch.see(StateNow({**session.state, **delta})) is not None:
            return _Stop()
        return await self._state_stop()


def _sandbox_warnings() -> tuple[str, ...]:
    scope = CURRENT.get()
    return scope.warnings() if scope is not None else ()
