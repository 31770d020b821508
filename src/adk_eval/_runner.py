"""`EvalRunner`: an ADK `Runner` with tool interception, on its own in-memory services.

It can be used alone, to drive an agent by hand with every tool call checked::

    runner = EvalRunner(root_agent, tool_mocks={"send_email": ToolMock(...), "lookup": lookup})
    session = await runner.create_session({"patient": {"age": 55}})
    async for event in runner.run_async(session_id=session.id, new_message="hello"):
        ...

`run_eval` builds one per case, so cases never share sessions or state.
"""

from __future__ import annotations

import asyncio
import difflib
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.events import Event, EventActions
from google.adk.memory import InMemoryMemoryService
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.workflow import Workflow
from google.genai import types

from ._errors import AdkEvalError, EvalSetupError
from ._model_check import MODEL_NOT_READY_CODE, ModelCheck
from ._quiet import quiet_harness_app
from ._sandbox._telemetry import run_config as quiet_run_config
from ._session_service import EvalSessionService, memory_events
from ._state import flatten_state
from ._termination import Budget, ModelCallLimit
from ._tools._context import as_part, with_text
from ._tools._mocks import ToolMock
from ._tools._nodes import with_node_mocks
from ._tools._plugin import TOOL_ERROR_CODE, InterceptionPlugin
from ._tools._policy import ToolPolicy
from ._turns import DEFAULT_USER_ID, STATE_SOURCE_KEY, agent_app, user_content
from .models import resolve_model
from .models._summarizer import case_compaction
from .models._usage import cost_of

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
        seed: The seed injected faults are drawn from (None: a random one,
            kept as ``plugin.seed``).
        attempt: Which repetition of a case this runner runs (see `Faults.seed`).
        simulate_unmocked: A simulated `ToolMock` that answers the tools nothing
            else covers, instead of stopping the run (an explicit opt-in).
        user_id: The ADK user id of the sessions.
        max_model_calls: Most model calls of the agent over the runner's life
            (None: no limit); see `TerminateWhen.max_model_calls`.
        budget: Tokens and money the run may spend (`TerminateWhen.max_tokens`,
            ``max_cost``); None: no limit.
        case: The case's name, for the message of an agent whose model cannot run.
        models: Models by agent name (``"*"``: every other agent), given to each
            agent at its model calls: the agents of the tree and those a tool
            builds and runs while the case runs (see `EvalCase.models`).
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
        attempt: int = 0,
        simulate_unmocked: ToolMock | None = None,
        user_id: str = DEFAULT_USER_ID,
        max_model_calls: int | None = None,
        budget: Budget | None = None,
        case: str | None = None,
        models: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(agent, BaseAgent | App | Workflow):
            raise EvalSetupError(
                f"EvalRunner needs an ADK agent, Workflow or App, got {type(agent).__name__}"
            )
        self._tool_mocks = dict(tool_mocks or {})
        self._yield_tools = tuple(yield_tools)
        self.user_id = user_id
        if simulate_unmocked is not None and (
            not isinstance(simulate_unmocked, ToolMock) or simulate_unmocked.simulator is None
        ):
            raise EvalSetupError(
                "simulate_unmocked must be ToolMock.simulated(...) (or True in an EvalCase), "
                f"got {simulate_unmocked!r}"
            )
        self._simulate_unmocked = simulate_unmocked
        self.plugin = InterceptionPlugin(None, clock=clock, seed=seed, attempt=attempt)
        self.model_calls = ModelCallLimit(max_model_calls, budget, cost_of)
        plugins: list[BasePlugin] = [self.plugin, self.model_calls]
        app = agent_app(agent, plugins)
        if not isinstance(agent, App):  # ADK's advice about it is not the user's to follow
            quiet_harness_app(app.name)
        if isinstance(app.root_agent, Workflow):  # its code nodes mocked, passed or refused
            graph = with_node_mocks(
                app.root_agent, node_mocks or {}, self.plugin.refuse_node, case=app.name
            )
            app = app.model_copy(update={"root_agent": graph})
        elif node_mocks:
            raise EvalSetupError("node_mocks apply to a Workflow; the agent under test is none")
        assert isinstance(app.root_agent, BaseAgent | Workflow)  # agent_app checks it
        self.root_agent: BaseAgent | Workflow = app.root_agent
        root_model = (models or {}).get(app.root_agent.name, (models or {}).get("*"))
        app, self.compaction = case_compaction(app, resolve_model, root_model)
        """The case's event summarizer, which notes failed summaries (None: no compaction)."""
        self.model_check = ModelCheck(self.root_agent, case=case, models=models)
        plugins = list(app.plugins)
        plugins.insert(plugins.index(self.model_calls), self.model_check)
        app = app.model_copy(update={"plugins": plugins})
        self.app_name: str = app.name
        self.session_service = EvalSessionService()
        self.memory_service = InMemoryMemoryService()
        """What the agents remember from earlier conversations (`seed_memory`)."""
        self.artifact_service = InMemoryArtifactService()
        """The artifacts of the main sessions (`seed_artifacts`, `artifacts`)."""
        self.adk_runner = Runner(
            app=app,
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            memory_service=self.memory_service,
        )
        self._policy: ToolPolicy | None = None
        self._quiet: tuple[Any] | None = None

    def _run_config(self) -> Any:
        """The `RunConfig` of this runner's invocations, decided at its first one.

        See `_sandbox._telemetry.run_config`; deciding once per case saves rebuilding it
        at every invocation.
        """
        if self._quiet is None:
            self._quiet = (quiet_run_config(),)
        return self._quiet[0]

    @property
    def policy(self) -> ToolPolicy:
        """The resolved tool policy (available after the first `create_session`)."""
        if self._policy is None:
            raise RuntimeError("EvalRunner.policy is resolved by create_session(); call it first")
        return self._policy

    async def create_session(
        self, initial_state: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Session:
        """Creates a main session with the scoped `initial_state` (deep-copied).

        The first call also resolves `tool_mocks` against the agent's tools.

        Raises:
            EvalSetupError: If a mock names no tool, a value is neither a mock nor
                the agent's tool, or the agent holds a construct that cannot be
                intercepted.
        """
        state = flatten_state(initial_state or {})
        session = await self.session_service.create_session(
            app_name=self.app_name, user_id=self.user_id, state=state
        )
        if self._policy is None:
            ctx = ReadonlyContext(
                InvocationContext(
                    session_service=self.session_service,
                    invocation_id=f"adk_eval-setup-{uuid.uuid4().hex[:8]}",
                    agent=self.root_agent,
                    session=session,
                )
            )
            self._policy = await ToolPolicy.build(
                self.root_agent,
                self._tool_mocks,
                yield_agents=self._yield_tools,
                ctx=ctx,
                simulate_unmocked=self._simulate_unmocked,
            )
            self.plugin.policy = self._policy
        self.plugin.watch_session(session.id)
        return session

    async def get_session(self, session_id: str, *, events: bool = True) -> Session:
        """Returns a fresh copy of a main session (`events`: False for its state alone)."""
        session = await self.session_service.get_session(
            app_name=self.app_name,
            user_id=self.user_id,
            session_id=session_id,
            config=None if events else GetSessionConfig(num_recent_events=0),
        )
        if session is None:
            raise KeyError(f"no session {session_id!r} in this EvalRunner")
        return session

    async def run_async(
        self,
        *,
        session_id: str,
        new_message: str | types.Content,
        run_config: Any = None,
    ) -> AsyncGenerator[Event, None]:
        """Runs the agent on one message, yielding ADK's events.

        Raises:
            EvalToolError: The agent called a tool that is neither mocked nor
                provided (or a mock raised); ADK's wrapping is removed.
            EvalSetupError: An agent reached a model call with a model that cannot
                run here (no key); the run ended before the call.
        """
        if self._policy is None:
            raise RuntimeError("call EvalRunner.create_session() before run_async()")
        stopped = asyncio.Event()  # the harness stops the run: ADK aborts it as asked
        try:
            async with aclosing(
                self.adk_runner.run_async(
                    user_id=self.user_id,
                    session_id=session_id,
                    new_message=user_content(new_message),
                    run_config=run_config if run_config is not None else self._run_config(),
                    abort_signal=stopped,
                )
            ) as events:
                async for event in events:
                    if event.error_code in (TOOL_ERROR_CODE, MODEL_NOT_READY_CODE):
                        stopped.set()
                        break
                    yield event
                    if self.plugin.violation is not None:  # stop before anything else runs
                        stopped.set()
                        break
        except Exception as error:
            mock_error = self.plugin.mock_error(error)
            if mock_error is not None:
                raise mock_error from error
            cause = error.__cause__
            if isinstance(error, RuntimeError) and isinstance(cause, AdkEvalError):
                raise cause from cause.__cause__
            raise
        violation = self.plugin.take_violation()
        if violation is not None:
            raise violation
        if self.model_check.problem is not None:
            raise self.model_check.problem

    def warnings(self) -> tuple[str, ...]:
        """What went wrong without stopping the run (a summary ADK gave up on)."""
        failures = Counter(self.compaction.failures if self.compaction is not None else [])
        return tuple(
            f"event compaction failed{f' {n} times' if n > 1 else ''} ({failure}); ADK went on "
            "with the whole history"
            for failure, n in failures.items()
        )

    def unused_names(self) -> EvalSetupError | None:
        """A `tool_mocks` or `models` name that the finished run shows was misspelt.

        Before the run, a name no agent of the tree has is kept for an agent (or a
        tool of one) that a tool builds at run time. If no agent of the run used
        it and it resembles a name the run saw, it was misspelt (None if none).
        """
        offered = {name for names in self.plugin.notes.offered.values() for name in names}
        unused = [
            ("tool_mocks", name, "a tool", sorted(self.policy.tree_tools | offered))
            for name in sorted(self.policy.unresolved - offered)
        ] + [
            (
                "models",
                key,
                "an agent",
                sorted(self.model_check.tree_names | self.model_check.called),
            )
            for key in self.model_check.unused_model_keys()
        ]
        for field_name, name, kind, seen in unused:
            close = difflib.get_close_matches(name, seen, n=1)
            if close:
                return EvalSetupError(
                    f"{field_name} names `{name}`, but no agent of this run had {kind} by "
                    f"that name, so it was never used. Did you mean `{close[0]}`? (A name no "
                    "agent of the tree has is kept for one built at run time.)"
                )
        return None

    async def seed_memory(self, memory: Sequence[Any]) -> None:
        """Fills the memory with past sessions and facts (`EvalCase.memory`), for this user."""
        for index, item in enumerate(memory):
            session_id, events = memory_events(item, index)
            await self.memory_service.add_events_to_memory(
                app_name=self.app_name, user_id=self.user_id, events=events, session_id=session_id
            )

    async def seed_artifacts(self, session_id: str, artifacts: Mapping[str, Any]) -> None:
        """Saves `artifacts` (by file name: a `Part`, text or bytes) in a main session."""
        for filename, artifact in artifacts.items():
            await self.artifact_service.save_artifact(
                app_name=self.app_name,
                user_id=self.user_id,
                session_id=session_id,
                filename=filename,
                artifact=as_part(artifact),
            )

    async def artifacts(self, session_id: str) -> dict[str, types.Part]:
        """Every artifact of a main session, its latest version, by file name."""
        service, app, user = self.artifact_service, self.app_name, self.user_id
        found: dict[str, types.Part] = {}
        for name in await service.list_artifact_keys(
            app_name=app, user_id=user, session_id=session_id
        ):
            part = await service.load_artifact(
                app_name=app, user_id=user, session_id=session_id, filename=name
            )
            if part is not None:
                found[name] = with_text(part, name)
        return found

    async def apply_state_delta(
        self, session_id: str, state_delta: Mapping[str, Any], *, source: str
    ) -> Event:
        """Appends a content-less event carrying `state_delta` to a main session.

        The model never sees it; tools and instruction templates see the new
        state. It is authored by ``user`` (the simulated world changed), which
        keeps ADK's choice of the agent to resume unchanged.
        """
        session = await self.get_session(session_id)
        event = Event(
            author="user",
            invocation_id=f"adk_eval-{uuid.uuid4().hex[:12]}",
            actions=EventActions(state_delta=dict(state_delta)),
            custom_metadata={STATE_SOURCE_KEY: source},
        )
        await self.session_service.append_event(session, event)
        return event

    async def close(self) -> None:
        """Closes the ADK runner (its plugins and toolsets)."""
        await self.adk_runner.close()
