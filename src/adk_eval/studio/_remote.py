"""Remote mode: `StudioPlugin` sends an app's model calls to a running studio.

Add it to your own ADK `App` (served by ``adk web``, ``adk run`` or your server)::

    studio = StudioPlugin("http://127.0.0.1:8765", token="...", target_agents=["triage"])
    app = App(name="my_app", root_agent=root_agent, plugins=[studio])

Model calls of the targeted agents (all agents when `target_agents` is None)
appear in the studio; the person's answer comes back as the model's response.
Agents not targeted call their real model. Tools run in your app, as always.

The plugin also tells the studio when it stops waiting for an answer (so a late
answer is refused there instead of going nowhere) and when a run that asked the
studio ends (so the session there can be exported). Those notices are best
effort, each bounded by `_NOTICE_SECONDS`: a studio that misses one is logged,
never an error of your run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
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

__all__ = ["StudioPlugin", "StudioUnavailableError", "unwrap_studio_errors"]

_log = logging.getLogger(__name__)

_NOTICE_SECONDS = 2.0
"""How long a notice to the studio (gave up, run ended) may take at most."""


@contextmanager
def unwrap_studio_errors() -> Iterator[None]:
    """Raises a `StudioPlugin` failure as the `StudioUnavailableError` it is.

    ADK wraps whatever a plugin raises in a ``RuntimeError`` ("Error in plugin
    ..."), the plugin's error only its ``__cause__``; inside this block that
    wrapper is replaced by the `StudioUnavailableError` behind it, so an
    ``except StudioUnavailableError`` around the block catches it. Other
    errors pass unchanged.

    Example::

        try:
            with unwrap_studio_errors():
                async for event in runner.run_async(...):
                    ...
        except StudioUnavailableError as error:
            print(f"no answer from the studio: {error}")
    """
    try:
        yield
    except RuntimeError as error:
        behind = _studio_error_behind(error)
        if behind is None or behind is error:
            raise
        raise behind from behind.__cause__


def _studio_error_behind(error: BaseException) -> StudioUnavailableError | None:
    """The `StudioUnavailableError` in `error`'s chain of causes, if any."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, StudioUnavailableError):
            return current
        seen.add(id(current))
        current = current.__cause__
    return None


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
        StudioUnavailableError: From a targeted agent's model call, for every
            failure (ADK wraps it in a ``RuntimeError``: see `unwrap_studio_errors`).
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
        # invocation id -> the studio's name for its session, for runs that asked the studio
        self._asking: dict[str, str] = {}

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
        self._asking[callback_context.invocation_id] = client_session
        asked: list[str] = []  # the request id, once the studio has it
        try:
            async with asyncio.timeout(self.timeout):
                answer = await self._ask(client_session, agent, payload, asked)
        except TimeoutError:
            await self._gave_up(asked, f"its timeout ({self.timeout:g} s) passed")
            raise StudioUnavailableError(
                f"the studio at {self.url} gave no answer within {self.timeout:g} s"
            ) from None
        except StudioUnavailableError as error:
            await self._gave_up(asked, str(error))
            raise
        except asyncio.CancelledError:
            await self._gave_up(asked, "the app cancelled the model call")
            raise
        return answer_to_response(answer)

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Tells the studio that a run which asked it ended (its session can be exported)."""
        await self._run_ended(invocation_context, None)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        """Tells the studio that a run which asked it ended with `error`."""
        await self._run_ended(invocation_context, error)

    async def _run_ended(self, context: InvocationContext, error: Exception | None) -> None:
        client_session = self._asking.pop(context.invocation_id, None)
        if client_session is None:  # no targeted model call: the studio never heard of it
            return
        body: dict[str, Any] = {"client_session": client_session}
        if error is not None:
            behind = _studio_error_behind(error) or error
            body["error"] = f"{type(behind).__name__}: {behind}"
        await self._notice("/api/remote/run-ended", body)

    async def _gave_up(self, asked: list[str], reason: str) -> None:
        if asked:
            await self._notice(f"/api/remote/model-requests/{asked[0]}/abandon", {"reason": reason})

    async def _notice(self, path: str, body: dict[str, Any]) -> None:
        """Posts a notice to the studio; a failure is logged, never raised into the run."""
        try:
            async with httpx.AsyncClient(
                base_url=self.url,
                headers={"X-Studio-Token": self.token},
                timeout=_NOTICE_SECONDS,
            ) as client:
                (await client.post(path, json=body)).raise_for_status()
        except httpx.HTTPError as error:
            _log.warning("the studio at %s missed a notice (%s): %s", self.url, path, error)

    def _garbage(self, what: str, reply: httpx.Response) -> StudioUnavailableError:
        return StudioUnavailableError(
            f"the studio at {self.url} answered {what} with something that is not the studio "
            f"protocol (HTTP {reply.status_code}): {reply.text[:200]!r}"
        )

    async def _ask(
        self, client_session: str, agent: str, payload: dict[str, Any], asked: list[str]
    ) -> dict[str, Any]:
        started = time.monotonic()
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
                        "timeout": None
                        if self.timeout is None
                        else max(self.timeout - (time.monotonic() - started), 0.0),
                    },
                )
                created.raise_for_status()
                request_id = _field(created, "request_id", str)
                if request_id is None:
                    raise self._garbage("the model call", created)
                asked.append(request_id)
                return await self._wait(client, request_id)
            except httpx.HTTPError as error:
                raise StudioUnavailableError(f"the studio at {self.url} failed: {error}") from error

    async def _wait(self, client: httpx.AsyncClient, request_id: str) -> dict[str, Any]:
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


def _field(reply: httpx.Response, name: str, kind: type) -> Any:
    """``reply``'s JSON ``{name: <kind>}`` value, or None when the reply is not that."""
    try:
        data = reply.json()
    except ValueError:
        return None
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, kind) else None
