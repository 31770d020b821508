"""Eval-case sessions: `run_eval` runs an `EvalCase` while the person plays one part of it.

The case runs with its mocks, user agents, bridge, initial state and
termination; the person plays either the system's model (`HumanModelPlugin`) or
one of the user agents (a `HumanUserAgent`). The run's events are copied to the
studio's tables as they happen; a restart keeps that history (exportable) and
marks the run interrupted, since mocks and user agents live in the process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from .._bridge import YieldInfo
from .._callables import sharing_the_event_loop
from .._case import EvalCase, UserAgents
from .._errors import StudioInvalidError
from .._result import EvalResult
from .._run.loop import run_eval
from .._tools._mocks import ToolMock
from .._tools._policy import is_control_tool
from .._turns import agent_app, app_name_for, jsonable
from .._user_agents import HumanUserAgent
from ._agent_session import HumanModelPlugin
from ._config import StudioTarget
from ._kinds import Role, played_tool, tool_user_role
from ._notify import Notifier
from ._parts import StudioParts
from ._store import SessionRow, StudioStore

__all__ = ["CaseSessions"]


class _Recorder(BasePlugin):
    """Keeps a copy of an eval-case session's events in the studio tables.

    ADK appends user messages (and answers to yields) straight to the session,
    without plugin callbacks, so the recorder reads the run's own session
    (captured on the main runner's first run) and copies what is new.
    """

    def __init__(self, store: StudioStore, notifier: Notifier, session_id: str) -> None:
        super().__init__(name="adk_eval_studio_recorder")
        self.store = store
        self.notifier = notifier
        self.session_id = session_id
        self.source: tuple[Any, str, str, str] | None = None
        self._stored = 0

    async def before_run_callback(self, *, invocation_context: Any) -> types.Content | None:
        """Remembers where the main session lives (the first runner to start is the main one)."""
        if self.source is None:
            session = invocation_context.session
            self.source = (
                invocation_context.session_service,
                session.app_name,
                session.user_id,
                session.id,
            )
        return None

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event | None:
        """Copies what the session gained, and tells the page."""
        await self.sync()
        await self.notifier.changed(self.session_id)
        return None

    async def live_events(self) -> list[Event] | None:
        """The main session's events now (None before the run started)."""
        if self.source is None:
            return None
        service, app_name, user_id, adk_session_id = self.source
        session = await service.get_session(
            app_name=app_name, user_id=user_id, session_id=adk_session_id
        )
        return list(session.events) if session is not None else None

    async def sync(self) -> None:
        """Appends the events not copied yet."""
        events = await self.live_events()
        if events is None:
            return
        for event in events[self._stored :]:
            await self.store.add_event(self.session_id, event.model_dump_json())
        self._stored = len(events)


class CaseSessions:
    """Starts, reads and recovers the sessions of eval cases."""

    def __init__(self, parts: StudioParts) -> None:
        self._parts = parts
        self._store = parts.store
        self._recorders: dict[str, _Recorder] = {}

    async def create(self, target: StudioTarget, role: str) -> str:
        """Starts a run of the target's case with the person in `role`; returns the session id.

        Raises:
            StudioError: The case has no such role to play (422).
        """
        case = target.case
        assert case is not None
        roles: dict[str, Role] = {"model": "model", "loop_user": "loop_user"}
        roles.update((r, r) for r in map(tool_user_role, case.user_agents.tools))
        played = roles.get(role)
        if played is None:
            raise StudioInvalidError(f"role must be one of {sorted(roles)}")
        if role == "loop_user" and case.user_agents.loop is None and case.first_message is not None:
            raise StudioInvalidError("this case has no loop user agent to play")
        session_id = f"case-{uuid.uuid4().hex[:12]}"
        await self._store.add_session(
            SessionRow(id=session_id, target=target.name, kind="case", role=played)
        )
        self._parts.tasks.spawn(session_id, self._drive(session_id, target, played))
        return session_id

    async def recover(self, row: SessionRow) -> None:
        """After a restart: an unfinished run is lost; its history is kept and it is interrupted."""
        if row.phase == "finished":
            return
        await self._store.supersede_pending(row.id)
        detail = {
            **row.detail,
            "error": "the server restarted during this run; its history is kept",
        }
        await self._store.update_session(
            row.id, status="interrupted", phase="finished", detail=detail
        )

    async def events(self, row: SessionRow) -> list[Event]:
        """The session's events: live while it runs, else the stored copy."""
        recorder = self._recorders.get(row.id)
        live = await recorder.live_events() if recorder is not None else None
        if live is not None:
            return live
        return [Event.model_validate_json(text) for text in await self._store.events(row.id)]

    async def _drive(self, session_id: str, target: StudioTarget, role: Role) -> None:
        case = target.case
        assert case is not None
        recorder = self._recorders[session_id] = _Recorder(
            self._store, self._parts.notifier, session_id
        )
        plugins: list[BasePlugin] = [recorder]
        if role == "model":
            plugin = HumanModelPlugin(self._parts, case.root_agent, _notes(case))
            plugins.insert(0, plugin)
        assert not isinstance(case.agent, str)  # EvalCase made a URL an agent
        app = agent_app(case.agent, plugins, name=app_name_for(target.name))
        played = dataclasses.replace(
            case, agent=app, user_agents=self._human(case, role, session_id)
        )
        await self._store.update_session(session_id, phase="running")
        try:
            with sharing_the_event_loop():  # the server's loop: a blocking mock must not freeze it
                result = await run_eval(played)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            row = await self._store.require_session(session_id)
            detail = {**row.detail, "error": f"{type(error).__name__}: {error}"}
            await self._store.update_session(
                session_id, phase="finished", status="completed", detail=detail
            )
            return
        await self._store.replace_events(session_id, [e.model_dump_json() for e in result.events])
        row = await self._store.require_session(session_id)
        await self._store.update_session(
            session_id,
            phase="finished",
            status="completed",
            detail={**row.detail, "result": _summary(result)},
        )

    def _human(self, case: EvalCase, role: Role, session_id: str) -> UserAgents:
        """The case's user agents, with the person in place of the one `role` names."""
        user_agents = case.user_agents
        recorder = self._recorders[session_id]

        def human(agent: BaseAgent | None) -> HumanUserAgent:
            name = agent.name if agent is not None else "person"

            async def respond(prompt: str, info: YieldInfo | None) -> Any:
                await recorder.sync()  # the page shows what led to the question
                return await self._parts.broker.wait_for_user(session_id, name, prompt, info)

            return HumanUserAgent(name=name, respond=respond)

        tool = played_tool(role)
        if role == "loop_user":
            return dataclasses.replace(user_agents, loop=human(user_agents.loop))
        if tool is not None:
            tools = {**user_agents.tools, tool: human(user_agents.tools[tool])}
            return dataclasses.replace(user_agents, tools=tools)
        return user_agents


def _notes(case: EvalCase) -> Callable[[LlmRequest], dict[str, str]]:
    """Per model call, what happens in this case when the model calls each tool."""

    def notes(request: LlmRequest) -> dict[str, str]:
        result: dict[str, str] = {}
        for name, tool in request.tools_dict.items():
            mock = case.tool_mocks.get(name)
            if isinstance(mock, ToolMock):
                result[name] = "mocked in this case"
            elif mock is not None:
                result[name] = "the real tool runs"
            elif name in case.user_agents.tools:
                result[name] = "a user agent answers it"
            elif is_control_tool(tool) or tool.is_long_running:
                continue
            else:
                result[name] = "not allowed"
        return result

    return notes


def _summary(result: EvalResult) -> dict[str, Any]:
    """The run's result as the page shows it."""
    return {
        "status": result.status,
        "turns": result.turns,
        "termination": str(result.termination) if result.termination else None,
        "error": result.error.message if result.error else None,
        "metrics": {
            name: {"passed": m.passed, "score": m.score, "evidence": list(m.evidence)}
            for name, m in result.metrics.items()
        },
        "final_state": jsonable(result.final_state),
        "explanation": result.explain(),
    }
