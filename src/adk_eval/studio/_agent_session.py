"""Agent sessions: the person plays the model of a plain agent (a `SimulatedAgentConfig`).

The agent runs in a real ADK `Runner` over ADK's `SqliteSessionService`, with a
resumable App and the `HumanModelPlugin`: every model call becomes a pending
request, and the person's answer is returned from ``before_model_callback`` as
the model's response. ADK then executes the tools the answer calls, the real
ones, exactly as it would for a model. A tool that raises gives a
``{"error": {...}}`` response and the session goes on; a running tool can be
cancelled. A long-running tool ends the run; once the person has answered every
pending call, the run resumes with those answers. After a server restart, an
interrupted invocation is resumed with ADK's resumability (the pending model
call is asked again; finished tools do not run again).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Mapping
from contextlib import aclosing
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.context import Context
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import Workflow
from google.genai import types

from .._agent_tree import find_agent
from .._errors import StudioConflictError, StudioInvalidError
from .._tools._policy import is_framework_tool
from .._turns import (
    DEFAULT_USER_ID,
    PendingCall,
    agent_app,
    app_name_for,
    classify_run,
    resume_message,
    tool_error_response,
    user_content,
)
from ._config import StudioTarget, find_target
from ._parts import StudioParts
from ._protocol import answer_to_response, serialize_request
from ._schemas import validate_model
from ._store import SessionRow
from ._tasks import current_session

__all__ = ["AgentSessions", "HumanModelPlugin"]


class HumanModelPlugin(BasePlugin):
    """Hands the model calls (and tool runs) of studio sessions to the person.

    Args:
        parts: Where model calls wait for the person's answer (its broker) and
            what runs plain tools, timed and cancellable (its tool runner).
        root: The root agent (to find each calling agent's output schema).
        notes: Per model call, a note on each tool for the person.
    """

    def __init__(
        self,
        parts: StudioParts,
        root: BaseAgent | Workflow,
        notes: Callable[[LlmRequest], dict[str, str]] | None = None,
    ):
        super().__init__(name="adk_eval_studio")
        self.broker = parts.broker
        self.tools = parts.tools
        self.root = root
        self.notes = notes

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Waits for the person to answer the model call."""
        session_id = current_session()
        if session_id is None:
            return None
        agent = find_agent(self.root, callback_context.agent_name)
        output_model = agent.output_schema if isinstance(agent, LlmAgent) else None
        payload = serialize_request(
            llm_request,
            callback_context.agent_name,
            output_schema=output_model,
            tool_notes=self.notes(llm_request) if self.notes else None,
        )
        answer = await self.broker.wait_for_model(
            session_id,
            callback_context.agent_name,
            callback_context.invocation_id,
            payload,
            output_model,
        )
        return answer_to_response(answer)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Runs plain tools so they can be timed and cancelled; ADK handles the rest."""
        session_id = current_session()
        if session_id is None or is_framework_tool(tool) or tool.is_long_running:
            return None
        if await tool.check_require_confirmation(tool_args, tool_context) is True:
            return None
        return await self.tools.run(session_id, tool, tool_args, tool_context)

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """A tool ADK ran itself raised: an error response, and the session goes on."""
        if current_session() is None:
            return None
        return tool_error_response(error)


class AgentSessions:
    """Starts, continues, resumes and reads the sessions of plain agents."""

    def __init__(
        self,
        parts: StudioParts,
        targets: Mapping[str, StudioTarget],
        sessions: SqliteSessionService,
    ) -> None:
        self._parts = parts
        self._store = parts.store
        self._tasks = parts.tasks
        self._targets = targets
        self._sessions = sessions
        self._runners: dict[str, Runner] = {}

    def _runner(self, target: StudioTarget) -> Runner:
        runner = self._runners.get(target.name)
        if runner is None:
            plugin = HumanModelPlugin(self._parts, target.agent)
            app = agent_app(target.agent, [plugin], name=app_name_for(target.name), resumable=True)
            runner = Runner(app=app, session_service=self._sessions)
            self._runners[target.name] = runner
        return runner

    async def create(self, target: StudioTarget, message: Any) -> str:
        """Starts a session with the user's first message; returns its id."""
        content = _user_message(target, message)
        runner = self._runner(target)
        session = await self._sessions.create_session(
            app_name=runner.app_name, user_id=DEFAULT_USER_ID
        )
        await self._store.add_session(
            SessionRow(id=session.id, target=target.name, kind="agent", role="model")
        )
        self._tasks.spawn(session.id, self._drive(session.id, new_message=content))
        return session.id

    async def send_message(self, row: SessionRow, message: Any) -> None:
        """The user's next message in an idle session.

        Raises:
            StudioError: The session is not idle (409), or the message does not fit (422).
        """
        if row.phase != "idle" or self._tasks.busy(row.id):
            raise StudioConflictError(
                f"the session is {row.phase}; wait until the agent has answered"
            )
        content = _user_message(find_target(self._targets, row.target), message)
        await self._store.update_session(row.id, phase="running")
        self._tasks.spawn(row.id, self._drive(row.id, new_message=content))

    async def recover(self, row: SessionRow) -> None:
        """After a restart: asks an interrupted model call again by resuming its invocation."""
        if row.target not in self._targets or row.phase not in ("awaiting_model", "running"):
            return
        await self._store.supersede_pending(row.id)
        if row.invocation_id:
            self._tasks.spawn(row.id, self._drive(row.id, invocation_id=row.invocation_id))
        else:
            await self._store.update_session(row.id, phase="idle")

    async def _drive(
        self,
        session_id: str,
        *,
        new_message: types.Content | None = None,
        invocation_id: str | None = None,
    ) -> None:
        row = await self._store.require_session(session_id)
        runner = self._runner(find_target(self._targets, row.target))
        await self._store.update_session(session_id, phase="running")
        try:
            async with aclosing(
                runner.run_async(
                    user_id=DEFAULT_USER_ID,
                    session_id=session_id,
                    new_message=new_message,
                    invocation_id=invocation_id,
                )
            ) as events:
                async for event in events:
                    if event.invocation_id:
                        await self._store.update_session(
                            session_id, invocation_id=event.invocation_id
                        )
                    await self._parts.notifier.changed(session_id)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            row = await self._store.require_session(session_id)
            detail = {**row.detail, "error": f"{type(error).__name__}: {error}"}
            await self._store.update_session(session_id, phase="idle", detail=detail)
            return
        await self._after_run(session_id, runner)

    async def _after_run(self, session_id: str, runner: Runner) -> None:
        session = await self._sessions.get_session(
            app_name=runner.app_name, user_id=DEFAULT_USER_ID, session_id=session_id
        )
        assert session is not None
        last = session.events[-1].invocation_id if session.events else ""
        run = classify_run([e for e in session.events if e.invocation_id == last])
        if not run.pending:
            await self._store.update_session(session_id, phase="idle")
            return
        batch = uuid.uuid4().hex
        for call in run.pending:
            payload = {"tool_name": call.name, "call_id": call.call_id, "args": call.args}
            await self._parts.broker.add(
                session_id, "tool_answer", call.author, {**payload, "batch": batch}, waited=False
            )
        await self._store.update_session(session_id, phase="awaiting_tool_answer")

    async def resume_after_tool_answers(self, session_id: str) -> None:
        """Resumes the run once every pending long-running call has its answer."""
        requests = [r for r in await self._store.requests(session_id) if r.kind == "tool_answer"]
        if not requests or any(r.status == "pending" for r in requests):
            return
        row = await self._store.require_session(session_id)
        if row.phase != "awaiting_tool_answer":
            return
        batch = requests[-1].payload["batch"]
        answers = [
            (
                PendingCall(
                    call_id=r.payload["call_id"],
                    name=r.payload["tool_name"],
                    args=r.payload["args"],
                    invocation_id=row.invocation_id or "",
                    author=r.agent_name,
                ),
                r.answer,
            )
            for r in requests
            if r.payload["batch"] == batch and r.status == "answered"
        ]
        await self._store.update_session(session_id, phase="running")
        self._tasks.spawn(session_id, self._drive(session_id, new_message=resume_message(answers)))

    async def adk_session(self, row: SessionRow) -> Session | None:
        """The session as ADK keeps it (None when its target is gone)."""
        target = self._targets.get(row.target)
        if target is None:
            return None
        return await self._sessions.get_session(
            app_name=app_name_for(target.name), user_id=DEFAULT_USER_ID, session_id=row.id
        )

    async def events(self, row: SessionRow) -> list[Event]:
        """The session's events."""
        session = await self.adk_session(row)
        return list(session.events) if session else []

    async def close(self) -> None:
        """Closes the runners."""
        for runner in self._runners.values():
            await runner.close()


def _user_message(target: StudioTarget, message: Any) -> types.Content:
    """A user message for the agent: text, or a value of its input schema (as JSON).

    Raises:
        StudioError: The message is empty, or does not fit the input schema (422).
    """
    agent = target.agent
    input_model = agent.input_schema if isinstance(agent, LlmAgent) else None
    if input_model is not None:
        value, problems = validate_model(input_model, message)
        if problems:
            raise StudioInvalidError("the input does not fit the agent's input schema", problems)
        return user_content(json.dumps(value, ensure_ascii=False))
    if not isinstance(message, str) or not message.strip():
        raise StudioInvalidError("the first message is empty", ["write the user's message"])
    return user_content(message)
