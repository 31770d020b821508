"""`EvalCase`: one simulated conversation to run and score."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.workflow import Workflow
from google.genai import types

from ._agent_tree import check_model_names, with_models
from ._errors import EvalSetupError
from ._result._status import EXPECT_ERROR, ExpectedError
from ._sandbox._scope import SANDBOX_MODES, TELEMETRY_MODES, SandboxMode, TelemetryMode
from ._session_service import MEMORY_SERVICES, MemoryItem, MemoryServiceKind, memory_events
from ._state import flatten_state
from ._termination import DEFAULT_MAX_TURNS, TerminateWhen
from ._tools._context import Clock, as_part
from ._tools._deployed import deployed_agent
from ._tools._mocks import ToolMock
from ._tools._toolsets import ToolsetMock, resolve_toolset_mocks
from ._user_agents import CaseSession, UserAgents, check_sessions
from .metrics._invariants import Invariant
from .models._gateway._settings import CacheRoles, cache_roles

if TYPE_CHECKING:
    from ._bridge import Bridge
    from .metrics._types import Metric
    from .models import ModelSpec

__all__ = ["DEFAULT_MAX_TURNS", "EvalCase", "TerminateWhen", "UserAgents"]


@dataclass
class EvalCase:
    """A conversation to simulate and the metrics that score it.

    Attributes:
        name: Unique name of the case (used in reports).
        agent: The system under test: an ADK agent, an ADK 2 `Workflow`, or an
            ADK `App` of either (whose plugins then run too, after adk_eval's
            interception plugin); or a deployed agent reached over A2A: its URL
            (``"https://host/..."``, or its agent card's URL; made ADK's
            `RemoteA2aAgent` here) or ADK's `RemoteA2aAgent` itself. That one runs
            for real in its own service (see docs/harness.md, "Evaluating a
            deployed agent over A2A").
        tool_mocks: Tool name -> `ToolMock` (answers instead of the tool) or the
            agent's own tool / tool function (the real tool runs). A tool that is
            in neither stops the run with an error: nothing runs by accident.
        user_agents: Who answers when the agent yields.
        bridge: How prompts and answers cross between the sessions (defaults
            are documented on `Bridge`).
        initial_state: Scoped state the main session starts with (deep-copied
            for every run).
        first_message: The user's opening message. Without it, the loop user
            agent opens the conversation. Not with `sessions` (each opens its own).
        terminate_when: Limits and the stop condition.
        metrics: Scored on the event trace after the run.
        description: What the case checks, for people reading reports.
        clock: Fixes `MockToolContext.now()`: a datetime, or a function returning one.
        xfail: Why this case is expected not to pass. Its result keeps its real
            status, but suites count a ``failed`` or ``terminated`` run as
            expected; a run that passes anyway fails the suite (strict), so a
            fixed gap is noticed. Errors still count as errors.
        models: Models for this case only, by agent name (``"*"``: every other
            `LlmAgent`), agents a tool builds at run time included. The case runs
            on a copy of the agent tree with them, and each agent gets its model
            at its model calls; the agent objects you pass are never changed, so
            many eval files can script one module-level agent differently.
        node_mocks: For a `Workflow`: function node name -> a replacement
            function (called with the node's arguments as keywords), an output
            value, or the node's own function (it runs as itself). A function
            node in none of them stops the run before it runs.
        simulate_unmocked: Let a model answer every tool that has no mock and is
            not provided (``True``, or a ``ToolMock.simulated(...)`` to set its
            instructions and model), instead of stopping the run. Off by default:
            an explicit opt-in, and a simulated tool never runs the real one.
        memory: What the agent remembers from earlier conversations, in the case's
            own memory service (ADK's in-memory one), for ``load_memory`` and
            ``preload_memory``: text (a fact), an ADK `Session`, or a list of a
            past session's events.
        sessions: Sessions played in turn, each a new ADK session of the same user
            on the case's one memory service, added to it when it ends (see
            `CaseSession` and docs/harness.md, "Memory across sessions").
            `metrics` score the whole run, each session's its own.
        memory_service: ADK's memory service of the run: ``"in_memory"``
            (`InMemoryMemoryService`: a memory matches a query sharing a word) or
            ``"sqlite"`` (`SqliteMemoryService` on an in-memory database: full-text search).
        sandbox: What is done with what the run does outside its mocks and model
            calls (a process started, a connection or name lookup off this
            machine, a file written): ``"warn"`` lists each in the result's
            warnings, ``"strict"`` refuses the first before it happens and ends
            the run in an ``error``, ``"off"`` does not watch.
        telemetry: ``"off"``: span and log exporters and litellm callbacks the
            user's code installed get nothing of the run (OpenTelemetry's
            in-memory exporters, the eval's own, do); ``"keep"``: they get it,
            tagged with ``adk_eval.run`` and ``adk_eval.case``.
        toolset_mocks: Toolsets replaced as a whole, so nothing of them starts
            (an MCP server's process or connection): the toolset object, or its
            class name -> a `ToolsetMock` declaring its tools. Their calls are
            answered by `tool_mocks`, like any tool's.
        artifacts: The artifacts the main session starts with, by file name: a
            ``google.genai`` `Part`, text or bytes. Agents read them as they read
            artifacts their tools saved; metrics see every artifact at the end
            (`EvalTrace.artifacts`).
        invariants: Rules checked on every call, answer, state change and agent
            text as the run happens (`adk_eval.metrics.never_called`, `never`,
            `at_most`, ...): a broken ``stop`` rule ends the run at that step
            (status failed, the step quoted), a ``record`` rule fails at the end.
            Each is reported as a metric. The detectors of the payloads the
            mocks inject (`ToolMock.with_injection`) are added to them.
        expect_error: The run must end in this error: an exception class
            (`EvalToolError` for a tool the case does not allow; its subclasses
            count too) or a regular expression searched in ``"Type: message"``.
            A run that ends so passes (the `expect_error` metric quotes the
            error); one that ends otherwise fails that metric.
        cache: Roles whose model answers this case caches (``"all"``,
            ``"agent,users"``, ``("judges",)``; roles among ``agent``, ``users``,
            ``judges``, ``tools``), over the suite's setting. None: the suite's.
            See docs/models.md, "Caching".
        remote_mocks: Remote agents (ADK's `RemoteA2aAgent`) by name -> the agent
            itself: it runs for real, sending the conversation to its URL. A
            remote agent anywhere in the tree that is neither listed nor behind a
            mocked `AgentTool` stops the run with an error before anything is
            sent to it (its agent card is not fetched either).
    """

    name: str
    agent: BaseAgent | App | Workflow | str
    tool_mocks: Mapping[str, Any] = field(default_factory=dict)
    user_agents: UserAgents = field(default_factory=UserAgents)
    bridge: Bridge | None = None
    initial_state: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    first_message: str | types.Content | None = None
    terminate_when: TerminateWhen = field(default_factory=TerminateWhen)
    metrics: Sequence[Metric] = field(default_factory=list)
    description: str | None = None
    clock: datetime | Clock | None = None
    xfail: str | None = None
    models: Mapping[str, ModelSpec] | None = None
    node_mocks: Mapping[str, Any] = field(default_factory=dict)
    simulate_unmocked: bool | ToolMock = False
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    toolset_mocks: Mapping[Any, ToolsetMock] = field(default_factory=dict)
    memory: Sequence[MemoryItem] = ()
    sessions: Sequence[CaseSession] = ()
    memory_service: MemoryServiceKind = "in_memory"
    sandbox: SandboxMode = "warn"
    telemetry: TelemetryMode = "off"
    invariants: Sequence[Invariant] = ()
    expect_error: ExpectedError | None = None
    cache: CacheRoles = None
    remote_mocks: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise EvalSetupError(f"EvalCase.name must be a non-empty string, got {self.name!r}")
        if isinstance(self.agent, str):  # a deployed agent's URL: ADK's RemoteA2aAgent for it
            self.agent = deployed_agent(self.agent, case=self.name)
        self._check_agent()
        self._check_kinds()
        self._check_content()
        self._check_metrics()
        self._check_expect_error()
        if self.cache is not None:
            try:
                cache_roles(self.cache)
            except EvalSetupError as error:
                raise EvalSetupError(f"EvalCase `{self.name}`: {error}") from None
        if self.models is not None:
            if not isinstance(self.models, Mapping):
                raise EvalSetupError(
                    f'EvalCase `{self.name}`: `models` must map agent names (or "*") to '
                    f"models, got {type(self.models).__name__}"
                )
            check_model_names(self.root_agent, self.models, case=self.name)
        if self.toolset_mocks:  # a tree walk only when there is something to find
            resolve_toolset_mocks(self.root_agent, self.toolset_mocks, case=self.name)
        self._check_memory_and_clock()
        loop = self.user_agents.loop
        check_sessions(self.sessions, case=self.name, first_message=self.first_message, loop=loop)

    def _check_agent(self) -> None:
        if not isinstance(self.agent, BaseAgent | App | Workflow):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `agent` must be an ADK agent, Workflow or App, "
                f"got {type(self.agent).__name__}"
            )
        if isinstance(self.agent, App) and not isinstance(
            self.agent.root_agent, BaseAgent | Workflow
        ):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: the App's root is a "
                f"`{type(self.agent.root_agent).__name__}`, which adk_eval cannot run under "
                "interception; evaluate an agent or a Workflow"
            )

    def _check_content(self) -> None:
        """The node mocks, the state, the artifacts, the opening and the simulated tools."""
        if self.node_mocks and not isinstance(self.root_agent, Workflow):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `node_mocks` are for Workflow nodes, and "
                f"`{self.root_agent.name}` is a {type(self.root_agent).__name__}; use tool_mocks"
            )
        flatten_state(self.initial_state, what=f"EvalCase `{self.name}`: initial_state")
        for filename, artifact in dict(self.artifacts).items():
            try:
                as_part(artifact)
            except EvalSetupError as error:
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: artifacts[{filename!r}]: {error}"
                ) from None
        if self.first_message is None and self.user_agents.loop is None and not self.sessions:
            raise EvalSetupError(
                f"EvalCase `{self.name}` has no `first_message` and no `user_agents.loop` "
                "to open the conversation; set one of them"
            )
        if self.first_message is not None and not isinstance(
            self.first_message, str | types.Content
        ):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `first_message` must be a str or genai Content, "
                f"got {type(self.first_message).__name__}"
            )
        unmocked = self.simulate_unmocked
        if not (
            isinstance(unmocked, bool) or (isinstance(unmocked, ToolMock) and unmocked.simulator)
        ):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `simulate_unmocked` must be True, False or "
                f"ToolMock.simulated(...), got {self.simulate_unmocked!r}"
            )

    def _check_expect_error(self) -> None:
        expect = self.expect_error
        if expect is None:
            return
        if not (
            isinstance(expect, str)
            or (isinstance(expect, type) and issubclass(expect, BaseException))
        ):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `expect_error` must be an exception class (e.g. "
                f"EvalToolError) or a pattern of 'Type: message', got {expect!r}"
            )
        if any(getattr(m, "name", "") == EXPECT_ERROR for m in self.metrics):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: a metric is named `{EXPECT_ERROR}`, the name of "
                "the metric `expect_error` adds; rename it"
            )

    def _check_memory_and_clock(self) -> None:
        if isinstance(self.memory, str | bytes) or not isinstance(self.memory, Sequence):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `memory` is a list of texts, ADK Sessions or lists "
                f"of Events, got {type(self.memory).__name__}"
            )
        for index, item in enumerate(self.memory):
            try:
                memory_events(item, index)
            except EvalSetupError as error:
                raise EvalSetupError(f"EvalCase `{self.name}`: memory[{index}]: {error}") from None
        if self.clock is not None and not (
            isinstance(self.clock, datetime) or callable(self.clock)
        ):
            raise EvalSetupError(
                f"EvalCase `{self.name}`: `clock` must be a datetime or a function returning "
                f"one, got {self.clock!r}"
            )
        if callable(self.clock):
            now = self.clock()
            if not isinstance(now, datetime):
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: `clock` must return a datetime, and it returned "
                    f"{now!r} ({type(now).__name__}); return e.g. datetime(2026, 1, 1, tzinfo=UTC)"
                )

    def _check_kinds(self) -> None:
        kinds = {
            "node_mocks": (Mapping, "map function node names to mocks"),
            "remote_mocks": (Mapping, "map remote agent names to the remote agents themselves"),
            "tool_mocks": (Mapping, "map tool names to mocks or tools"),
            "toolset_mocks": (Mapping, "map toolsets (or their class names) to ToolsetMock(...)"),
            "user_agents": (UserAgents, "be a UserAgents(...)"),
            "terminate_when": (TerminateWhen, "be a TerminateWhen(...)"),
        }
        for field_name, (kind, what) in kinds.items():
            value = getattr(self, field_name)
            if not isinstance(value, kind):
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: `{field_name}` must {what}, got "
                    f"{type(value).__name__}"
                )
        for field_name, allowed in (
            ("sandbox", SANDBOX_MODES),
            ("telemetry", TELEMETRY_MODES),
            ("memory_service", MEMORY_SERVICES),
        ):
            if getattr(self, field_name) not in allowed:
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: `{field_name}` must be one of "
                    f"{', '.join(map(repr, allowed))}, got {getattr(self, field_name)!r}"
                )

    def _check_metrics(self) -> None:
        seen: set[str] = set()
        for invariant in self.invariants:
            if not isinstance(invariant, Invariant):
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: invariants must be rules such as "
                    f"never_called('delete_account') (adk_eval.metrics), got {invariant!r}"
                )
        for metric in [*self.metrics, *self.live_invariants]:
            name = getattr(metric, "name", None)
            if not isinstance(name, str) or not callable(getattr(metric, "evaluate", None)):
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: every metric needs a `name` and an "
                    f"`evaluate(trace)` method, got {metric!r}"
                )
            if name in seen:
                raise EvalSetupError(
                    f"EvalCase `{self.name}`: two metrics are named `{name}`; metric names "
                    "must be unique within a case"
                )
            seen.add(name)

    @property
    def live_invariants(self) -> list[Invariant]:
        """The invariants checked as the run happens.

        `invariants`, then the detectors of the payloads the mocks inject (each once).
        """
        found = {invariant.name: invariant for invariant in self.invariants}
        for mock in self.tool_mocks.values():
            injection = getattr(mock, "injection", None)
            for payload in injection.payloads if injection is not None else ():
                found.setdefault(payload.detector.name, payload.detector)
        return list(found.values())

    @property
    def root_agent(self) -> BaseAgent | Workflow:
        """The root agent (or Workflow), whether `agent` is one or an App."""
        if isinstance(self.agent, App):
            root = self.agent.root_agent
            assert isinstance(root, BaseAgent | Workflow)  # checked in __post_init__
            return root
        assert not isinstance(self.agent, str)  # made an agent in __post_init__
        return self.agent

    @property
    def agent_under_test(self) -> BaseAgent | App | Workflow:
        """`agent`, or a copy of its tree with `models` and `toolset_mocks` (never `agent`)."""
        assert not isinstance(self.agent, str)  # made an agent in __post_init__
        if not self.models and not self.toolset_mocks:
            return self.agent
        stand_ins = resolve_toolset_mocks(self.root_agent, self.toolset_mocks, case=self.name)

        def replace(tool: Any) -> Any:
            mock = stand_ins.get(id(tool))
            return mock.toolset(tool) if mock is not None else tool

        root = with_models(self.root_agent, self.models or {}, replace)
        if isinstance(self.agent, App):
            return self.agent.model_copy(update={"root_agent": root})
        return root

    @property
    def unmocked_simulator(self) -> ToolMock | None:
        """The simulated mock for tools nothing else covers (None: they stop the run)."""
        if self.simulate_unmocked is True:
            return ToolMock.simulated()
        return self.simulate_unmocked or None

    def simulators(self) -> list[ToolMock]:
        """Every simulated mock of the case (their models are checked before a run)."""
        mocks = [m for m in self.tool_mocks.values() if isinstance(m, ToolMock) and m.simulator]
        unmocked = self.unmocked_simulator
        return [*mocks, unmocked] if unmocked is not None else mocks

    def resolve_clock(self) -> Callable[[], datetime] | None:
        """Returns the case's clock as a function (or None for the system clock)."""
        clock = self.clock
        if clock is None:
            return None
        if isinstance(clock, datetime):
            fixed = clock
            return lambda: fixed
        return clock
