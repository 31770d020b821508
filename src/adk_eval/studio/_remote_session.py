"""Remote sessions: model calls a `StudioPlugin` sends from someone else's ADK app.

Each session of that app is one remote session here. The studio only queues the
model calls (the plugin long-polls for the person's answer); the app runs its
tools itself, so a remote session has no events of its own: the page shows the
conversation the latest model call carries.

The plugin also says when it stops waiting for an answer (`abandon`: its
timeout passed, or it failed) and when a run that asked the studio ends
(`run_ended`): the session is then idle, and can be exported, until the app's
next model call.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from .._errors import StudioConflictError, StudioInvalidError, StudioNotFoundError
from ._broker import ANSWER_BY
from ._parts import StudioParts
from ._protocol import request_problems
from ._store import SessionRow

__all__ = ["RemoteSessions", "remote_session_id"]


def remote_session_id(client_session: str) -> str:
    """The studio session of a session of the remote app (the same for every call)."""
    return f"remote-{uuid.uuid5(uuid.NAMESPACE_URL, client_session).hex[:12]}"


class RemoteSessions:
    """Queues the model calls of remote apps; the answers go back through the broker."""

    def __init__(self, parts: StudioParts) -> None:
        self._store = parts.store
        self._notifier = parts.notifier
        self._broker = parts.broker

    async def request(
        self,
        client_session: str,
        agent_name: str,
        payload: dict[str, Any],
        *,
        answer_within: float | None = None,
    ) -> str:
        """Queues a model call (a newer one supersedes what was pending); returns the request id.

        Args:
            client_session: ``app/user/session`` of the remote app's session.
            agent_name: The agent whose model is called.
            payload: The model request, as `protocol.serialize_request` wrote it.
            answer_within: Seconds the app waits for the answer (None: as long as it takes).

        Raises:
            StudioError: (422) `payload` is not shaped like a model request.
        """
        problems = request_problems(payload)
        if problems:
            raise StudioInvalidError("`request` is not a model request (an LlmRequest)", problems)
        session_id = remote_session_id(client_session)
        row = await self._store.get_session(session_id)
        if row is None:
            row = SessionRow(
                id=session_id,
                target=f"remote: {agent_name}",
                kind="remote",
                role="model",
                detail={"client_session": client_session},
            )
            await self._store.add_session(row)
        await self._store.supersede_pending(session_id)
        if answer_within is not None:
            payload = {**payload, ANSWER_BY: time.time() + answer_within}
        request = await self._broker.add(session_id, "model", agent_name, payload)
        detail = {key: value for key, value in row.detail.items() if key != "error"}
        await self._store.update_session(session_id, phase="awaiting_model", detail=detail)
        await self._notifier.changed(session_id)
        return request.id

    async def abandon(self, request_id: str, reason: str) -> None:
        """The app stopped waiting for the answer to `request_id` (`reason` says why).

        Raises:
            StudioError: No such request (404), or not a remote model call (409).
        """
        request = await self._store.get_request(request_id)
        if request is None:
            raise StudioNotFoundError(f"no request {request_id}")
        row = await self._store.require_session(request.session_id)
        if row.kind != "remote":
            raise StudioConflictError(f"request {request_id} is not a remote app's model call")
        await self._broker.abandon(request_id)
        await self._ended(
            row,
            f"The app stopped waiting for the answer to this model call of "
            f"`{request.agent_name}`: {reason[:500]}. An answer given now is not used.",
        )

    async def run_ended(self, client_session: str, error: str | None) -> None:
        """A run of the remote app that asked the studio ended (with `error`, if it failed).

        What is still pending is closed (nobody waits for it), and the session is
        idle: exportable until the app's next model call.

        Raises:
            StudioError: (404) The studio has no session of `client_session`.
        """
        row = await self._store.get_session(remote_session_id(client_session))
        if row is None:
            raise StudioNotFoundError(f"no remote session of {client_session[:200]!r}")
        for request in await self._store.requests(row.id, status="pending"):
            await self._broker.abandon(request.id)
        await self._ended(row, None if error is None else f"The app's run ended with {error[:500]}")

    async def _ended(self, row: SessionRow, error: str | None) -> None:
        """The session is idle; `error` (if any) joins the errors of this run."""
        detail = dict(row.detail)
        if error is not None:
            detail["error"] = "\n".join(filter(None, [detail.get("error"), error]))
        await self._store.update_session(row.id, phase="idle", detail=detail)
        await self._notifier.changed(row.id)
