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
  whether someone reviewed it.

Access, headers and serving are `adk_eval._web`'s, as for the studio: a token
on every request, loopback by default, a strict Content-Security-Policy.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from .._errors import AdkEvalError
from .._statistics import wilson
from .._web import Access, StrictJSONResponse, guard, page_with_token, serve, static_file
from ._compare import compare_reports
from ._html import page
from ._json_report import with_intervals
from ._reviews import add_review, judge_calibration, review_queue, reviews
from ._store import CasePoint, RunStore, live_status

__all__ = ["HEADER", "create_viewer_app", "run_viewer"]

HEADER = "X-Viewer-Token"
_STATIC = ("report.js", "report.css")
_ORDER = {"regression": 0, "added": 1, "removed": 2, "improvement": 3, "unchanged": 4}


class ReviewIn(BaseModel):
    """A label posted by the page: a run (and one of its metrics, or none) and the verdict."""

    run: int
    case: str = Field(max_length=1000)
    attempt: int = 0
    metric: str | None = Field(default=None, max_length=1000)
    verdict: str = Field(max_length=20)
    note: str = Field(default="", max_length=5000)


def _intervals(point: CasePoint) -> dict[str, Any]:
    """A point's pass rate over its runs and pass^k over its cases, with 95 % intervals."""
    return {
        "pass_rate_interval": wilson(point.passes, point.runs).to_dict(),
        "pass_hat_k_interval": wilson(point.reliable, point.cases).to_dict(),
    }


def create_viewer_app(db: Path, token: str, *, bound_host: str = "127.0.0.1") -> FastAPI:
    """The viewer app over the runs database `db`."""
    app = FastAPI(
        title="adk-eval viewer",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        default_response_class=StrictJSONResponse,
    )
    guard(app, Access(token, HEADER, "adk_eval_viewer", "viewer", bound_host))
    store = RunStore(db)

    @app.exception_handler(AdkEvalError)
    async def store_error(request: Any, error: AdkEvalError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=404)

    @app.get("/", response_class=HTMLResponse)
    async def index() -> HTMLResponse:
        head = (
            '<link rel="stylesheet" href="static/page.css">\n'
            '<link rel="stylesheet" href="static/report.css">\n'
            '<script src="static/page.js" defer></script>\n'
            '<script src="static/report.js" defer></script>'
        )
        text = page_with_token(page(head=head, body_end=""), "viewer-token", token)
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        response = static_file(name, __package__, _STATIC)
        if response is None:
            return JSONResponse({"error": f"no static file {name}"}, status_code=404)
        return response

    @app.get("/api/runs")
    async def runs(limit: int = 200) -> list[dict[str, Any]]:
        limit = max(1, min(limit, 10_000))
        points = {point.run_id: point for point in store.history(None, limit)}
        costs = store.costs(limit)
        return [
            {
                "id": run.id,
                "created_at": run.created_at,
                "command": run.command,
                "total": run.total,
                "passed": run.passed,
                "failed": run.failed,
                "errors": run.errors,
                "terminated": run.terminated,
                "repeat": run.repeat,
                "duration_ms": run.duration_ms,
                "pass_rate": run.pass_rate,
                "pass_hat_k": points[run.id].pass_hat_k if run.id in points else 0.0,
                "cost": costs.get(run.id),
                "live": run.live,
                **(_intervals(points[run.id]) if run.id in points else {}),
            }
            for run in store.runs(limit)
        ]

    @app.get("/api/history")
    async def history(case: str, limit: int = 200) -> list[dict[str, Any]]:
        return [
            {
                "id": point.run_id,
                "created_at": point.created_at,
                "runs": point.runs,
                "passes": point.passes,
                "repeat": point.repeat,
                "pass_rate": point.pass_rate,
                "pass_hat_k": point.pass_hat_k,
                **_intervals(point),
            }
            for point in store.history(case, max(1, min(limit, 10_000)))
        ]

    @app.get("/api/runs/{run_id}")
    async def run(run_id: int) -> dict[str, Any]:
        report = with_intervals(store.load(run_id))  # reports stored before they existed
        if "running" in report:  # stored as it runs: still running, or its process is gone
            report["live"] = live_status(report["running"].get("pid"))
        return report

    @app.get("/api/reviews")
    async def labels() -> list[dict[str, Any]]:
        return [review.to_data() for review in reviews(store)]

    @app.post("/api/reviews")
    async def review(label: ReviewIn) -> dict[str, Any]:
        added = add_review(
            store, label.run, label.case, label.attempt, label.metric, label.verdict, label.note
        )
        return added.to_data()

    @app.get("/api/queue")
    async def queue(runs: int = 20) -> list[dict[str, Any]]:
        return review_queue(store, runs=max(1, min(runs, 1000)))

    @app.get("/api/judges")
    async def judges() -> list[dict[str, Any]]:
        return [found.to_data() for found in judge_calibration(reviews(store))]

    @app.get("/api/compare")
    async def compare(a: int | None = None, b: int | None = None) -> dict[str, Any]:
        if a is None or b is None:
            a, b = store.last_two()
        comparison = compare_reports(store.load(a), store.load(b))
        changes = sorted(comparison.changes, key=lambda c: (_ORDER[c.kind], c.name))
        return {
            "a": a,
            "b": b,
            "changes": [
                {
                    "name": change.name,
                    "kind": change.kind,
                    "before": change.before,
                    "after": change.after,
                    "metric_deltas": {k: list(v) for k, v in change.metric_deltas.items()},
                    "decision": change.decision,
                    "p_value": change.p_value,
                    "passes": list(change.passes) if change.passes else None,
                }
                for change in changes
            ],
            "suite": {
                "decision": comparison.decision,
                "p_value": comparison.p_value,
                "passes": list(comparison.passes),
                "alpha": comparison.alpha,
                "test": "Fisher's exact test, one-sided; cases Holm-corrected",
            },
        }

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
) -> None:
    """Serves the viewer until interrupted (see `adk_eval._web.serve`).

    Without `token`, the viewer keeps one per database in ``viewer.token`` beside it
    (readable by its owner only), so the cookie a browser got and the links it
    keeps still work after a restart on the same database.
    """
    token = token or _kept_token(db)
    serve(
        lambda token, bound: create_viewer_app(db, token, bound_host=bound),
        host=host,
        port=port,
        token=token,
        announce=announce,
    )
