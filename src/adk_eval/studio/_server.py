"""The studio's HTTP server: a FastAPI app over a `StudioEngine`.

The app is its guard, its error answers and its routers: the page, the session
API and the event stream (`_routes`), and remote mode (`_remote_routes`).

Security (`adk_eval._web`, shared with the run viewer): a random access token is
required on **every** request: the page,
its static files, the JSON API and the event stream. It is accepted as the
``X-Studio-Token`` header, as a ``token`` query parameter (the printed URL, and
the event stream, which cannot send headers), or as the cookie the page sets
when it is opened with the token. Requests that change anything must carry the
header, so another site cannot forge them with the cookie; the page it serves
carries the token for its own requests (only a token-holder gets the page, and
another site cannot read it), so a bookmarked URL without the token works too.
The server binds to 127.0.0.1 unless told otherwise, and refuses a host that
is not loopback unless allowed (``allow_remote``, ``--allow-remote``).

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

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from .._errors import (
    StudioConflictError,
    StudioError,
    StudioGoneError,
    StudioInvalidError,
    StudioNotFoundError,
)
from .._web import MAX_ECHO, Access, StrictJSONResponse, echo, guard, serve
from ._bodies import MAX_BODY_BYTES, MAX_JSON_DEPTH, body_status
from ._engine import StudioEngine
from ._remote_routes import remote_routes
from ._routes import event_routes, page_routes, session_routes

__all__ = [
    "COOKIE",
    "HEADER",
    "MAX_BODY_BYTES",
    "MAX_ECHO",
    "MAX_JSON_DEPTH",
    "MAX_PROBLEMS",
    "create_app",
    "status_of",
]

HEADER = "X-Studio-Token"
COOKIE = "adk_eval_studio"
MAX_PROBLEMS = 20
"""Problems an error answer lists at most (then how many more there are)."""


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


def _answer_errors(app: FastAPI) -> None:
    """Errors become ``{"error", "problems"}`` answers (a page that is not, ``{"error"}``)."""

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
    _answer_errors(app)
    app.include_router(page_routes(token))
    app.include_router(session_routes(engine))
    app.include_router(event_routes(engine))
    app.include_router(remote_routes(engine))  # StudioPlugin, in another ADK app
    return app


def run_studio(
    engine: StudioEngine,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    announce: Callable[[str], None] = print,
    allow_remote: bool = False,
) -> None:
    """Serves the studio until interrupted; announces the URL (with its token) once listening.

    Args:
        engine: What to serve.
        host: Interface to bind: a loopback address unless `allow_remote`.
        port: Port (0 picks a free one; the announced URL has the real port).
        token: The access token (random when None).
        announce: Called with the URL to open.
        allow_remote: Allows a `host` that is not loopback (anyone who reaches it
            and has the token can run the agent's tools).

    Raises:
        EvalSetupError: A `host` that is not loopback, without `allow_remote`.
    """
    serve(
        lambda token, bound: create_app(engine, token, bound_host=bound),
        host=host,
        port=port,
        token=token,
        announce=announce,
        allow_remote=allow_remote,
    )
