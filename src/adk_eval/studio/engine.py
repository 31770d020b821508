"""The studio engine: ADK runs whose model calls (or user turns) a person answers.

**Agent sessions** (a `SimulatedAgentConfig`). The agent runs in a real ADK
`Runner` over ADK's `SqliteSessionService`, with a resumable App and the
`HumanModelPlugin`: every model call becomes a pending request, and the
person's answer is returned from ``before_model_callback`` as the model's
response. ADK then executes the tools the answer calls, the real ones, exactly
as it would for a model. A tool that raises gives a ``{"error": {...}}``
response and the session goes on; a running async tool can be cancelled. A
long-running tool pauses the run until the person supplies its response. After
a server restart, an interrupted invocation is resumed with ADK's resumability
(the pending model call is asked again; finished tools do not run again).

**Eval-case sessions** (an `EvalCase`). `run_eval` runs the case with its mocks,
user agents, bridge, initial state and termination; the person plays either the
system's model or one of the user agents (`HumanUserAgent`). Events are copied
to the studio tables as they happen; a restart keeps the history (exportable)
and marks the run interrupted.

**Remote sessions** (`StudioPlugin` in someone else's App) only queue model
requests; their tools run in that App.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import json
import re
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.context import Context
from google.adk.apps import App, ResumabilityConfig
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from ..bridge import YieldInfo
from ..goldens.evalset import append_eval_case
from ..goldens.export import to_eval_case
from ..interception import is_control_tool
from ..mocks import ToolMock, normalize_response
from .._turns import classify_run
from ..simulation import run_eval
from ..state import flatten_state
from ..user_agents import STOP, HumanUserAgent
from .config import StudioTarget
from .protocol import AnswerError, answer_to_response, serialize_request, validate_answer
from .schemas import model_schema
from .store import RequestRow, SessionRow, StudioStore
from .views import entries_from_contents, entries_from_events

__all__ = ["HumanModelPlugin", "StudioEngine", "StudioError"]

USER_ID = "studio_user"
_CURRENT_SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "adk_eval_studio_session", default=None
)


class StudioError(Exception):
    """A request the studio cannot carry out (`status` is the HTTP status to answer with)."""

    def __init__(self, message: str, status: int = 409, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problems = problems or []


def app_name_for(name: str) -> str:
    """A valid ADK app name for a studio target."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "studio"
    return cleaned if cleaned[0].isalpha() else f"a_{cleaned}"


@dataclass
class _RunningTool:
    call_id: str
    name: str
    args: dict[str, Any]
    started_at: float
    task: asyncio.Future[Any]
    cancel_requested: bool = False


@dataclass
class _Waiter:
    future: asyncio.Future[Any]
    output_model: Any = None


class HumanModelPlugin(BasePlugin):
    """Routes the model calls (and tool runs) of studio sessions to the engine."""

    def __init__(
        self,
        engine: StudioEngine,
        root: BaseAgent,
        notes: Callable[[LlmRequest], dict[str, str]] | None = None,
    ):
        super().__init__(name="adk_eval_studio")
        self.engine = engine
        self.root = root
        self.notes = notes

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Waits for the person to answer the model call."""
        session_id = _CURRENT_SESSION.get()
        if session_id is None:
            return None
        agent = self.root.find_agent(callback_context.agent_name)
        output_model = agent.output_schema if isinstance(agent, LlmAgent) else None
        payload = serialize_request(
            llm_request,
            callback_context.agent_name,
            output_schema=output_model,
            tool_notes=self.notes(llm_request) if self.notes else None,
        )
        answer = await self.engine.wait_for_model(
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
        session_id = _CURRENT_SESSION.get()
        if session_id is None or type(tool) is BaseTool:
            return None
        if is_control_tool(tool) or tool.is_long_running:
            return None
        if await tool.check_require_confirmation(tool_args, tool_context) is True:
            return None
        return await self.engine.run_tool(session_id, tool, tool_args, tool_context)

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """A tool ADK ran itself raised: an error response, and the session goes on."""
        if _CURRENT_SESSION.get() is None:
            return None
        return {"error": {"type": type(error).__name__, "message": str(error)}}


class _Recorder(BasePlugin):
    """Keeps a copy of an eval-case session's events in the studio tables.

    ADK appends user messages (and answers to yields) straight to the session,
    without plugin callbacks, so the recorder reads the run's own session
    (captured on the main runner's first run) and copies what is new.
    """

    def __init__(self, engine: StudioEngine, session_id: str) -> None:
        super().__init__(name="adk_eval_studio_recorder")
        self.engine = engine
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
        await self.engine.changed(self.session_id)
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
            await self.engine.store.add_event(self.session_id, event.model_dump_json())
        self._stored = len(events)


def _summary(row: SessionRow) -> dict[str, Any]:
    """A session in brief: what the list and the full view share."""
    return {
        "id": row.id,
        "target": row.target,
        "kind": row.kind,
        "role": row.role,
        "status": row.status,
        "phase": row.phase,
        "created_at": row.created_at,
    }


def adk_sessions_path(db_path: Path) -> Path:
    """Where ADK's `SqliteSessionService` keeps a studio's sessions (``studio.adk.db``)."""
    return db_path.with_suffix(".adk.db")


class StudioEngine:
    """Owns the studio's sessions, their ADK runs and what waits for the person."""

    def __init__(self, targets: list[StudioTarget], db_path: Path) -> None:
        self.targets = {target.name: target for target in targets}
        self.db_path = db_path
        self.store = StudioStore(db_path)
        # ADK's sessions live next to the studio's tables, in their own file: two writers
        # on one SQLite file lock each other out under load.
        self.sessions = SqliteSessionService(str(adk_sessions_path(db_path)))
        self._runners: dict[str, Runner] = {}
        self._waiters: dict[str, _Waiter] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._running: dict[str, dict[str, _RunningTool]] = {}
        self._recorders: dict[str, _Recorder] = {}
        self._version = 0
        self._versions: dict[str, int] = {}
        self._condition = asyncio.Condition()

    # -- lifecycle ----------

    async def start(self) -> None:
        """Opens the store and resumes what a restart interrupted."""
        await self.store.open()
        for row in await self.store.sessions():
            if row.status != "active":
                continue
            if row.kind == "agent" and row.target in self.targets:
                if row.phase in ("awaiting_model", "running"):
                    await self.store.supersede_pending(row.id)
                    if row.invocation_id:
                        self._spawn(row.id, self._drive(row.id, invocation_id=row.invocation_id))
                    else:
                        await self.store.update_session(row.id, phase="idle")
            elif row.kind == "case" and row.phase != "finished":
                await self.store.supersede_pending(row.id)
                detail = {
                    **row.detail,
                    "error": "the server restarted during this run; its history is kept",
                }
                await self.store.update_session(
                    row.id, status="interrupted", phase="finished", detail=detail
                )

    async def stop(self) -> None:
        """Cancels running sessions (their state stays in the store) and closes it."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        with anyio.CancelScope(shield=True):
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            for runner in self._runners.values():
                await runner.close()
            await self.sessions.close()
            await self.store.close()

    def _spawn(self, session_id: str, coroutine: Awaitable[None]) -> None:
        async def run() -> None:
            _CURRENT_SESSION.set(session_id)
            try:
                await coroutine
            finally:
                self._tasks.pop(session_id, None)
                await self.changed(session_id)

        self._tasks[session_id] = asyncio.ensure_future(run())

    # -- change notifications (for the page's event stream) ----------

    async def changed(self, session_id: str) -> None:
        """Tells listeners that a session changed."""
        async with self._condition:
            self._version += 1
            self._versions[session_id] = self._version
            self._condition.notify_all()

    async def wait_for_change(self, since: int, patience: float) -> tuple[int, dict[str, int]]:
        """Waits until something changed after version `since` (or `patience` seconds).

        Returns:
            The current version, and each session changed since `since` with
            the version of its latest change.
        """
        async with self._condition:
            if self._version <= since:
                with anyio.move_on_after(patience):
                    await self._condition.wait()
            changed = {sid: version for sid, version in self._versions.items() if version > since}
            return self._version, changed

    # -- waiting for the person ----------

    async def _new_request(
        self,
        session_id: str,
        kind: str,
        agent_name: str,
        payload: dict[str, Any],
        output_model: Any = None,
    ) -> tuple[RequestRow, asyncio.Future[Any]]:
        row = RequestRow(
            id=uuid.uuid4().hex,
            session_id=session_id,
            kind=kind,
            agent_name=agent_name,
            payload=payload,
        )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters[row.id] = _Waiter(future, output_model)
        await self.store.add_request(row)
        return row, future

    async def wait_for_model(
        self,
        session_id: str,
        agent_name: str,
        invocation_id: str,
        payload: dict[str, Any],
        output_model: Any,
    ) -> dict[str, Any]:
        """Queues a model call for the person and waits for the answer."""
        row, future = await self._new_request(
            session_id, "model", agent_name, payload, output_model
        )
        await self.store.update_session(
            session_id, phase="awaiting_model", invocation_id=invocation_id
        )
        await self.changed(session_id)
        try:
            answer: dict[str, Any] = await future
        finally:
            self._waiters.pop(row.id, None)
        await self.store.update_session(session_id, phase="running")
        await self.changed(session_id)
        return answer

    async def wait_for_user(
        self, session_id: str, agent_name: str, prompt: str, info: YieldInfo | None
    ) -> Any:
        """Queues a user-agent turn for the person (they play a user agent) and waits."""
        payload = {
            "prompt": prompt,
            "yield": dataclasses.asdict(info) if info is not None else None,
        }
        row, future = await self._new_request(session_id, "user", agent_name, payload)
        if session_id in self._recorders:
            await self._recorders[session_id].sync()
        await self.store.update_session(session_id, phase="awaiting_user")
        await self.changed(session_id)
        try:
            answer = await future
        finally:
            self._waiters.pop(row.id, None)
        await self.store.update_session(session_id, phase="running")
        await self.changed(session_id)
        if answer["type"] == "stop":
            return STOP
        return answer["value"] if answer["type"] == "value" else answer["text"]

    async def answer(self, request_id: str, answer: Any) -> dict[str, Any]:
        """Records the person's answer to a pending request.

        Raises:
            StudioError: Unknown request (404), already answered (409), or an
                answer that does not fit (422, with the problems).
        """
        row = await self.store.get_request(request_id)
        if row is None:
            raise StudioError(f"no request {request_id}", 404)
        if row.status != "pending":
            raise StudioError(f"request {request_id} is {row.status}; reload the session", 409)
        waiter = self._waiters.get(request_id)
        try:
            if row.kind == "model":
                normalised = validate_answer(
                    row.payload, answer, output_model=waiter.output_model if waiter else None
                )
            elif row.kind == "user":
                normalised = _user_answer(answer)
            else:
                normalised = _tool_answer(answer)
        except AnswerError as error:
            raise StudioError("the answer does not fit the request", 422, error.problems) from None
        await self.store.answer_request(request_id, normalised)
        if waiter is not None and not waiter.future.done():
            waiter.future.set_result(normalised)
        elif row.kind == "tool_answer":
            await self._resume_after_tool_answers(row.session_id)
        await self.changed(row.session_id)
        return normalised

    # -- tools ----------

    async def run_tool(
        self, session_id: str, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any]:
        """Runs a tool the way ADK would, timed and cancellable; errors become responses."""
        call_id = tool_context.function_call_id or uuid.uuid4().hex
        task = asyncio.ensure_future(tool.run_async(args=args, tool_context=tool_context))
        running = _RunningTool(call_id, tool.name, dict(args), time.time(), task)
        self._running.setdefault(session_id, {})[call_id] = running
        await self.changed(session_id)
        try:
            return normalize_response(await task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if running.cancel_requested and not (current and current.cancelling()):
                elapsed = time.time() - running.started_at
                return {
                    "error": {
                        "type": "ToolCancelled",
                        "message": f"cancelled by the person after {elapsed:.1f}s",
                    }
                }
            raise
        except Exception as error:
            return {"error": {"type": type(error).__name__, "message": str(error)}}
        finally:
            self._running.get(session_id, {}).pop(call_id, None)
            await self.changed(session_id)

    async def cancel_tool(self, session_id: str, call_id: str) -> None:
        """Cancels a running tool call (it answers with a ``ToolCancelled`` error)."""
        running = self._running.get(session_id, {}).get(call_id)
        if running is None:
            raise StudioError(f"no running tool call {call_id} in session {session_id}", 404)
        running.cancel_requested = True
        running.task.cancel()

    # -- agent sessions ----------

    def target(self, name: str) -> StudioTarget:
        """A target by name (404 if unknown)."""
        try:
            return self.targets[name]
        except KeyError:
            raise StudioError(f"no target named {name!r}", 404) from None

    def _runner(self, target: StudioTarget) -> Runner:
        runner = self._runners.get(target.name)
        if runner is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # ResumabilityConfig is experimental
                app = App(
                    name=app_name_for(target.name),
                    root_agent=target.agent,
                    plugins=[HumanModelPlugin(self, target.agent)],
                    resumability_config=ResumabilityConfig(is_resumable=True),
                )
            runner = Runner(app=app, session_service=self.sessions)
            self._runners[target.name] = runner
        return runner

    async def create_session(
        self, target_name: str, message: Any = None, role: str = "model"
    ) -> str:
        """Starts a session on a target with a first message (text, or the input schema's value).

        Raises:
            StudioError: Unknown target, bad role, or a first message that does not fit.
        """
        target = self.target(target_name)
        if target.case is not None:
            return await self._create_case_session(target, role)
        if role != "model":
            raise StudioError("in an agent session the person plays the model", 422)
        content = self._first_message(target, message)
        runner = self._runner(target)
        session = await self.sessions.create_session(app_name=runner.app_name, user_id=USER_ID)
        await self.store.add_session(
            SessionRow(id=session.id, target=target.name, kind="agent", role="model")
        )
        self._spawn(session.id, self._drive(session.id, new_message=content))
        return session.id

    def _first_message(self, target: StudioTarget, message: Any) -> types.Content:
        agent = target.agent
        input_model = agent.input_schema if isinstance(agent, LlmAgent) else None
        if input_model is not None:
            from .schemas import validate_model

            value, problems = validate_model(input_model, message)
            if problems:
                raise StudioError("the input does not fit the agent's input schema", 422, problems)
            text = json.dumps(value, ensure_ascii=False)
        else:
            if not isinstance(message, str) or not message.strip():
                raise StudioError("the first message is empty", 422, ["write the user's message"])
            text = message
        return types.Content(role="user", parts=[types.Part(text=text)])

    async def send_message(self, session_id: str, message: Any) -> None:
        """The user's next message in an idle agent session."""
        row = await self._row(session_id)
        if row.kind != "agent":
            raise StudioError("only agent sessions take new user messages", 409)
        if row.phase != "idle" or session_id in self._tasks:
            raise StudioError(f"the session is {row.phase}; wait until the agent has answered", 409)
        content = self._first_message(self.target(row.target), message)
        await self.store.update_session(session_id, phase="running")
        self._spawn(session_id, self._drive(session_id, new_message=content))

    async def _drive(
        self,
        session_id: str,
        *,
        new_message: types.Content | None = None,
        invocation_id: str | None = None,
    ) -> None:
        row = await self._row(session_id)
        runner = self._runner(self.target(row.target))
        await self.store.update_session(session_id, phase="running")
        try:
            async with aclosing(
                runner.run_async(
                    user_id=USER_ID,
                    session_id=session_id,
                    new_message=new_message,
                    invocation_id=invocation_id,
                )
            ) as events:
                async for event in events:
                    if event.invocation_id:
                        await self.store.update_session(
                            session_id, invocation_id=event.invocation_id
                        )
                    await self.changed(session_id)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            row = await self._row(session_id)
            detail = {**row.detail, "error": f"{type(error).__name__}: {error}"}
            await self.store.update_session(session_id, phase="idle", detail=detail)
            return
        await self._after_run(session_id, runner)

    async def _after_run(self, session_id: str, runner: Runner) -> None:
        session = await self.sessions.get_session(
            app_name=runner.app_name, user_id=USER_ID, session_id=session_id
        )
        assert session is not None
        last = session.events[-1].invocation_id if session.events else ""
        turn = classify_run([e for e in session.events if e.invocation_id == last])
        if not turn.pending:
            await self.store.update_session(session_id, phase="idle")
            return
        batch = uuid.uuid4().hex
        for call in turn.pending:
            row, _ = await self._new_request(
                session_id,
                "tool_answer",
                call.author,
                {
                    "tool_name": call.name,
                    "call_id": call.call_id,
                    "args": call.args,
                    "batch": batch,
                },
            )
            self._waiters.pop(row.id, None)
        await self.store.update_session(session_id, phase="awaiting_tool_answer")

    async def _resume_after_tool_answers(self, session_id: str) -> None:
        requests = [r for r in await self.store.requests(session_id) if r.kind == "tool_answer"]
        if not requests or any(r.status == "pending" for r in requests):
            return
        row = await self._row(session_id)
        if row.phase != "awaiting_tool_answer":
            return
        batch = requests[-1].payload["batch"]
        answered = [r for r in requests if r.payload["batch"] == batch and r.status == "answered"]
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=r.payload["call_id"], name=r.payload["tool_name"], response=r.answer
                )
            )
            for r in answered
        ]
        await self.store.update_session(session_id, phase="running")
        self._spawn(
            session_id, self._drive(session_id, new_message=types.Content(role="user", parts=parts))
        )

    # -- eval-case sessions ----------

    async def _create_case_session(self, target: StudioTarget, role: str) -> str:
        case = target.case
        assert case is not None
        roles = {"model", "loop_user", *(f"tool_user:{name}" for name in case.user_agents.tools)}
        if role not in roles:
            raise StudioError(f"role must be one of {sorted(roles)}", 422)
        if role == "loop_user" and case.user_agents.loop is None and case.first_message is not None:
            raise StudioError("this case has no loop user agent to play", 422)
        session_id = f"case-{uuid.uuid4().hex[:12]}"
        await self.store.add_session(
            SessionRow(id=session_id, target=target.name, kind="case", role=role)
        )
        self._spawn(session_id, self._drive_case(session_id, target, role))
        return session_id

    def _case_notes(self, target: StudioTarget) -> Callable[[LlmRequest], dict[str, str]]:
        case = target.case
        assert case is not None

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

    async def _drive_case(self, session_id: str, target: StudioTarget, role: str) -> None:
        case = target.case
        assert case is not None
        recorder = self._recorders[session_id] = _Recorder(self, session_id)
        plugins: list[BasePlugin] = [recorder]
        if role == "model":
            plugins.insert(0, HumanModelPlugin(self, case.root_agent, self._case_notes(target)))
        app_plugins = list(case.agent.plugins) if isinstance(case.agent, App) else []
        app = App(
            name=app_name_for(target.name),
            root_agent=case.root_agent,
            plugins=[*plugins, *app_plugins],
        )
        user_agents = case.user_agents

        def human(agent: BaseAgent | None) -> HumanUserAgent:
            name = agent.name if agent is not None else "person"

            async def respond(prompt: str, info: YieldInfo | None) -> Any:
                return await self.wait_for_user(session_id, name, prompt, info)

            return HumanUserAgent(name=name, respond=respond)

        if role == "loop_user":
            user_agents = dataclasses.replace(user_agents, loop=human(user_agents.loop))
        elif role.startswith("tool_user:"):
            tool = role.removeprefix("tool_user:")
            tools = {**user_agents.tools, tool: human(user_agents.tools[tool])}
            user_agents = dataclasses.replace(user_agents, tools=tools)
        await self.store.update_session(session_id, phase="running")
        try:
            result = await run_eval(dataclasses.replace(case, agent=app, user_agents=user_agents))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            row = await self._row(session_id)
            detail = {**row.detail, "error": f"{type(error).__name__}: {error}"}
            await self.store.update_session(
                session_id, phase="finished", status="completed", detail=detail
            )
            return
        await self.store.db.execute("DELETE FROM studio_events WHERE session_id = ?", (session_id,))
        await self.store.db.commit()
        for event in result.events:
            await self.store.add_event(session_id, event.model_dump_json())
        row = await self._row(session_id)
        summary = {
            "status": result.status,
            "turns": result.turns,
            "termination": str(result.termination) if result.termination else None,
            "error": result.error.message if result.error else None,
            "metrics": {
                name: {"passed": m.passed, "score": m.score, "evidence": list(m.evidence)}
                for name, m in result.metrics.items()
            },
            "final_state": json.loads(json.dumps(result.final_state, default=repr)),
            "explanation": result.explain(),
        }
        await self.store.update_session(
            session_id,
            phase="finished",
            status="completed",
            detail={**row.detail, "result": summary},
        )

    # -- remote sessions (StudioPlugin) ----------

    async def remote_request(
        self, client_session: str, agent_name: str, payload: dict[str, Any]
    ) -> str:
        """Queues a model call from a `StudioPlugin`; returns the request id."""
        session_id = f"remote-{uuid.uuid5(uuid.NAMESPACE_URL, client_session).hex[:12]}"
        if await self.store.get_session(session_id) is None:
            await self.store.add_session(
                SessionRow(
                    id=session_id,
                    target=f"remote: {agent_name}",
                    kind="remote",
                    role="model",
                    detail={"client_session": client_session},
                )
            )
        await self.store.supersede_pending(session_id)
        row, _ = await self._new_request(session_id, "model", agent_name, payload)
        await self.store.update_session(session_id, phase="awaiting_model")
        await self.changed(session_id)
        return row.id

    async def remote_answer(self, request_id: str, wait: float) -> dict[str, Any] | None:
        """The answer to a remote request, waiting up to `wait` seconds (None if not yet)."""
        row = await self.store.get_request(request_id)
        if row is None:
            raise StudioError(f"no request {request_id}", 404)
        if row.status == "answered":
            return dict(row.answer)
        if row.status != "pending":
            raise StudioError(f"request {request_id} was {row.status}", 410)
        waiter = self._waiters.get(request_id)
        if waiter is None:
            waiter = self._waiters[request_id] = _Waiter(asyncio.get_running_loop().create_future())
        try:
            answer: dict[str, Any] = await asyncio.wait_for(asyncio.shield(waiter.future), wait)
        except TimeoutError:
            return None
        await self.store.update_session(row.session_id, phase="running")
        return answer

    # -- views and export ----------

    async def _row(self, session_id: str) -> SessionRow:
        row = await self.store.get_session(session_id)
        if row is None:
            raise StudioError(f"no session {session_id}", 404)
        return row

    async def _events(self, row: SessionRow) -> list[Event]:
        if row.kind == "agent":
            target = self.targets.get(row.target)
            if target is None:
                return []
            session = await self.sessions.get_session(
                app_name=app_name_for(target.name), user_id=USER_ID, session_id=row.id
            )
            return list(session.events) if session else []
        recorder = self._recorders.get(row.id)
        live = await recorder.live_events() if recorder is not None else None
        if live is not None:
            return live
        return [Event.model_validate_json(text) for text in await self.store.events(row.id)]

    async def list_sessions(self) -> list[dict[str, Any]]:
        """Every session, newest first, in brief."""
        return [_summary(row) for row in await self.store.sessions()]

    async def view(self, session_id: str) -> dict[str, Any]:
        """Everything the page shows of a session.

        Its ``version`` is read first: a change made while the view is built has
        a higher version, so the page knows to fetch again.
        """
        version = self._versions.get(session_id, 0)
        row = await self._row(session_id)
        requests = await self.store.requests(session_id)
        pending = [
            {
                "id": r.id,
                "kind": r.kind,
                "agent_name": r.agent_name,
                "payload": r.payload,
                "created_at": r.created_at,
            }
            for r in requests
            if r.status == "pending"
        ]
        if row.kind == "remote":
            model_requests = [r for r in requests if r.kind == "model"]
            entries = (
                entries_from_contents(model_requests[-1].payload["contents"])
                if model_requests
                else []
            )
            last = model_requests[-1] if model_requests else None
            if (
                last is not None
                and last.status == "answered"
                and last.answer
                and last.answer["type"] != "tool_calls"
            ):
                text = last.answer.get("text") or json.dumps(last.answer.get("value"))
                entries.append(
                    {
                        "kind": "final",
                        "text": text,
                        "author": last.agent_name,
                        "at": last.answered_at,
                    }
                )
        else:
            entries = entries_from_events(await self._events(row))
        target = self.targets.get(row.target)
        agent = target.agent if target is not None else None
        return {
            **_summary(row),
            "version": version,
            "agent": _agent_view(agent),
            "entries": entries,
            "pending": pending,
            "running_tools": [
                {"call_id": r.call_id, "name": r.name, "args": r.args, "started_at": r.started_at}
                for r in self._running.get(session_id, {}).values()
            ],
            "exports": row.detail.get("exports", []),
            "result": row.detail.get("result"),
            "error": row.detail.get("error"),
            "can_export": self._exportable(row, entries, pending),
            "eval_set_path": str(target.export_path) if target is not None else None,
        }

    @staticmethod
    def _exportable(row: SessionRow, entries: list[dict[str, Any]], pending: list[Any]) -> bool:
        if row.kind == "remote" or pending or row.phase in ("running", "awaiting_model"):
            return False
        return any(e["kind"] == "user" for e in entries) and any(
            e["kind"] == "final" for e in entries
        )

    async def export(self, session_id: str) -> dict[str, Any]:
        """Appends the session's conversation to its target's EvalSet file.

        Raises:
            StudioError: The session cannot be exported yet (409), or the file is
                not a valid EvalSet (it is left untouched).
        """
        row = await self._row(session_id)
        view = await self.view(session_id)
        if not view["can_export"]:
            raise StudioError(
                "finish the conversation first: export needs a user message and a final "
                "response, with nothing pending",
                409,
            )
        target = self.target(row.target)
        events = await self._events(row)
        if row.kind == "case":
            assert target.case is not None
            final_state = flatten_state((row.detail.get("result") or {}).get("final_state", {}))
            session = Session(
                id=row.id, app_name="studio", user_id=USER_ID, events=events, state=final_state
            )
            initial = target.case.initial_state
        else:
            stored = await self.sessions.get_session(
                app_name=app_name_for(target.name), user_id=USER_ID, session_id=row.id
            )
            assert stored is not None
            session, initial = stored, None
        agent = target.agent
        golden = to_eval_case(
            session, agent_name=agent.name, app_name=agent.name, initial_state=initial
        )
        from ..goldens.evalset import EvalSetFileError

        try:
            result = await anyio.to_thread.run_sync(
                append_eval_case, target.export_path, golden, agent.name
            )
        except EvalSetFileError as error:
            raise StudioError(str(error), 409) from None
        record = {
            "path": str(result.path),
            "eval_id": result.eval_id,
            "cases": result.cases,
            "created": result.created,
            "at": time.time(),
        }
        await self.store.update_session(
            session_id, detail={**row.detail, "exports": [*row.detail.get("exports", []), record]}
        )
        await self.changed(session_id)
        return record


def _agent_view(agent: BaseAgent | None) -> dict[str, Any] | None:
    if agent is None:
        return None
    llm = agent if isinstance(agent, LlmAgent) else None
    instruction = llm.instruction if llm is not None and isinstance(llm.instruction, str) else ""
    return {
        "name": agent.name,
        "description": agent.description,
        "instruction": instruction,
        "input_schema": model_schema(llm.input_schema) if llm is not None else None,
        "output_schema": model_schema(llm.output_schema) if llm is not None else None,
    }


def _user_answer(answer: Any) -> dict[str, Any]:
    if isinstance(answer, dict) and answer.get("type") == "stop":
        return {"type": "stop"}
    if isinstance(answer, dict) and answer.get("type") == "value" and "value" in answer:
        return {"type": "value", "value": answer["value"]}
    if (
        isinstance(answer, dict)
        and answer.get("type") == "text"
        and str(answer.get("text", "")).strip()
    ):
        return {"type": "text", "text": str(answer["text"])}
    raise AnswerError(["answer with {type: text, text}, {type: value, value} or {type: stop}"])


def _tool_answer(answer: Any) -> dict[str, Any]:
    if isinstance(answer, dict) and answer.get("type") == "value":
        return normalize_response(answer.get("value"))
    if (
        isinstance(answer, dict)
        and answer.get("type") == "text"
        and str(answer.get("text", "")).strip()
    ):
        return {"result": str(answer["text"])}
    raise AnswerError(["answer the tool with {type: text, text} or {type: value, value}"])
