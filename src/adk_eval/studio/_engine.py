"""The studio engine: ADK runs whose model calls (or user turns) a person answers.

`StudioEngine` is what the server calls. It owns the shared parts and hands
each session to the driver of its kind:

* `agent_session`: a plain agent, run by ADK with the person as its model;
* `case_session`: an `EvalCase`, run by `run_eval` with the person in one role;
* `remote_session`: model calls a `StudioPlugin` sends from another app.

The drivers share `StudioParts`: the store (`store`), the requests waiting for
the person (`broker`), running tools (`tools`), each session's background task
(`tasks`) and change notifications (`notify`). What the page shows is built by
`views`; `export` appends a finished session to its EvalSet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from google.adk.events import Event
from google.adk.sessions.sqlite_session_service import SqliteSessionService

from .._errors import StudioConflictError, StudioInvalidError
from ._agent_session import AgentSessions
from ._case_session import CaseSessions
from ._config import StudioTarget, find_target
from ._export import case_session, export_golden, remote_export_path, remote_session
from ._parts import StudioParts
from ._remote_session import RemoteSessions
from ._store import SessionRow, StudioStore
from ._views import session_summary, session_view

__all__ = ["StudioEngine", "adk_sessions_path"]


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
        self.parts = StudioParts.create(self.store)
        self.agents = AgentSessions(self.parts, self.targets, self.sessions)
        self.cases = CaseSessions(self.parts)
        self.remotes = RemoteSessions(self.parts)

    # -- lifecycle ----------

    async def start(self) -> None:
        """Opens the store and resumes what a restart interrupted."""
        await self.store.open()
        for row in await self.store.sessions():
            if row.status != "active":
                continue
            if row.kind == "agent":
                await self.agents.recover(row)
            elif row.kind == "case":
                await self.cases.recover(row)

    async def stop(self) -> None:
        """Cancels running sessions (their state stays in the store) and closes it."""
        tasks = self.parts.tasks.cancel_all()
        with anyio.CancelScope(shield=True):
            await self.parts.tasks.settle(tasks)
            await self.agents.close()
            await self.sessions.close()
            await self.store.close()

    # -- sessions ----------

    def target(self, name: str) -> StudioTarget:
        """A target by name (404 if unknown)."""
        return find_target(self.targets, name)

    async def create_session(
        self, target_name: str, message: Any = None, role: str = "model"
    ) -> str:
        """Starts a session on a target with a first message (text, or the input schema's value).

        Raises:
            StudioError: Unknown target, bad role, or a first message that does not fit.
        """
        target = self.target(target_name)
        if target.case is not None:
            return await self.cases.create(target, role)
        if role != "model":
            raise StudioInvalidError("in an agent session the person plays the model")
        return await self.agents.create(target, message)

    async def send_message(self, session_id: str, message: Any) -> None:
        """The user's next message in an idle agent session."""
        row = await self.store.require_session(session_id)
        if row.kind != "agent":
            raise StudioConflictError("only agent sessions take new user messages")
        await self.agents.send_message(row, message)

    async def answer(self, request_id: str, answer: Any) -> dict[str, Any]:
        """Records the person's answer to a pending request.

        Raises:
            StudioError: Unknown request (404), already answered (409), or an
                answer that does not fit (422, with the problems).
        """
        answered = await self.parts.broker.answer(request_id, answer)
        session_id = answered.request.session_id
        if not answered.delivered and answered.request.kind == "tool_answer":
            await self.agents.resume_after_tool_answers(session_id)
        await self.parts.notifier.changed(session_id)
        return answered.value

    async def cancel_tool(self, session_id: str, call_id: str) -> None:
        """Cancels a running tool call (it answers with a ``ToolCancelled`` error)."""
        self.parts.tools.cancel(session_id, call_id)

    async def wait_for_change(self, since: int, patience: float) -> tuple[int, dict[str, int]]:
        """Waits until something changed after version `since` (see `Notifier`)."""
        return await self.parts.notifier.wait_for_change(since, patience)

    @property
    def boot(self) -> int:
        """The version this studio started at: a page seeing a new one starts afresh."""
        return self.parts.notifier.boot

    # -- remote sessions (StudioPlugin) ----------

    async def remote_request(
        self,
        client_session: str,
        agent_name: str,
        payload: dict[str, Any],
        *,
        answer_within: float | None = None,
    ) -> str:
        """Queues a model call from a `StudioPlugin` (which waits `answer_within` s); its id."""
        return await self.remotes.request(
            client_session, agent_name, payload, answer_within=answer_within
        )

    async def remote_abandon(self, request_id: str, reason: str) -> None:
        """A `StudioPlugin` stopped waiting for the answer to `request_id`."""
        await self.remotes.abandon(request_id, reason)

    async def remote_run_ended(self, client_session: str, error: str | None) -> None:
        """A run of a remote app that asked the studio ended (with `error`, if it failed)."""
        await self.remotes.run_ended(client_session, error)

    async def remote_answer(self, request_id: str, wait: float) -> dict[str, Any] | None:
        """The answer to a remote request, waiting up to `wait` seconds (None if not yet)."""
        return await self.parts.broker.remote_answer(request_id, wait)

    # -- views and export ----------

    async def _events(self, row: SessionRow) -> list[Event]:
        if row.kind == "agent":
            return await self.agents.events(row)
        if row.kind == "case":
            return await self.cases.events(row)
        return []

    async def list_sessions(self) -> list[dict[str, Any]]:
        """Every session, newest first, in brief."""
        return [session_summary(row) for row in await self.store.sessions()]

    async def view(self, session_id: str) -> dict[str, Any]:
        """Everything the page shows of a session.

        Its ``version`` is read first: a change made while the view is built has
        a higher version, so the page knows to fetch again.
        """
        version = self.parts.notifier.version(session_id)
        row = await self.store.require_session(session_id)
        requests = await self.store.requests(session_id)
        return session_view(
            row,
            version=version,
            requests=requests,
            events=await self._events(row),
            running_tools=self.parts.tools.running(session_id),
            target=self.targets.get(row.target),
            export_path=remote_export_path(row) if row.kind == "remote" else None,
        )

    async def export(self, session_id: str) -> dict[str, Any]:
        """Appends the session's conversation to its target's EvalSet file.

        Raises:
            StudioError: The session cannot be exported yet (409), or the file is
                not a valid EvalSet (it is left untouched).
        """
        row = await self.store.require_session(session_id)
        if not (await self.view(session_id))["can_export"]:
            raise StudioConflictError(
                "finish the conversation first: export needs a user message and a final "
                "response, with nothing pending"
            )
        if row.kind == "remote":
            session = remote_session(row, await self.store.requests(session_id))
            agent = session.events[-1].author  # the played agent gave the final response
            record = await export_golden(
                remote_export_path(row), session, agent_name=agent, app_name=session.app_name
            )
        elif (target := self.target(row.target)).case is not None:
            record = await export_golden(
                target.export_path,
                case_session(row, await self.cases.events(row)),
                agent_name=target.agent.name,
                initial_state=target.case.initial_state,
            )
        else:
            stored = await self.agents.adk_session(row)
            assert stored is not None
            record = await export_golden(target.export_path, stored, agent_name=target.agent.name)
        exports = [*row.detail.get("exports", []), record]
        await self.store.update_session(session_id, detail={**row.detail, "exports": exports})
        await self.parts.notifier.changed(session_id)
        return record
