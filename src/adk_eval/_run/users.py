"""Runs the user agents of one case on their shared user-agent session."""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import anyio
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import new_invocation_context_id
from google.adk.apps import App
from google.adk.events import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import Session
from pydantic import BaseModel, ValidationError

from .._bridge import StateChangeCollector, YieldInfo, collect_state_changes, stop_collecting
from .._case import UserAgents
from .._errors import EvalSetupError, EvalUserAgentError
from .._model_check import ModelCheck
from .._sandbox._telemetry import run_config as quiet_run_config
from .._session_service import EvalSessionService
from .._turns import DEFAULT_USER_ID, PendingCall, event_text, user_content
from .._user_agents import (
    CURRENT_YIELD,
    HumanUserAgent,
    ScriptedUserAgent,
    answers_directly,
    direct_reply,
    is_stop_signal,
)
from ..models._gateway._plugin import GatewayPlugin

__all__ = ["UserAgentAnswer", "UserAgentRunner"]

USER_APP_NAME = "adk_eval_user_agents"

_IN_USER_AGENT_RUN: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "adk_eval_in_user_agent_run", default=False
)


class _SharedSessionNoise(logging.Filter):
    """Drops ADK's "Event from an unknown agent" warning inside user-agent runs only.

    User agents share one session, so each one's runner meets the others' events
    and ADK warns about every one of them. Outside adk_eval's user-agent runs
    (checked through a context variable) the warning is left alone.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (
            _IN_USER_AGENT_RUN.get() and str(record.msg).startswith("Event from an unknown agent")
        )


def _install_noise_filter() -> None:
    logger = logging.getLogger("google_adk.google.adk.agents._agent_router")
    if not any(isinstance(f, _SharedSessionNoise) for f in logger.filters):
        logger.addFilter(_SharedSessionNoise())


_install_noise_filter()


@dataclass(frozen=True)
class UserAgentAnswer:
    """What one user agent said in answer to one prompt.

    Attributes:
        agent_name: The user agent.
        output: Its structured output if it has one, else its last text.
        text: Its last text.
        stop: Whether it asked to end the conversation.
        state_changes: `with_state_change` changes from its tool results, in order.
    """

    agent_name: str
    output: Any
    text: str
    stop: bool
    state_changes: list[Mapping[str, Mapping[str, Any]]] = field(default_factory=list)


class UserAgentRunner:
    """Runs the user agents of a case on one shared session.

    One ADK runner per distinct user agent, except scripted and human ones,
    whose answers are appended to the session directly (the same events).
    `plugins` run in each of those runners too (the run's usage counter).
    """

    def __init__(
        self,
        user_agents: UserAgents,
        *,
        case: str | None = None,
        plugins: Sequence[BasePlugin] = (),
    ) -> None:
        agents: list[BaseAgent] = []
        for agent in [user_agents.loop, *user_agents.tools.values()]:
            if agent is not None and not any(agent is known for known in agents):
                agents.append(agent)
        names: dict[str, BaseAgent] = {}
        for agent in agents:
            if agent.name in names:
                raise EvalSetupError(
                    f"two different user agents are named `{agent.name}`; they share one "
                    "session, so give each a distinct name"
                )
            names[agent.name] = agent
        self.agents: tuple[BaseAgent, ...] = tuple(agents)
        """Every distinct user agent of the case."""
        self.user_agents = user_agents
        self.session_service = EvalSessionService()
        # Scripted and human user agents answer without a runner (see _answer_directly).
        # Each checks its agent's model at its first model call (see `ModelCheck`), and
        # its model calls go through the run's gateway (`GatewayPlugin`, last).
        self._checks = {id(agent): ModelCheck(agent, case=case) for agent in agents}
        self._gateways = {
            id(agent): GatewayPlugin(f"user:{agent.name}", self._checks[id(agent)].model_for)
            for agent in agents
        }
        self._runners = {
            id(agent): Runner(
                app=App(
                    name=USER_APP_NAME,
                    root_agent=agent,
                    plugins=[
                        StateChangeCollector(),
                        self._checks[id(agent)],
                        *plugins,
                        self._gateways[id(agent)],
                    ],
                ),
                session_service=self.session_service,
            )
            for agent in agents
            if not answers_directly(agent)
        }
        self._session_id: str | None = None
        # The shared session as direct answers left it (None: fetch a fresh copy).
        self._direct_session: Session | None = None

    def cannot_run(self, error: BaseException) -> bool:
        """Whether `error` is that of a user agent whose model cannot run here (no key)."""
        return any(error is check.problem for check in self._checks.values())

    async def start(self) -> None:
        """Creates the shared user-agent session."""
        session = await self.session_service.create_session(
            app_name=USER_APP_NAME, user_id=DEFAULT_USER_ID
        )
        self._session_id = session.id

    async def session(self) -> Session:
        """A fresh copy of the shared session."""
        assert self._session_id is not None, "call start() first"
        session = await self.session_service.get_session(
            app_name=USER_APP_NAME, user_id=DEFAULT_USER_ID, session_id=self._session_id
        )
        assert session is not None
        return session

    async def events(self) -> Sequence[Event]:
        """The shared session's events (empty before `start`)."""
        if self._session_id is None:
            return ()
        if self._direct_session is not None:  # current: every answer since was direct
            return tuple(self._direct_session.events)
        return tuple((await self.session()).events)

    async def answer_calls(
        self,
        pending: Sequence[PendingCall],
        ask: Callable[[BaseAgent, YieldInfo], Awaitable[tuple[UserAgentAnswer, Any]]],
    ) -> dict[str, tuple[UserAgentAnswer, Any]]:
        """Every pending call's answer (`ask`): user agents in parallel, each in call order.

        Raises:
            EvalUserAgentError: The first failure (it cancels the other answers).
            EvalSetupError: A user agent cannot run (its model has no key).
        """
        by_agent: dict[int, tuple[BaseAgent, list[PendingCall]]] = {}
        for call in pending:
            agent = self.user_agents.tools[call.name]
            by_agent.setdefault(id(agent), (agent, []))[1].append(call)
        answers: dict[str, tuple[UserAgentAnswer, Any]] = {}

        async def answer_in_order(agent: BaseAgent, calls: list[PendingCall]) -> None:
            for call in calls:
                answers[call.call_id] = await ask(agent, YieldInfo.of_call(call))

        if len(by_agent) == 1:  # one agent answers in order: no task group needed
            await answer_in_order(*next(iter(by_agent.values())))
            return answers
        failures: list[EvalUserAgentError | EvalSetupError] = []
        async with anyio.create_task_group() as group:

            async def answer_or_cancel(agent: BaseAgent, calls: list[PendingCall]) -> None:
                try:
                    await answer_in_order(agent, calls)
                except (EvalUserAgentError, EvalSetupError) as error:
                    failures.append(error)
                    group.cancel_scope.cancel()

            for agent, calls in by_agent.values():
                group.start_soon(answer_or_cancel, agent, calls)
        if failures:
            raise failures[0]
        return answers

    async def answer(self, agent: BaseAgent, prompt: str, yield_info: YieldInfo) -> UserAgentAnswer:
        """Runs `agent` on `prompt` and returns its answer and state changes.

        Raises:
            EvalUserAgentError: The agent raised, or its output does not fit its
                `output_schema`.
            EvalSetupError: The agent's model cannot run here (no key); it was not called.
        """
        assert self._session_id is not None, "call start() first"
        sink, sink_token = collect_state_changes()
        yield_token = CURRENT_YIELD.set(yield_info)
        try:
            runner = self._runners.get(id(agent))
            if runner is None:  # a scripted or human agent (see __init__)
                assert isinstance(agent, ScriptedUserAgent | HumanUserAgent)
                events = await self._answer_directly(agent, prompt)
            else:
                events = await self._run(runner, prompt, self._gateways[id(agent)])
                problem = self._checks[id(agent)].problem
                if problem is not None:
                    raise problem
        except (EvalUserAgentError, EvalSetupError):
            raise
        except Exception as error:
            cause = error.__cause__ if isinstance(error.__cause__, EvalUserAgentError) else None
            if cause is not None:
                raise cause from None
            raise EvalUserAgentError(
                f"User agent `{agent.name}` failed while answering {_what(yield_info)}: "
                f"{type(error).__name__}: {error}"
            ) from error
        finally:
            CURRENT_YIELD.reset(yield_token)
            stop_collecting(sink_token)
        output, text = _output_of(agent, events, yield_info)
        return UserAgentAnswer(
            agent_name=agent.name,
            output=output,
            text=text,
            stop=is_stop_signal(text),
            state_changes=list(sink),
        )

    async def _run(self, runner: Runner, prompt: str, gateway: GatewayPlugin) -> list[Event]:
        """One invocation of a user agent's runner on the shared session.

        A model call's failure is raised as the call raised it (see `GatewayPlugin`).
        """
        assert self._session_id is not None
        self._direct_session = None  # the runner appends to its own copy
        quiet_token = _IN_USER_AGENT_RUN.set(True)
        events: list[Event] = []
        try:
            async with aclosing(
                runner.run_async(
                    user_id=DEFAULT_USER_ID,
                    session_id=self._session_id,
                    new_message=user_content(prompt),
                    run_config=quiet_run_config(),
                )
            ) as stream:
                async for event in stream:
                    events.append(event)
        except RuntimeError as error:
            raised = gateway.unwrapped(error)
            if raised is error:
                raise
            raise raised from raised.__cause__
        finally:
            _IN_USER_AGENT_RUN.reset(quiet_token)
            self._direct_session = None
        return events

    async def _answer_directly(
        self, agent: ScriptedUserAgent | HumanUserAgent, prompt: str
    ) -> list[Event]:
        """Appends the prompt and the agent's reply to the shared session, as a run would.

        A scripted or human user agent's answer is one event computed from the
        session; building it here skips a runner invocation and its session copy
        (the same events, authors and state deltas land in the session).
        """
        if self._direct_session is None:
            self._direct_session = await self.session()
        session = self._direct_session
        invocation_id = new_invocation_context_id()
        await self.session_service.append_event(
            session,
            Event(invocation_id=invocation_id, author="user", content=user_content(prompt)),
        )
        event = await direct_reply(agent, session, prompt, invocation_id)
        await self.session_service.append_event(session, event)
        return [event]

    async def close(self) -> None:
        """Closes every runner."""
        for runner in self._runners.values():
            await runner.close()


def _what(info: YieldInfo) -> str:
    if info.type == "tool":
        return f"tool `{info.tool_name}` (call {info.call_id})"
    return "a loop yield"


def _output_of(agent: BaseAgent, events: Sequence[Event], info: YieldInfo) -> tuple[Any, str]:
    """Structured output if the agent produced one, else its last text."""
    for event in reversed(events):
        if event.author == "user" or event.partial:
            continue
        if event.output is not None:
            return event.output, event_text(event)
        text = event_text(event)
        if not text:
            continue
        schema = agent.output_schema if isinstance(agent, LlmAgent) else None
        if schema is not None and not is_stop_signal(text):
            return _parse_structured(agent.name, schema, text, info), text
        return text, text
    return "", ""


def _parse_structured(agent_name: str, schema: Any, text: str, info: YieldInfo) -> Any:
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_validate_json(text).model_dump(mode="json")
        return json.loads(text)
    except (ValidationError, ValueError) as error:
        raise EvalUserAgentError(
            f"User agent `{agent_name}` has an output_schema but its answer to "
            f"{_what(info)} does not fit it: {error}\nAnswer was: {text!r}"
        ) from error
