"""Remote sessions: model calls a `StudioPlugin` sends from someone else's ADK app.

Each session of that app is one remote session here. The studio only queues the
model calls (the plugin long-polls for the person's answer); the app runs its
tools itself, so a remote session has no events of its own: the page shows the
conversation the latest model call carries.
"""

from __future__ import annotations

import uuid
from typing import Any

from .._errors import StudioInvalidError
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

    async def request(self, client_session: str, agent_name: str, payload: dict[str, Any]) -> str:
        """Queues a model call (a newer one supersedes what was pending); returns the request id.

        Args:
            client_session: ``app/user/session`` of the remote app's session.
            agent_name: The agent whose model is called.
            payload: The model request, as `protocol.serialize_request` wrote it.

        Raises:
            StudioError: (422) `payload` is not shaped like a model request.
        """
        problems = request_problems(payload)
        if problems:
            raise StudioInvalidError("`request` is not a model request (an LlmRequest)", problems)
        session_id = remote_session_id(client_session)
        if await self._store.get_session(session_id) is None:
            await self._store.add_session(
                SessionRow(
                    id=session_id,
                    target=f"remote: {agent_name}",
                    kind="remote",
                    role="model",
                    detail={"client_session": client_session},
                )
            )
        await self._store.supersede_pending(session_id)
        row = await self._broker.add(session_id, "model", agent_name, payload)
        await self._store.update_session(session_id, phase="awaiting_model")
        await self._notifier.changed(session_id)
        return row.id
