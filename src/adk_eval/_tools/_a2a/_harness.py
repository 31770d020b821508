"""The run's harness plugins, handed to the runners of local remote agents.

A `RemoteMock.local` agent runs on a `Runner` of its own, built at its first
request, with the plugins of the run that calls it. The system builds those
plugins after the tree (the interception's policy reads the tree, stand-ins
included), so the stand-in gets this holder, which the system fills once;
a request before that (a served mock: no run) is refused. No a2a import here:
the system imports it for every run.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from google.adk.apps import App
from google.adk.artifacts import InMemoryArtifactService
from google.adk.memory import InMemoryMemoryService
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from ..._errors import EvalSetupError

__all__ = ["HarnessPlugins", "local_agent_of", "runs_locally"]


@dataclass
class HarnessPlugins:
    """The run's harness plugins, for the runners of local remote agents.

    Attributes:
        plugins: Filled once by the system, after it built them.
        outside: Where the agent runs: outside the caller's tool calls (the
            interception's), so its events are not nested twice.
    """

    plugins: list[Any] = field(default_factory=list)
    outside: Callable[[], AbstractContextManager[Any]] = nullcontext

    def fill(self, plugins: list[Any], outside: Callable[[], AbstractContextManager[Any]]) -> None:
        """Hands over the run's plugins and the interception's `outside_tool_calls`."""
        self.plugins.extend(plugins)
        self.outside = outside

    def runner_for(self, agent: Any) -> Runner:
        """A runner of `agent` with the harness plugins and in-memory services of its own."""
        if not self.plugins:
            raise EvalSetupError(
                f"RemoteMock.local(`{agent.name}`) runs only inside a case's run, under its "
                "interception: put it in EvalCase(remote_mocks=...), not in a served mock"
            )
        app = App(name=agent.name, root_agent=agent, plugins=list(self.plugins))
        return Runner(
            app=app,
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
        )


_LOCAL: dict[int, Any] = {}
"""Stand-in (by id, while it lives) -> the local agent it runs."""


def runs_locally(stand_in: Any, agent: Any) -> None:
    """Notes that `stand_in` runs `agent` in process (the tree walk lists its tools)."""
    _LOCAL[id(stand_in)] = agent
    weakref.finalize(stand_in, _LOCAL.pop, id(stand_in), None)


def local_agent_of(agent: Any) -> Any:
    """The agent a `RemoteMock.local` stand-in runs (None for any other agent)."""
    return _LOCAL.get(id(agent))
