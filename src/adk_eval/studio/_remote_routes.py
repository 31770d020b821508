"""The routes of remote mode: what a `StudioPlugin` in another ADK app calls.

The plugin queues a model call, polls for the person's answer (204 until there
is one), and says when it stops waiting or when its run ends.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from .._errors import StudioInvalidError
from ._bodies import read_body
from ._engine import StudioEngine
from ._replies import Answered, Done, RemoteRequested

__all__ = ["remote_routes"]

_LONGEST_WAIT = 60.0
"""The most seconds a poll for an answer is held open."""


def _timeout(value: Any) -> float | None:
    """The seconds the app waits for an answer, as it sent them (None: no limit)."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or value < 0
    ):
        raise StudioInvalidError(
            "`timeout` must be the seconds the app waits for the answer (>= 0) or null"
        )
    return value


def remote_routes(engine: StudioEngine) -> APIRouter:
    """The remote-mode API over `engine`."""
    router = APIRouter(prefix="/api/remote")

    @router.post("/model-requests")
    async def remote_request(request: Request) -> RemoteRequested:
        data = await read_body(request)
        model_request = data.get("request", {})
        if not isinstance(model_request, dict):
            raise StudioInvalidError("`request` must be a JSON object (an LlmRequest)")
        request_id = await engine.remote_request(
            str(data.get("client_session", "")),
            str(data.get("agent_name", "")),
            model_request,
            answer_within=_timeout(data.get("timeout")),
        )
        return RemoteRequested(request_id=request_id)

    @router.post("/model-requests/{request_id}/abandon")
    async def remote_abandon(request_id: str, request: Request) -> Done:
        reason = (await read_body(request)).get("reason")
        await engine.remote_abandon(request_id, str(reason or "the app stopped waiting"))
        return Done()

    @router.post("/run-ended")
    async def remote_run_ended(request: Request) -> Done:
        data = await read_body(request)
        error = data.get("error")
        await engine.remote_run_ended(
            str(data.get("client_session", "")), None if error is None else str(error)
        )
        return Done()

    @router.get("/model-requests/{request_id}/answer", response_model=Answered)
    async def remote_answer(request_id: str, wait: float = 25.0) -> Answered | Response:
        answer = await engine.remote_answer(request_id, min(max(wait, 0.0), _LONGEST_WAIT))
        if answer is None:
            return Response(status_code=204)
        return Answered(answer=answer)

    return router
