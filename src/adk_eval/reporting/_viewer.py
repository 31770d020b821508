"""`adk-eval view`: the stored runs in the browser, on the studio's server conventions.

The same page as the HTML report (`_html.page`, ``report.js``), fed by a small
JSON API over the runs database instead of inline data:

* ``GET /api/runs`` lists the stored runs, newest first, with their counts,
  pass rate and pass^k (the page draws the suite's chart from it), and
  ``live``: ``running`` for a run being stored as it runs, ``abandoned`` when
  its process ended before it did;
* ``GET /api/runs/{id}`` is one run's JSON report (with ``live`` likewise);
* ``GET /api/history?case=NAME`` is one case's pass rate and pass^k in each
  stored run that holds it, oldest first (the case view's chart);
* ``GET /api/compare?a=ID&b=ID`` compares two runs (default: the last two),
  regressions first;
* ``GET /api/queue?runs=N`` is the review queue: every run of a case in the
  latest N stored runs, not-passed first, with its party, failing metrics and
  whether someone reviewed it;
* ``GET /realism`` and below: the realism reports given with ``--realism``, as pages
  drawn on the server (`_viewer_realism`);
* ``GET /watch`` and below: the live page of the watch given with ``--watch``, its
  state file read-only on every request (`_viewer_watch`).

The routes are `_viewer_routes`' routers, and the JSON they shape is
`_viewer_replies`' models. Access, headers and serving are `adk_eval._web`'s, as
for the studio: a token on every request, loopback unless allowed, a strict
Content-Security-Policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from .._errors import AdkEvalError
from .._sandbox._loopback import refuse_remote
from .._web import Access, StrictJSONResponse, guard, serve
from ._store import RunStore
from ._viewer_realism import RealismFile, realism_routes
from ._viewer_routes import compare_routes, page_routes, review_routes, run_routes
from ._viewer_watch import COOKIE, WatchFile, watch_routes

__all__ = ["HEADER", "create_viewer_app", "run_viewer"]

HEADER = "X-Viewer-Token"


def create_viewer_app(
    db: Path,
    token: str,
    *,
    bound_host: str = "127.0.0.1",
    realism: Sequence[RealismFile] = (),
    watch: WatchFile | None = None,
) -> FastAPI:
    """The viewer app over the runs database `db`, the realism reports `realism`, a `watch`."""
    app = FastAPI(
        title="adk-eval viewer",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        default_response_class=StrictJSONResponse,
    )
    guard(app, Access(token, HEADER, COOKIE, "viewer", bound_host))

    @app.exception_handler(AdkEvalError)
    async def store_error(request: Request, error: AdkEvalError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=404)

    store = RunStore(db)
    app.include_router(page_routes(token, realism=len(realism), watch=watch is not None))
    app.include_router(run_routes(store))
    app.include_router(review_routes(store))
    app.include_router(compare_routes(store))
    app.include_router(realism_routes(realism))
    app.include_router(watch_routes(watch, token))
    return app


def _kept_token(db: Path) -> str:
    """The viewer's token for `db`, made once and kept beside it (mode 0600)."""
    import os
    import secrets

    path = Path(db).resolve().parent / "viewer.token"
    try:
        kept = path.read_text().strip()
    except OSError:
        kept = ""
    if len(kept) >= 24:
        return kept
    token = secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    return token


def run_viewer(
    db: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    token: str | None = None,
    announce: Callable[[str], None] = print,
    realism: Sequence[RealismFile] = (),
    watch: WatchFile | None = None,
    allow_remote: bool = False,
) -> None:
    """Serves the viewer until interrupted (see `adk_eval._web.serve`), with `realism`, `watch`.

    Without `token`, the viewer keeps one per database in ``viewer.token`` beside it
    (readable by its owner only), so the cookie a browser got and the links it
    keeps still work after a restart on the same database. A `host` that is not
    loopback is refused (`EvalSetupError`, before any token is made) unless
    `allow_remote`.
    """
    refuse_remote(host, allow_remote)
    token = token or _kept_token(db)
    serve(
        lambda token, bound: create_viewer_app(
            db, token, bound_host=bound, realism=realism, watch=watch
        ),
        host=host,
        port=port,
        token=token,
        announce=announce,
        allow_remote=allow_remote,
    )
