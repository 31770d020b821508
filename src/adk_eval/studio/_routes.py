"""The routes the studio's page uses: the page itself, the session API and the event stream.

Each concern is a router built over what it serves (the engine, the token), so
that the app only has to include them (`adk_eval.studio._server`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, StreamingResponse

from .._errors import StudioNotFoundError
from .._web import page_with_token, static_file, static_text, stopping
from ._bodies import read_body
from ._engine import StudioEngine
from ._replies import Answered, Created, Done, TargetEntry

__all__ = ["event_routes", "page_routes", "session_routes"]

_STATIC = ("studio.js", "studio.css")
_EVENT_POLL = 0.5
"""Seconds an event stream waits for a change before it looks at the server again."""
_KEEP_ALIVE = 15.0
"""Seconds of quiet after which an event stream sends a comment (proxies keep it open)."""


def page_routes(token: str) -> APIRouter:
    """The page (carrying `token` for its own requests) and its static files."""
    router = APIRouter()

    @router.get("/", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        text = page_with_token(static_text("index.html", __package__), "studio-token", token)
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        response = static_file(name, __package__, _STATIC)
        if response is None:
            raise StudioNotFoundError(f"no static file {name}")
        return response

    return router


def session_routes(engine: StudioEngine) -> APIRouter:
    """The targets, and the sessions the person plays in: create, message, answer, export."""
    router = APIRouter(prefix="/api")

    @router.get("/targets")
    async def targets() -> list[TargetEntry]:
        return [TargetEntry.of(target) for target in engine.targets.values()]

    @router.get("/sessions")
    async def sessions() -> list[dict[str, Any]]:
        return await engine.list_sessions()

    @router.post("/sessions")
    async def create(request: Request) -> Created:
        data = await read_body(request)
        session_id = await engine.create_session(
            str(data.get("target", "")), data.get("message"), str(data.get("role", "model"))
        )
        return Created(id=session_id)

    @router.get("/sessions/{session_id}")
    async def session(session_id: str) -> dict[str, Any]:
        return await engine.view(session_id)

    @router.post("/sessions/{session_id}/messages")
    async def message(session_id: str, request: Request) -> Done:
        await engine.send_message(session_id, (await read_body(request)).get("message"))
        return Done()

    @router.post("/requests/{request_id}/answer")
    async def answer(request_id: str, request: Request) -> Answered:
        return Answered(answer=await engine.answer(request_id, await read_body(request)))

    @router.post("/sessions/{session_id}/tools/{call_id}/cancel")
    async def cancel(session_id: str, call_id: str) -> Done:
        await engine.cancel_tool(session_id, call_id)
        return Done()

    @router.post("/sessions/{session_id}/export")
    async def export(session_id: str) -> dict[str, Any]:
        return await engine.export(session_id)

    return router


def event_routes(engine: StudioEngine) -> APIRouter:
    """The event stream: which sessions changed, as server-sent events."""
    router = APIRouter()

    @router.get("/api/events")
    async def events(request: Request, since: int = 0) -> StreamingResponse:
        return StreamingResponse(
            _changes(engine, request, since),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store"},
        )

    return router


async def _changes(engine: StudioEngine, request: Request, since: int) -> AsyncIterator[str]:
    """``{boot, version, sessions: {id: version}}`` at once, then at each change."""
    version = since
    yield "retry: 1000\n\n"
    # at once: which studio this is, and what changed since the page last looked
    version, changed = await engine.wait_for_change(version, 0)
    hello = {"boot": engine.boot, "version": version, "sessions": changed}
    yield f"data: {json.dumps(hello)}\n\n"
    quiet = 0.0
    # in short waits, so that a shutdown ends the stream (and the server) at once
    while not stopping(request) and not await request.is_disconnected():
        version, changed = await engine.wait_for_change(version, _EVENT_POLL)
        if changed:
            payload = json.dumps({"boot": engine.boot, "version": version, "sessions": changed})
            yield f"data: {payload}\n\n"
            quiet = 0.0
        elif (quiet := quiet + _EVENT_POLL) >= _KEEP_ALIVE:
            yield ": keep-alive\n\n"
            quiet = 0.0
