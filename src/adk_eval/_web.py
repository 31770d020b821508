"""What the local web pages (the studio, the run viewer) share: access, headers, serving.

* A random access token is required on **every** request. It is accepted as a
  header, as a ``token`` query parameter (the printed URL, event streams), or as
  the cookie the page sets when it is opened with the token. Requests that change
  anything must carry the header, so another site cannot forge them with the cookie.
* A request whose ``Host`` is not a loopback name (or the host the server was bound
  to) gets 421, which stops DNS-rebinding pages. Loopback is one rule for every
  server (`adk_eval._sandbox._loopback`).
* Every response carries a strict Content-Security-Policy, ``X-Frame-Options:
  DENY``, ``Referrer-Policy: no-referrer`` and ``X-Content-Type-Options: nosniff``.
* `serve` binds 127.0.0.1 unless told otherwise, refuses a host that is not
  loopback unless allowed (``--allow-remote``), and announces the URL, with its
  token, once listening. One Ctrl-C or SIGTERM shuts it down and returns, so the
  command exits 0 (an open page's event stream ends, see `stopping`); a second
  Ctrl-C stops at once.
"""

from __future__ import annotations

import hmac
import html
import signal
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from importlib import resources
from types import FrameType
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from . import _strict_json as strict_json
from ._sandbox._loopback import is_loopback, refuse_remote

__all__ = [
    "MAX_ECHO",
    "echo",
    "SHARED_FILES",
    "Access",
    "StrictJSONResponse",
    "guard",
    "page_with_token",
    "serve",
    "static_file",
    "static_text",
    "stopping",
]

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


class StrictJSONResponse(JSONResponse):
    """A JSON response that stays JSON when a value is NaN or infinite (see `_strict_json`).

    Starlette's own refuses such a value with a 500; state and tool answers can hold one.
    """

    def render(self, content: Any) -> bytes:
        return strict_json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


# The page code every page loads first (adk_eval/static): elements, entries, styles.
SHARED_FILES = ("page.js", "page.css")
_MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}


def static_text(name: str, package: str = "adk_eval") -> str:
    """The text of `name` in `package`'s ``static`` folder (the shared files by default)."""
    return resources.files(package).joinpath("static", name).read_text(encoding="utf-8")


def static_file(name: str, package: str, own: Collection[str]) -> Response | None:
    """A page's static file: a shared one, or one of `own` from `package`; None if neither."""
    if name in SHARED_FILES:
        text = static_text(name)
    elif name in own:
        text = static_text(name, package)
    else:
        return None
    media_type = _MEDIA_TYPES[name[name.rfind(".") :]]
    return Response(text, media_type=media_type, headers={"Cache-Control": "no-store"})


@dataclass(frozen=True)
class Access:
    """How a page's server is reached.

    Attributes:
        token: The access token every request needs.
        header: The header that carries it (required on requests that change anything).
        cookie: The cookie the page sets when opened with ``?token=``.
        what: The server's name, for error messages (``studio``, ``viewer``).
        bound_host: The interface the server listens on.
    """

    token: str
    header: str
    cookie: str
    what: str
    bound_host: str = "127.0.0.1"


def host_name(header: str) -> str:
    """The host of a ``Host`` header, lower-cased, without its port (``[::1]:80`` -> ``::1``)."""
    header = header.lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


MAX_ECHO = 200
"""The most characters of a request's own value an error message repeats."""


def echo(text: str) -> str:
    """`text`, cut to `MAX_ECHO` characters (saying how many more) when it is longer."""
    if len(text) <= MAX_ECHO:
        return text
    return f"{text[:MAX_ECHO]}… ({len(text) - MAX_ECHO} more characters)"


def guard(app: FastAPI, access: Access, *, cut: Callable[[str], str] = echo) -> None:
    """Installs the token, ``Host`` and header rules (see the module doc) on `app`.

    Args:
        app: The app.
        access: Its token and names.
        cut: Shortens a request's own value before an error message repeats it.
    """
    any_host = access.bound_host in ("0.0.0.0", "::", "")
    bound = access.bound_host.lower()

    def presented(request: Request, *, header_only: bool) -> str | None:
        header = request.headers.get(access.header)
        if header is not None or header_only:
            return header
        return request.query_params.get("token") or request.cookies.get(access.cookie)

    async def checked(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        host = host_name(request.headers.get("host", ""))
        if not any_host and host != bound and not is_loopback(host):
            return JSONResponse(
                {
                    "error": f"this {access.what} answers requests for {access.bound_host} "
                    f"only, not {cut(host)!r}"
                },
                status_code=421,
            )
        changes = request.method not in ("GET", "HEAD")
        given = presented(request, header_only=changes)
        if given is None or not hmac.compare_digest(given.encode(), access.token.encode()):
            return JSONResponse(
                {
                    "error": f"a valid {access.what} token is required "
                    f"(use the URL the {access.what} printed)"
                },
                status_code=401 if given is None else 403,
            )
        response = await call_next(request)
        if request.url.path == "/" and request.query_params.get("token"):
            response.set_cookie(access.cookie, access.token, httponly=True, samesite="strict")
        return response

    @app.middleware("http")
    async def require_token(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await checked(request, call_next)
        response.headers.update(_SECURITY_HEADERS)
        return response


def page_with_token(page: str, name: str, token: str) -> str:
    """`page` with ``<meta name=NAME content=TOKEN>``: its own requests carry the token.

    Only a token-holder gets the page, and another site cannot read it.
    """
    meta = f'<meta name="{name}" content="{html.escape(token)}">'
    return page.replace("</head>", f"  {meta}\n</head>", 1)


_GRACE_SECONDS = 3
"""How long a shutdown waits for requests still running before it cancels them."""


def stopping(request: Request) -> bool:
    """Whether the server of `request` is shutting down (a long stream should end)."""
    flag = getattr(request.app.state, "stopping", None)
    return bool(flag()) if flag is not None else False


def serve(
    app_for: Callable[[str, str], FastAPI],
    *,
    host: str,
    port: int,
    token: str | None,
    announce: Callable[[str], None],
    allow_remote: bool = False,
) -> None:
    """Serves ``app_for(token, host)`` until interrupted; announces its URL once listening.

    Args:
        app_for: Builds the app from the token and the bound host.
        host: Interface to bind: a loopback address unless `allow_remote`.
        port: Port (0 picks a free one; the announced URL has the real port).
        token: The access token (random when None).
        announce: Called with the URL to open (the token in it).
        allow_remote: Allows a `host` that is not loopback.

    Raises:
        EvalSetupError: A `host` that is not loopback, without `allow_remote`.
        OSError: The port cannot be bound.
    """
    refuse_remote(host, allow_remote)
    import secrets
    import socket

    import uvicorn

    from ._sandbox._serving import PromptServer

    token = token or secrets.token_urlsafe(24)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host

    class _Announcing(PromptServer):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            announce(f"http://{shown}:{bound_port}/?token={token}")

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            # Ctrl-C or SIGTERM asks for a shutdown, which ends normally (exit 0);
            # uvicorn's own would raise the signal again once shut down. A second
            # Ctrl-C stops at once.
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.stop()

    app = app_for(token, host)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=_GRACE_SECONDS
    )
    server = _Announcing(config)
    app.state.stopping = lambda: server.should_exit  # open event streams end on it
    server.run(sockets=[sock])
