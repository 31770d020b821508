"""The studio's HTTP server: a FastAPI app over a `StudioEngine`.

Security (`adk_eval._web`, shared with the run viewer): a random access token is
required on **every** request: the page,
its static files, the JSON API and the event stream. It is accepted as the
``X-Studio-Token`` header, as a ``token`` query parameter (the printed URL, and
the event stream, which cannot send headers), or as the cookie the page sets
when it is opened with the token. Requests that change anything must carry the
header, so another site cannot forge them with the cookie; the page it serves
carries the token for its own requests (only a token-holder gets the page, and
another site cannot read it), so a bookmarked URL without the token works too.
The server binds to 127.0.0.1 unless told otherwise.

Limits: request bodies up to `MAX_BODY_BYTES` (413 above), JSON up to
`MAX_JSON_DEPTH` levels, without NaN / Infinity or lone surrogates (400), a
badly shaped body is a 4xx with a message (never a 500), a request `Host` that
is not a loopback name (or the host the server was bound to) gets 421, values
echoed in errors are cut to `MAX_ECHO` characters and problem lists to
`MAX_PROBLEMS` entries, and every response carries a strict
Content-Security-Policy, ``X-Frame-Options: DENY`` and ``Referrer-Policy:
no-referrer``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse

from .._errors import (
    StudioConflictError,
    StudioError,
    StudioGoneError,
    StudioInvalidError,
    StudioNotFoundError,
)
from .._web import (
    MAX_ECHO,
    Access,
    StrictJSONResponse,
    echo,
    guard,
    page_with_token,
    serve,
    static_file,
    static_text,
    stopping,
)
from ._bodies import MAX_BODY_BYTES, MAX_JSON_DEPTH, body_status, read_body
from ._engine import StudioEngine
from ._kinds import Role, tool_user_role
from ._views import agent_view

__all__ = [
    "COOKIE",
    "HEADER",
    "MAX_BODY_BYTES",
    "MAX_ECHO",
    "MAX_JSON_DEPTH",
    "MAX_PROBLEMS",
    "create_app",
]

HEADER = "X-Studio-Token"
COOKIE = "adk_eval_studio"
_STATIC = ("studio.js", "studio.css")
MAX_PROBLEMS = 20
"""Problems an error answer lists at most (then how many more there are)."""


_EVENT_POLL = 0.5
"""Seconds an event stream waits for a change before it looks at the server again."""
_KEEP_ALIVE = 15.0
"""Seconds of quiet after which an event stream sends a comment (proxies keep it open)."""


def _problems(problems: list[str]) -> list[str]:
    """`problems`, each cut by `_echo`, at most `MAX_PROBLEMS` of them (saying how many more)."""
    shown = [echo(problem) for problem in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"… and {len(problems) - MAX_PROBLEMS} more problems")
    return shown


_STATUSES: tuple[tuple[type[StudioError], int], ...] = (
    (StudioGoneError, 410),
    (StudioNotFoundError, 404),
    (StudioConflictError, 409),
    (StudioInvalidError, 422),
)
"""The HTTP status of each kind of `StudioError`, most specific first (only here)."""


def status_of(error: StudioError) -> int:
    """The HTTP status the server answers `error` with."""
    status = body_status(error) if isinstance(error, StudioInvalidError) else None
    if status is not None:
        return status
    return next((status for kind, status in _STATUSES if isinstance(error, kind)), 400)


def create_app(engine: StudioEngine, token: str, *, bound_host: str = "127.0.0.1") -> FastAPI:
    """The studio app; `engine` is started and stopped with it.

    Args:
        engine: What to serve.
        token: The access token every request needs.
        bound_host: The interface the server listens on: requests must name it (or
            a loopback name) in their ``Host`` header; ``0.0.0.0`` / ``::`` accept any.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await engine.start()
        try:
            yield
        finally:
            await engine.stop()

    app = FastAPI(
        title="adk-eval studio",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        default_response_class=StrictJSONResponse,
    )

    guard(app, Access(token, HEADER, COOKIE, "studio", bound_host), cut=echo)

    @app.exception_handler(StudioError)
    async def studio_error(request: Request, error: StudioError) -> JSONResponse:
        return JSONResponse(
            {"error": echo(str(error)), "problems": _problems(error.problems)},
            status_code=status_of(error),
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'/'.join(str(part) for part in e.get('loc', ()))}: {e.get('msg', '')}"
            for e in error.errors()
        ]  # never the offending value itself
        return JSONResponse(
            {"error": "the request does not fit", "problems": _problems(problems)}, 422
        )

    @app.exception_handler(404)
    async def not_found(request: Request, error: Exception) -> JSONResponse:
        return JSONResponse({"error": f"no such page: {echo(request.url.path)}"}, 404)

    @app.get("/", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        text = page_with_token(static_text("index.html", __package__), "studio-token", token)
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        response = static_file(name, __package__, _STATIC)
        if response is None:
            raise StudioNotFoundError(f"no static file {name}")
        return response

    @app.get("/api/targets")
    async def targets() -> list[dict[str, Any]]:
        result = []
        for target in engine.targets.values():
            case = target.case
            roles: list[Role] = ["model"]
            if case is not None:
                if case.user_agents.loop is not None:
                    roles.append("loop_user")
                roles += [tool_user_role(name) for name in case.user_agents.tools]
            result.append(
                {
                    "name": target.name,
                    "kind": "case" if case is not None else "agent",
                    "description": (case.description if case else None) or target.agent.description,
                    "agent": agent_view(target.agent),
                    "roles": roles,
                    "eval_set_path": str(target.export_path),
                    "first_message": case.first_message
                    if case and isinstance(case.first_message, str)
                    else None,
                }
            )
        return result

    @app.get("/api/sessions")
    async def sessions() -> list[dict[str, Any]]:
        return await engine.list_sessions()

    @app.post("/api/sessions")
    async def create(request: Request) -> dict[str, Any]:
        data = await read_body(request)
        session_id = await engine.create_session(
            str(data.get("target", "")), data.get("message"), str(data.get("role", "model"))
        )
        return {"id": session_id}

    @app.get("/api/sessions/{session_id}")
    async def session(session_id: str) -> dict[str, Any]:
        return await engine.view(session_id)

    @app.post("/api/sessions/{session_id}/messages")
    async def message(session_id: str, request: Request) -> dict[str, Any]:
        await engine.send_message(session_id, (await read_body(request)).get("message"))
        return {"ok": True}

    @app.post("/api/requests/{request_id}/answer")
    async def answer(request_id: str, request: Request) -> dict[str, Any]:
        return {"answer": await engine.answer(request_id, await read_body(request))}

    @app.post("/api/sessions/{session_id}/tools/{call_id}/cancel")
    async def cancel(session_id: str, call_id: str) -> dict[str, Any]:
        await engine.cancel_tool(session_id, call_id)
        return {"ok": True}

    @app.post("/api/sessions/{session_id}/export")
    async def export(session_id: str) -> dict[str, Any]:
        return await engine.export(session_id)

    @app.get("/api/events")
    async def events(request: Request, since: int = 0) -> StreamingResponse:
        async def stream() -> AsyncIterator[str]:
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
                    payload = json.dumps(
                        {"boot": engine.boot, "version": version, "sessions": changed}
                    )
                    yield f"data: {payload}\n\n"  # {id: version}
                    quiet = 0.0
                elif (quiet := quiet + _EVENT_POLL) >= _KEEP_ALIVE:
                    yield ": keep-alive\n\n"
                    quiet = 0.0

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    # -- remote mode: StudioPlugin in another ADK app ----------

    @app.post("/api/remote/model-requests")
    async def remote_request(request: Request) -> dict[str, Any]:
        data = await read_body(request)
        model_request = data.get("request", {})
        if not isinstance(model_request, dict):
            raise StudioInvalidError("`request` must be a JSON object (an LlmRequest)")
        timeout = data.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0
        ):
            raise StudioInvalidError(
                "`timeout` must be the seconds the app waits for the answer (>= 0) or null"
            )
        request_id = await engine.remote_request(
            str(data.get("client_session", "")),
            str(data.get("agent_name", "")),
            model_request,
            answer_within=timeout,
        )
        return {"request_id": request_id}

    @app.post("/api/remote/model-requests/{request_id}/abandon")
    async def remote_abandon(request_id: str, request: Request) -> dict[str, Any]:
        reason = (await read_body(request)).get("reason")
        await engine.remote_abandon(request_id, str(reason or "the app stopped waiting"))
        return {"ok": True}

    @app.post("/api/remote/run-ended")
    async def remote_run_ended(request: Request) -> dict[str, Any]:
        data = await read_body(request)
        error = data.get("error")
        await engine.remote_run_ended(
            str(data.get("client_session", "")), None if error is None else str(error)
        )
        return {"ok": True}

    @app.get("/api/remote/model-requests/{request_id}/answer")
    async def remote_answer(request_id: str, wait: float = 25.0) -> Response:
        answer = await engine.remote_answer(request_id, min(max(wait, 0.0), 60.0))
        if answer is None:
            return Response(status_code=204)
        return JSONResponse({"answer": answer})

    return app


def run_studio(
    engine: StudioEngine,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serves the studio until interrupted; announces the URL (with its token) once listening.

    Args:
        engine: What to serve.
        host: Interface to bind (loopback by default).
        port: Port (0 picks a free one; the announced URL has the real port).
        token: The access token (random when None).
        announce: Called with the URL to open.
    """
    serve(
        lambda token, bound: create_app(engine, token, bound_host=bound),
        host=host,
        port=port,
        token=token,
        announce=announce,
    )
