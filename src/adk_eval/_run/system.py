"""`System`: the agent under test, ready to run, built complete in one place.

`System.start` builds it in the order its parts depend on one another: the App
(a Workflow's code nodes replaced, the case's summarizer), fresh in-memory
services and the first main session, the tool policy resolved against the tree
in that session (a toolset lists its tools in a session's context), then the
interception plugin with that policy, the model check and the model-call
limits, and the ADK `Runner` with them first and the gateway last (it answers
the agents' model calls); the runners of `RemoteMock.local` agents get the same
plugins (handed to their stand-ins' holder). Nothing else is assigned afterwards:
the interception notes to the `RunRecord` it was given; the run reads it there.
"""

from __future__ import annotations

import asyncio
import difflib
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.events import Event, EventActions
from google.adk.memory import BaseMemoryService
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.workflow import Workflow
from google.genai import types

from .. import _session_service
from .._errors import EvalSetupError
from .._model_check import MODEL_NOT_READY_CODE, ModelCheck
from .._quiet import quiet_adk_logs
from .._sandbox._telemetry import run_config as quiet_run_config
from .._session_service import EvalSessionService, memory_events
from .._state import flatten_state
from .._termination import Budget, ModelCallLimit, UsageTap
from .._tools._a2a._harness import HarnessPlugins
from .._tools._answers import MockCalls
from .._tools._bodies import TOOL_ERROR_CODE
from .._tools._context import as_part, with_text
from .._tools._deployed import UNOBSERVED_LINE, is_deployed
from .._tools._mocks import ToolMock
from .._tools._plugin import InterceptionPlugin, outside_tool_calls
from .._tools._policy import ToolPolicy
from .._tools._record import RunRecord
from .._tools._remote import with_remote_mocks
from .._tools._tree import setup_context
from .._tools._watch import Watch
from .._turns import DEFAULT_USER_ID, STATE_SOURCE_KEY, agent_app, user_content
from ..models._gateway._gate import RunGate, current_gate
from ..models._gateway._plugin import GatewayPlugin
from ..models._gateway._usage import cost_of
from ..models._roles._roles import resolve_model
from ..models._roles._summarizer import CompactionWatch, case_compaction

__all__ = ["System", "SystemSpec"]


@dataclass(frozen=True)
class SystemSpec:
    """What to build: the agent under test and how its calls are answered and limited.

    Attributes:
        agent: The agent, `Workflow` or App under test.
        tool_mocks: Tool name -> `ToolMock` or the agent's own tool (passthrough).
        node_mocks: For a workflow: function node name -> replacement.
        remote_mocks: Remote agent name -> the remote agent itself (it runs for real).
        yield_tools: Long-running tools a user agent answers.
        simulate_unmocked: A simulated mock for the tools nothing else covers.
        user_id: The ADK user id of the sessions.
        max_model_calls: Most model calls of the agent (None: no limit).
        budget: Tokens and money the run may spend (None: no limit).
        case: The case's name, for messages.
        models: Models by agent name (``"*"``: the rest).
        memory_service: Which of ADK's memory services the runner gets.
    """

    agent: BaseAgent | App | Workflow
    tool_mocks: Mapping[str, Any] = field(default_factory=dict)
    node_mocks: Mapping[str, Any] = field(default_factory=dict)
    yield_tools: tuple[str, ...] = ()
    simulate_unmocked: ToolMock | None = None
    user_id: str = DEFAULT_USER_ID
    max_model_calls: int | None = None
    budget: Budget | None = None
    case: str | None = None
    models: Mapping[str, Any] | None = None
    memory_service: _session_service.MemoryServiceKind = "in_memory"
    remote_mocks: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.agent, BaseAgent | App | Workflow):
            raise EvalSetupError(
                f"EvalRunner needs an ADK agent, Workflow or App, got {type(self.agent).__name__}"
            )
        unmocked = self.simulate_unmocked
        if unmocked is not None and (not isinstance(unmocked, ToolMock) or not unmocked.simulator):
            raise EvalSetupError(
                "simulate_unmocked must be ToolMock.simulated(...) (or True in an EvalCase), "
                f"got {unmocked!r}"
            )


@dataclass(frozen=True)
class _Services:
    sessions: BaseSessionService = field(default_factory=lambda: EvalSessionService())
    memory: BaseMemoryService = field(default_factory=_session_service.new_memory_service)
    artifacts: InMemoryArtifactService = field(default_factory=InMemoryArtifactService)


@dataclass(frozen=True)
class System:
    """The agent under test on an ADK `Runner`, its tool calls intercepted (see module doc).

    Attributes:
        spec: What it was built from.
        app_name: The App's name (the sessions').
        root_agent: The root agent or Workflow that runs (node mocks in place).
        policy: How each tool call is answered.
        record: What the interception notes about the run.
        model_check: The check of each agent's model at its first call.
        model_calls: The model-call and budget limits.
        gateway: Where the agents' model calls are answered.
        compaction: The case's event summarizer (None: no compaction).
        adk_runner: ADK's runner.
    """

    spec: SystemSpec
    app_name: str
    root_agent: BaseAgent | Workflow
    policy: ToolPolicy
    record: RunRecord
    model_check: ModelCheck
    model_calls: ModelCallLimit
    gateway: GatewayPlugin
    compaction: CompactionWatch | None
    adk_runner: Runner
    services: _Services = field(repr=False)
    run_config: Any = field(default_factory=quiet_run_config, repr=False)

    @classmethod
    async def start(
        cls,
        spec: SystemSpec,
        initial_state: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        record: RunRecord,
        watch: Watch,
        mock_calls: MockCalls,
        spenders: Sequence[UsageTap | Any] = (),
        gates: Callable[[], RunGate] = current_gate,
    ) -> tuple[System, Session]:
        """Builds the system and its first main session (with the scoped `initial_state`).

        `spenders` are the run's other model-call counters (user agents, judges):
        the budget counts what they spent too; `gates` gives each model call a gate.

        Raises:
            EvalSetupError: A mock names no tool, a value is neither a mock nor the
                agent's tool, or the agent holds a construct that cannot be intercepted.
        """
        app, root, compaction = _app(spec, record, local := HarnessPlugins())  # filled below
        services = _Services(memory=_session_service.new_memory_service(spec.memory_service))
        session = await services.sessions.create_session(
            app_name=app.name, user_id=spec.user_id, state=flatten_state(initial_state or {})
        )
        policy = await ToolPolicy.build(
            root,
            spec.tool_mocks,
            yield_agents=spec.yield_tools,
            context=lambda: setup_context(services.sessions, root, session),
            simulate_unmocked=spec.simulate_unmocked,
            remote_mocks=spec.remote_mocks,
            node_mocks=spec.node_mocks,
        )
        plugin = InterceptionPlugin(policy, record, watch, mock_calls, services.sessions)
        model_check = ModelCheck(root, case=spec.case, models=spec.models)
        limits = ModelCallLimit(spec.max_model_calls, spec.budget, cost_of, others=spenders)
        gateway = GatewayPlugin("agent", model_check.model_for, gates)
        harness = [plugin, model_check, limits]
        local.fill([*harness, gateway], outside_tool_calls)  # `RemoteMock.local` agents' runners
        app = app.model_copy(update={"plugins": [*harness, *app.plugins, gateway]})
        adk_runner = Runner(
            app=app,
            session_service=services.sessions,
            artifact_service=services.artifacts,
            memory_service=services.memory,
        )
        parts = (spec, app.name, root, policy, record, model_check, limits, gateway, compaction)
        return cls(*parts, adk_runner, services=services), session

    async def create_session(
        self, initial_state: Mapping[str, Mapping[str, Any]] | None = None
    ) -> Session:
        """Another main session, with the scoped `initial_state` (deep-copied)."""
        return await self.services.sessions.create_session(
            app_name=self.app_name,
            user_id=self.spec.user_id,
            state=flatten_state(initial_state or {}),
        )

    async def get_session(self, session_id: str, *, events: bool = True) -> Session:
        """Returns a fresh copy of a main session (`events`: False for its state alone)."""
        session = await self.services.sessions.get_session(
            app_name=self.app_name,
            user_id=self.spec.user_id,
            session_id=session_id,
            config=None if events else GetSessionConfig(num_recent_events=0),
        )
        if session is None:
            raise KeyError(f"no session {session_id!r} in this EvalRunner")
        return session

    async def final(self, session_id: str) -> tuple[list[Event], dict[str, Any]]:
        """A main session's events and state once the run is over (its events, not copies)."""
        sessions = self.services.sessions
        if isinstance(sessions, _session_service.EvalSessionService):  # the harness's own
            return sessions.final(
                app_name=self.app_name, user_id=self.spec.user_id, session_id=session_id
            )
        session = await self.get_session(session_id)  # another service (a comparison's)
        return list(session.events), session.state

    async def run_async(
        self, *, session_id: str, new_message: str | types.Content, run_config: Any = None
    ) -> AsyncGenerator[Event, None]:
        """Runs the agent on one message, yielding ADK's events.

        Raises:
            EvalToolError: The agent called a tool that is neither mocked nor
                provided (or a mock raised); ADK's wrapping is removed. Or the
                tree holds a remote agent the case neither mocks nor declares:
                then nothing runs.
            EvalSetupError: An agent reached a model call with a model that cannot
                run here (no key); the run ended before the call.
        """
        if (refusal := self.policy.remote.refusal) is not None:  # before anything reaches it
            raise refusal
        stopped = asyncio.Event()  # the harness stops the run: ADK aborts it as asked
        try:
            async with aclosing(
                self.adk_runner.run_async(
                    user_id=self.spec.user_id,
                    session_id=session_id,
                    new_message=user_content(new_message),
                    run_config=run_config if run_config is not None else self.run_config,
                    abort_signal=stopped,
                )
            ) as events:
                async for event in events:
                    if event.error_code in (TOOL_ERROR_CODE, MODEL_NOT_READY_CODE):
                        stopped.set()
                        break
                    yield event
                    if self.record.violation is not None:  # stop before anything else runs
                        stopped.set()
                        break
        except Exception as error:
            mock_error = self.record.error_for(error)
            if mock_error is not None:
                raise mock_error from error
            raised = self.gateway.unwrapped(error)  # as it was raised, not as ADK wrapped it
            if raised is not error:
                raise raised from raised.__cause__
            raise
        violation = self.record.take_violation()
        if violation is not None:
            raise violation
        if self.model_check.problem is not None:
            raise self.model_check.problem

    def warnings(self) -> tuple[str, ...]:
        """What went wrong without stopping the run (a summary ADK gave up on), what it missed."""
        unseen = (UNOBSERVED_LINE,) if is_deployed(self.root_agent) else ()
        return (*unseen, *(self.compaction.warnings() if self.compaction is not None else ()))

    def unused_names(self) -> EvalSetupError | None:
        """A `tool_mocks` or `models` name that the finished run shows was misspelt.

        Before the run, a name no agent of the tree has is kept for an agent (or a
        tool of one) that a tool builds at run time. If no agent of the run used
        it and it resembles a name the run saw, it was misspelt (None if none).
        """
        offered = self.record.offered_names()
        check = self.model_check
        unused = [
            ("tool_mocks", name, "a tool", sorted(self.policy.tree_tools | offered))
            for name in sorted(self.policy.unresolved - offered)
        ] + [
            ("models", key, "an agent", sorted(check.tree_names | check.called))
            for key in check.unused_model_keys()
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
            await self.services.memory.add_events_to_memory(
                app_name=self.app_name,
                user_id=self.spec.user_id,
                events=events,
                session_id=session_id,
            )

    async def remember(self, session_id: str) -> None:
        """Adds a main session, as it is now, to the memory (``add_session_to_memory``)."""
        await self.services.memory.add_session_to_memory(await self.get_session(session_id))

    async def seed_artifacts(self, session_id: str, artifacts: Mapping[str, Any]) -> None:
        """Saves `artifacts` (by file name: a `Part`, text or bytes) in a main session."""
        for filename, artifact in artifacts.items():
            await self.services.artifacts.save_artifact(
                app_name=self.app_name,
                user_id=self.spec.user_id,
                session_id=session_id,
                filename=filename,
                artifact=as_part(artifact),
            )

    async def artifacts(self, session_id: str) -> dict[str, types.Part]:
        """Every artifact of a main session, its latest version, by file name."""
        service, app, user = self.services.artifacts, self.app_name, self.spec.user_id
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
        await self.services.sessions.append_event(session, event)
        return event

    async def close(self) -> None:
        """Closes the ADK runner (its plugins and toolsets) and a SQLite memory."""
        await self.adk_runner.close()
        close = getattr(self.services.memory, "close", None)  # SqliteMemoryService's connection
        if close is not None:
            await close()


def _app(
    spec: SystemSpec, record: RunRecord, local: HarnessPlugins
) -> tuple[App, BaseAgent | Workflow, CompactionWatch | None]:
    """The App under test as the run holds it, its root, and its case's compaction watch.

    Raises:
        EvalSetupError: `node_mocks` for an agent that is no Workflow.
    """
    app = agent_app(spec.agent, [])
    quiet_adk_logs(harness_app=None if isinstance(spec.agent, App) else app.name)
    if isinstance(app.root_agent, Workflow):  # its code nodes mocked, passed or refused
        from .._tools._nodes import with_node_mocks  # its ADK node classes: only for a graph

        graph = with_node_mocks(app.root_agent, spec.node_mocks, record.refuse_node, case=app.name)
        app = app.model_copy(update={"root_agent": graph})
    elif spec.node_mocks:
        raise EvalSetupError("node_mocks apply to a Workflow; the agent under test is none")
    if spec.remote_mocks:  # mocked remote agents: their stand-ins, answered in process
        mocked = with_remote_mocks(app.root_agent, spec.remote_mocks, local)  # type: ignore[arg-type]
        app = app.model_copy(update={"root_agent": mocked})
    root = app.root_agent
    assert isinstance(root, BaseAgent | Workflow)  # agent_app checks it
    models = spec.models or {}
    app, compaction = case_compaction(app, resolve_model, models.get(root.name, models.get("*")))
    return app, root, compaction
