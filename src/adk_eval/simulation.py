"""The simulation loop: run the system, route its yields to user agents, stop, score.

1. Fresh main session (scoped initial state) and a fresh shared user-agent session.
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
   whatever is running (a hung model or tool call included).
7. Metrics score the trace; status is ``error`` if anything raised, else
   ``terminated`` if a limit hit, else ``passed`` iff every metric passed.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
from google.adk.agents import BaseAgent
from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types
from mongoquery import Query

from .bridge import Bridge, YieldInfo
from .case import EvalCase
from .errors import EvalRunError, EvalUserAgentError
from .metrics.scoring import MetricFailure, score_trace
from .metrics.types import MetricResult
from .result import ErrorPhase, EvalErrorInfo, EvalResult, EvalStatus, TokenUsage
from .runner import EvalRunner
from .state import merge_changes, scoped_view
from .termination import (
    MODEL_CALL_LIMIT_CODE,
    Termination,
    compile_state_query,
    state_query_matches,
)
from .trace import EvalTrace
from .user_runner import UserAgentAnswer, UserAgentRunner

__all__ = ["run_eval"]


class _Failed(Exception):
    """Carries an error out of the loop with the phase it happened in."""

    def __init__(self, phase: ErrorPhase, error: BaseException) -> None:
        super().__init__(str(error))
        self.phase = phase
        self.error = error


class _Finished(Exception):
    """The conversation ended (completed, stopped by a user agent, or a stop condition)."""


@dataclass(frozen=True)
class _PendingCall:
    call_id: str
    name: str
    args: dict[str, Any]
    invocation_id: str
    author: str


@dataclass(frozen=True)
class _SystemTurn:
    events: Sequence[Event]
    pending: Sequence[_PendingCall]
    text: str
    author: str | None
    invocation_id: str


async def run_eval(case: EvalCase) -> EvalResult:
    """Runs one case and scores it.

    Raises:
        EvalSetupError: If the case is misconfigured (nothing ran). Every other
            failure is recorded in the result (status ``error``, with its phase).
    """
    return await _Simulation(case).run()


class _Simulation:
    def __init__(self, case: EvalCase) -> None:
        self.case = case
        self.bridge = case.bridge or Bridge()
        limits = case.terminate_when
        self.query: Query | None = (
            compile_state_query(limits.state_matches) if limits.state_matches is not None else None
        )
        self.turns = 0
        self.termination: Termination | None = None
        self.started = 0.0

    async def run(self) -> EvalResult:
        case = self.case
        self.started = time.perf_counter()
        system = EvalRunner(
            case.agent,
            case.tool_mocks,
            yield_tools=tuple(case.user_agents.tools),
            clock=case.resolve_clock(),
            max_model_calls=case.terminate_when.max_model_calls,
        )
        users = UserAgentRunner(case.user_agents)
        error: EvalErrorInfo | None = None
        try:
            session = await system.create_session(case.initial_state)
            await users.start()
            limit = case.terminate_when.max_duration
            scope = anyio.move_on_after(limit) if limit is not None else anyio.CancelScope()
            with scope:
                try:
                    await self._converse(system, session.id, users)
                except _Finished:
                    pass
                except _Failed as failed:
                    error = EvalErrorInfo.from_exception(failed.phase, failed.error)
            if scope.cancelled_caught:
                self.termination = Termination(
                    "max_duration", limit, time.perf_counter() - self.started
                )
            final = await system.get_session(session.id)
            user_events = await users.events()
            trace = EvalTrace(
                events=tuple(final.events),
                final_state=scoped_view(final.state),
                initial_state=copy.deepcopy({k: dict(v) for k, v in case.initial_state.items()}),
                user_agent_events=tuple(user_events),
                case_name=case.name,
            )
            metrics, failures = await score_trace(case.metrics, trace)
            metric_error = _metric_error(failures[0]) if failures else None
        finally:
            with anyio.CancelScope(shield=True):
                await system.close()
                await users.close()
        error = error or metric_error
        return EvalResult(
            name=case.name,
            status=self._status(error, metrics),
            metrics=metrics,
            events=trace.events,
            duration_ms=(time.perf_counter() - self.started) * 1000,
            turns=self.turns,
            token_usage=TokenUsage.from_events(trace.events),
            error=error,
            termination_reason=self.termination.kind if self.termination else None,
            termination=self.termination,
            final_state=trace.final_state,
            user_agent_events=trace.user_agent_events,
            user_agent_token_usage=TokenUsage.from_events(user_events),
            description=case.description,
            xfail=case.xfail,
            initial_state=trace.initial_state,
        )

    def _status(self, error: EvalErrorInfo | None, metrics: dict[str, MetricResult]) -> EvalStatus:
        if error is not None:
            return "error"
        if self.termination is not None and self.termination.kind != "state_matches":
            return "terminated"
        return "passed" if all(result.passed for result in metrics.values()) else "failed"

    # -- the loop ---------------------------------------------------------------

    async def _converse(self, system: EvalRunner, session_id: str, users: UserAgentRunner) -> None:
        case = self.case
        message: str | types.Content
        if case.first_message is not None:
            message = case.first_message
        else:
            opening = YieldInfo(type="loop", invocation_id="", awaiting_input=True)
            message = await self._answer_loop(system, session_id, users, opening, opening=True)
        while True:
            turn = await self._run_system(system, session_id, message)
            await self._check_state(system, session_id)
            if not turn.pending and case.user_agents.loop is None:
                raise _Finished
            max_turns = case.terminate_when.max_turns
            if max_turns is not None and self.turns >= max_turns:
                self.termination = Termination("max_turns", max_turns, self.turns)
                raise _Finished
            if turn.pending:
                message = await self._answer_tools(system, session_id, users, turn)
            else:
                info = YieldInfo(
                    type="loop",
                    invocation_id=turn.invocation_id,
                    agent_name=turn.author,
                    awaiting_input=True,
                    text=turn.text,
                )
                message = await self._answer_loop(system, session_id, users, info)

    async def _run_system(
        self, system: EvalRunner, session_id: str, message: str | types.Content
    ) -> _SystemTurn:
        events: list[Event] = []
        try:
            async for event in system.run_async(session_id=session_id, new_message=message):
                events.append(event)
        except Exception as error:
            raise _Failed("system", error) from error
        if events and events[-1].error_code == MODEL_CALL_LIMIT_CODE:
            limit = self.case.terminate_when.max_model_calls
            self.termination = Termination("max_model_calls", limit, system.model_calls.calls)
            raise _Finished
        if events and events[-1].error_code:
            last = events[-1]
            raise _Failed(
                "system",
                EvalRunError(
                    f"agent `{last.author}` ended with error `{last.error_code}`: "
                    f"{last.error_message or '(no message)'}"
                ),
            )
        return _classify(events)

    async def _check_state(self, system: EvalRunner, session_id: str) -> None:
        if self.query is None:
            return
        session = await system.get_session(session_id)
        if state_query_matches(self.query, session.state):
            self.termination = Termination(
                "state_matches", self.case.terminate_when.state_matches, scoped_view(session.state)
            )
            raise _Finished

    async def _answer_loop(
        self,
        system: EvalRunner,
        session_id: str,
        users: UserAgentRunner,
        info: YieldInfo,
        *,
        opening: bool = False,
    ) -> str | types.Content:
        agent = self.case.user_agents.loop
        assert agent is not None
        try:
            prompt = await self.bridge.prompt(partial(system.get_session, session_id), info)
            answer = await users.answer(agent, prompt, info)
            response = await self.bridge.response(answer.output, users.session, info)
        except EvalUserAgentError as error:
            raise _Failed("user_agent", error) from error
        except Exception as error:
            raise _Failed("user_agent", _bridge_error(error)) from error
        if not opening:
            self.turns += 1
        await self._apply_changes(system, session_id, [answer])
        if answer.stop:
            raise _Finished
        return _as_message(response)

    async def _answer_tools(
        self, system: EvalRunner, session_id: str, users: UserAgentRunner, turn: _SystemTurn
    ) -> types.Content:
        tool_agents = self.case.user_agents.tools
        for call in turn.pending:
            if call.name not in tool_agents:
                raise _Failed("user_agent", EvalUserAgentError(tool_name=call.name, args=call.args))
        main: list[Session] = []  # fetched once, and only for a custom format_prompt

        async def main_session() -> Session:
            if not main:
                main.append(await system.get_session(session_id))
            return main[0]

        answers: dict[str, tuple[UserAgentAnswer, Any]] = {}

        async def answer_in_order(agent: BaseAgent, calls: list[_PendingCall]) -> None:
            for call in calls:
                info = YieldInfo(
                    type="tool",
                    invocation_id=call.invocation_id,
                    agent_name=call.author,
                    tool_name=call.name,
                    call_id=call.call_id,
                    args=call.args,
                )
                prompt = await self.bridge.prompt(main_session, info)
                answer = await users.answer(agent, prompt, info)
                response = await self.bridge.response(answer.output, users.session, info)
                answers[call.call_id] = (answer, _tool_response(call.name, response))

        by_agent: dict[int, tuple[BaseAgent, list[_PendingCall]]] = {}
        for call in turn.pending:
            agent = tool_agents[call.name]
            by_agent.setdefault(id(agent), (agent, []))[1].append(call)
        failures: list[BaseException] = []
        if len(by_agent) == 1:  # one agent answers in order: no task group needed
            try:
                await answer_in_order(*next(iter(by_agent.values())))
            except Exception as error:
                failures.append(_bridge_error(error))
        else:
            async with anyio.create_task_group() as group:

                async def answer_or_cancel(agent: BaseAgent, calls: list[_PendingCall]) -> None:
                    try:
                        await answer_in_order(agent, calls)
                    except Exception as error:  # the first failure cancels the other answers
                        failures.append(_bridge_error(error))
                        group.cancel_scope.cancel()

                for agent, calls in by_agent.values():
                    group.start_soon(answer_or_cancel, agent, calls)
        if failures:
            raise _Failed("user_agent", failures[0])
        self.turns += 1
        ordered = [answers[call.call_id] for call in turn.pending]
        await self._apply_changes(system, session_id, [answer for answer, _ in ordered])
        if any(answer.stop for answer, _ in ordered):
            raise _Finished
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.call_id, name=call.name, response=response
                )
            )
            for call, (_, response) in zip(turn.pending, ordered, strict=True)
        ]
        return types.Content(role="user", parts=parts)

    async def _apply_changes(
        self, system: EvalRunner, session_id: str, answers: Sequence[UserAgentAnswer]
    ) -> None:
        changes = [change for answer in answers for change in answer.state_changes]
        if not changes:
            return
        session = await system.get_session(session_id)
        try:
            delta = merge_changes(session.state, changes)
        except Exception as error:
            raise _Failed("user_agent", error) from error
        source = ", ".join(
            sorted({answer.agent_name for answer in answers if answer.state_changes})
        )
        await system.apply_state_delta(session_id, delta, source=source)
        await self._check_state(system, session_id)


def _classify(events: Sequence[Event]) -> _SystemTurn:
    answered = {fr.id for event in events for fr in event.get_function_responses() if fr.id}
    pending: list[_PendingCall] = []
    for event in events:
        waiting = event.long_running_tool_ids or set()
        for call in event.get_function_calls():
            if call.id and call.id in waiting and call.id not in answered:
                pending.append(
                    _PendingCall(
                        call_id=call.id,
                        name=call.name or "",
                        args=dict(call.args or {}),
                        invocation_id=event.invocation_id,
                        author=event.author,
                    )
                )
    text, author, invocation_id = "", None, events[-1].invocation_id if events else ""
    for event in reversed(events):
        if event.author == "user" or event.content is None or not event.content.parts:
            continue
        parts_text = "".join(p.text for p in event.content.parts if p.text and not p.thought)
        if parts_text:
            text, author, invocation_id = parts_text, event.author, event.invocation_id
            break
    return _SystemTurn(
        events=events, pending=pending, text=text, author=author, invocation_id=invocation_id
    )


def _tool_response(tool_name: str, response: Any) -> dict[str, Any]:
    if tool_name == "adk_request_confirmation" and isinstance(response, bool):
        return {"confirmed": response}
    if isinstance(response, dict):
        return response
    return {"result": response}


def _as_message(response: Any) -> str | types.Content:
    if isinstance(response, str | types.Content):
        return response
    return json.dumps(response, ensure_ascii=False, default=repr)


def _bridge_error(error: BaseException) -> BaseException:
    if isinstance(error, EvalUserAgentError):
        return error
    return EvalUserAgentError(f"the bridge raised {type(error).__name__}: {error}")


def _metric_error(failure: MetricFailure) -> EvalErrorInfo:
    return EvalErrorInfo(
        phase="metric",
        message=str(failure),
        type=type(failure.error).__name__,
        exception=failure.error,
    )
