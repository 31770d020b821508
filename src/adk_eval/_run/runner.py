"""`EvalRunner`: an ADK `Runner` with tool interception, on its own in-memory services.

It drives an agent by hand with every tool call checked::

    runner = EvalRunner(root_agent, tool_mocks={"send_email": ToolMock(...), "lookup": lookup})
    session = await runner.create_session({"patient": {"age": 55}})
    async for event in runner.run_async(session_id=session.id, new_message="hello"):
        ...

It is a thin front for a `System` (see `system`), which its first
`create_session` builds complete; `run_eval` builds its own, one per run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.workflow import Workflow
from google.genai import types

from .._seeds import new_seed
from .._termination import TerminateWhen
from .._tools._answers import MockCalls
from .._tools._clock import CaseClock
from .._tools._mocks import ToolMock
from .._tools._policy import ToolPolicy
from .._tools._record import RunRecord
from .._tools._watch import Watch
from .._turns import DEFAULT_USER_ID
from ..models._gateway._gate import Gateway
from .system import System, SystemSpec

__all__ = ["EvalRunner"]


class EvalRunner:
    """Runs an ADK agent with every tool call checked against `tool_mocks`.

    Args:
        agent: The agent, `Workflow` or App under test. An App's plugins run
            after the interception plugin; its other settings are kept.
        tool_mocks: Tool name -> `ToolMock` or the agent's own tool (passthrough).
        node_mocks: For a workflow: function node name -> replacement function,
            output value, or the node's own function (runs as itself); an
            unlisted function node stops the run before it runs.
        yield_tools: Names of long-running tools that a user agent will answer
            (checked against the agent's tools).
        clock: What `MockToolContext.now()` returns.
        seed: The seed injected faults are drawn from (None: a random one, kept
            as `seed`).
        simulate_unmocked: A simulated `ToolMock` that answers the tools nothing
            else covers, instead of stopping the run (an explicit opt-in).
        user_id: The ADK user id of the sessions.
        models: Models by agent name (``"*"``: every other agent), given to each
            agent at its model calls (see `EvalCase.models`).
        limits: The model-call limits over the runner's life: a `TerminateWhen`'s
            ``max_model_calls``, ``max_tokens`` and ``max_cost`` (None: ADK's own).
        remote_mocks: Remote agent (`RemoteA2aAgent`) name -> the agent itself,
            which then runs for real; a remote agent of the tree that is neither
            listed nor behind a mocked `AgentTool` makes every run raise
            `EvalToolError` before anything reaches it.
    """

    def __init__(
        self,
        agent: BaseAgent | App | Workflow,
        tool_mocks: Mapping[str, Any] | None = None,
        *,
        node_mocks: Mapping[str, Any] | None = None,
        yield_tools: tuple[str, ...] | frozenset[str] = (),
        clock: Callable[[], datetime] | None = None,
        seed: int | None = None,
        simulate_unmocked: ToolMock | None = None,
        user_id: str = DEFAULT_USER_ID,
        models: Mapping[str, Any] | None = None,
        limits: TerminateWhen | None = None,
        remote_mocks: Mapping[str, Any] | None = None,
    ) -> None:
        self._spec = SystemSpec(
            agent,
            dict(tool_mocks or {}),
            dict(node_mocks or {}),
            tuple(yield_tools),
            simulate_unmocked,
            user_id,
            limits.max_model_calls if limits is not None else None,
            limits.budget if limits is not None else None,
            models=models,
            remote_mocks=dict(remote_mocks or {}),
        )
        self.seed = seed if seed is not None else new_seed()
        """The seed injected faults are drawn from."""
        self._clock = CaseClock(clock)
        self._gateway = Gateway.alone()  # its model calls: the project's settings, one pacer
        self._started: System | None = None

    @property
    def user_id(self) -> str:
        """The ADK user id of the sessions."""
        return self._spec.user_id

    @property
    def system(self) -> System:
        """The running system (built by the first `create_session`)."""
        if self._started is None:
            raise RuntimeError("call EvalRunner.create_session() before running the agent")
        return self._started

    @property
    def policy(self) -> ToolPolicy:
        """The resolved tool policy (available after the first `create_session`)."""
        return self.system.policy

    @property
    def app_name(self) -> str:
        """The App's name (the sessions')."""
        return self.system.app_name

    @property
    def root_agent(self) -> BaseAgent | Workflow:
        """The root agent or Workflow that runs (a Workflow's code nodes replaced)."""
        return self.system.root_agent

    @property
    def adk_runner(self) -> Runner:
        """ADK's runner (plugins: the interception first, then the App's)."""
        return self.system.adk_runner

    @property
    def session_service(self) -> BaseSessionService:
        """The main sessions' service."""
        return self.system.services.sessions

    async def create_session(
        self, initial_state: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Session:
        """Creates a main session with the scoped `initial_state` (deep-copied).

        The first call also builds the runner: it resolves `tool_mocks` against
        the agent's tools.

        Raises:
            EvalSetupError: If a mock names no tool, a value is neither a mock nor
                the agent's tool, or the agent holds a construct that cannot be
                intercepted.
        """
        if self._started is not None:
            return await self._started.create_session(initial_state)
        calls = MockCalls(self.seed, 0, self._clock)
        system, session = await System.start(
            self._spec,
            initial_state,
            record=RunRecord(),
            watch=Watch(),
            mock_calls=calls,
            gates=self._gateway.call_gate,
        )
        self._started = system
        return session

    async def get_session(self, session_id: str, *, events: bool = True) -> Session:
        """Returns a fresh copy of a main session (`events`: False for its state alone)."""
        return await self.system.get_session(session_id, events=events)

    async def run_async(
        self, *, session_id: str, new_message: str | types.Content, run_config: Any = None
    ) -> AsyncGenerator[Event, None]:
        """Runs the agent on one message, yielding ADK's events.

        Raises:
            EvalToolError: The agent called a tool that is neither mocked nor
                provided (or a mock raised); ADK's wrapping is removed.
            EvalSetupError: An agent reached a model call with a model that cannot
                run here (no key); the run ended before the call.
        """
        system = self.system
        async for event in system.run_async(
            session_id=session_id, new_message=new_message, run_config=run_config
        ):
            yield event

    async def apply_state_delta(
        self, session_id: str, state_delta: Mapping[str, Any], *, source: str
    ) -> Event:
        """Appends a content-less event carrying `state_delta` (see `System.apply_state_delta`)."""
        return await self.system.apply_state_delta(session_id, state_delta, source=source)

    async def seed_artifacts(self, session_id: str, artifacts: Mapping[str, Any]) -> None:
        """Saves `artifacts` (by file name: a `Part`, text or bytes) in a main session."""
        await self.system.seed_artifacts(session_id, artifacts)

    async def seed_memory(self, memory: Sequence[Any]) -> None:
        """Fills the memory with past sessions and facts (`EvalCase.memory`), for this user."""
        await self.system.seed_memory(memory)

    async def artifacts(self, session_id: str) -> dict[str, types.Part]:
        """Every artifact of a main session, its latest version, by file name."""
        return await self.system.artifacts(session_id)

    async def close(self) -> None:
        """Closes the ADK runner (its plugins and toolsets), if one was built."""
        if self._started is not None:
            await self._started.close()
