"""Remote mode: `StudioPlugin` sends an app's model calls to a running studio.

Add it to your own ADK `App` (served by ``adk web``, ``adk run`` or your server)::

    studio = StudioPlugin("http://127.0.0.1:8765", token="...", target_agents=["triage"])
    app = App(name="my_app", root_agent=root_agent, plugins=[studio])

Model calls of the targeted agents (all agents when `target_agents` is None)
appear in the studio; the person's answer comes back as the model's response.
Agents not targeted call their real model. Tools run in your app, as always.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import httpx
from google.adk.agents.context import Context
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin

from .._errors import StudioUnavailableError
from ._protocol import (
    MODEL_ANSWERS,
    AnswerError,
    answer_to_response,
    check_answer_shape,
    serialize_request,
)

__all__ = ["StudioPlugin", "StudioUnavailableError"]


class StudioPlugin(BasePlugin):
    """Lets a person in the studio answer the model calls of some agents of this app.

    Args:
        url: The studio's address, e.g. ``http://127.0.0.1:8765``.
        token: The studio's access token (printed when it starts).
        target_agents: Names of the agents whose model the person plays
            (None: every agent).
        poll_seconds: How long each long-poll for the answer waits.
        timeout: Give up after this many seconds without an answer (None: wait).
            It bounds the whole model call: sending it, waiting, and a studio
            that does not respond at all.

    Raises:
        StudioUnavailableError: From a targeted agent's model call, for every failure.
    """

    def __init__(
        self,
        url: str,
        token: str,
        target_agents: Iterable[str] | None = None,
        *,
        poll_seconds: float = 25.0,
        timeout: float | None = None,
    ) -> None:
        super().__init__(name="adk_eval_studio_remote")
        self.url = url.rstrip("/")
        self.token = token
        self.target_agents = None if target_agents is None else frozenset(target_agents)
        self.poll_seconds = poll_seconds
        self.timeout = timeout

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Asks the studio for this model call's answer (targeted agents only)."""
        agent = callback_context.agent_name
        if self.target_agents is not None and agent not in self.target_agents:
            return None
        session = callback_context.session
        payload = serialize_request(llm_request, agent)
        client_session = f"{session.app_name}/{session.user_id}/{session.id}"
        try:
            async with asyncio.timeout(self.timeout):
                answer = await self._ask(client_session, agent, payload)
        except TimeoutError:
            raise StudioUnavailableError(
                f"the studio at {self.url} gave no answer within {self.timeout:g} s"
            ) from None
        return answer_to_response(answer)

    def _garbage(self, what: str, reply: httpx.Response) -> StudioUnavailableError:
        return StudioUnavailableError(
            f"the studio at {self.url} answered {what} with something that is not the studio "
            f"protocol (HTTP {reply.status_code}): {reply.text[:200]!r}"
        )

    async def _ask(
        self, client_session: str, agent: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        headers = {"X-Studio-Token": self.token}
        async with httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=self.poll_seconds + 10
        ) as client:
            try:
                created = await client.post(
                    "/api/remote/model-requests",
                    json={
                        "client_session": client_session,
                        "agent_name": agent,
                        "request": payload,
                    },
                )
                created.raise_for_status()
                request_id = _field(created, "request_id", str)
                if request_id is None:
                    raise self._garbage("the model call", created)
                while True:
                    reply = await client.get(
                        f"/api/remote/model-requests/{request_id}/answer",
                        params={"wait": self.poll_seconds},
                    )
                    reply.raise_for_status()
                    if reply.status_code == 200:
                        answer: dict[str, Any] | None = _field(reply, "answer", dict)
                        if answer is None:
                            raise self._garbage("the wait for an answer", reply)
                        try:
                            check_answer_shape(answer, MODEL_ANSWERS)
                        except AnswerError:
                            raise self._garbage("the wait for an answer", reply) from None
                        return answer
            except httpx.HTTPError as error:
                raise StudioUnavailableError(f"the studio at {self.url} failed: {error}") from error


def _field(reply: httpx.Response, name: str, kind: type) -> Any:
    """``reply``'s JSON ``{name: <kind>}`` value, or None when the reply is not that."""
    try:
        data = reply.json()
    except ValueError:
        return None
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, kind) else None
