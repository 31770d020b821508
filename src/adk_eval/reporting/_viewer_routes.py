"""The viewer's routes, a router per concern, each built over the runs store it reads.

* `page_routes`: the page (the HTML report's, fed by the API, with a link to the
  realism reports or the live watch when the viewer was given some) and its static files;
* `run_routes`: the stored runs, one run's report, and one case's history;
* `review_routes`: people's labels, the review queue and the judges' calibration;
* `compare_routes`: two runs compared.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from .._web import page_with_token, static_file
from ._compare import compare_reports
from ._html import page
from ._json_report import with_intervals
from ._reviews import add_review, judge_calibration, review_queue, reviews
from ._store import RunStore, live_status
from ._viewer_replies import CompareReply, HistoryPoint, RunEntry

__all__ = ["ReviewIn", "compare_routes", "page_routes", "review_routes", "run_routes"]

_STATIC = ("report.js", "report.css", "realism.css", "watch.js", "watch.css")
_MOST_RUNS = 10_000
"""The most runs a list or a history reads."""
_HEAD = (
    '<link rel="stylesheet" href="static/page.css">\n'
    '<link rel="stylesheet" href="static/report.css">\n'
    '<script src="static/page.js" defer></script>\n'
    '<script src="static/report.js" defer></script>'
)


class ReviewIn(BaseModel):
    """A label posted by the page: a run (and one of its metrics, or none) and the verdict."""

    run: int
    case: str = Field(max_length=1000)
    attempt: int = 0
    metric: str | None = Field(default=None, max_length=1000)
    verdict: str = Field(max_length=20)
    note: str = Field(default="", max_length=5000)


def page_routes(token: str, *, realism: int = 0, watch: bool = False) -> APIRouter:
    """The page (carrying `token` for its own requests) and its static files.

    With `realism` reports given to the viewer, its navigation links their list; with
    a `watch`, its live page.
    """
    router = APIRouter()
    nav = f' <a id="show-realism" href="realism">realism reports ({realism})</a>' if realism else ""
    nav += ' <a id="show-watch" href="watch">live watch</a>' if watch else ""

    @router.get("/", response_class=HTMLResponse)
    async def index() -> HTMLResponse:
        text = page_with_token(page(head=_HEAD, body_end="", nav=nav), "viewer-token", token)
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        response = static_file(name, __package__, _STATIC)
        if response is None:
            return JSONResponse({"error": f"no static file {name}"}, status_code=404)
        return response

    return router


def run_routes(store: RunStore) -> APIRouter:
    """The stored runs (newest first), one run's report, and one case's history."""
    router = APIRouter(prefix="/api")

    @router.get("/runs", response_model_exclude_unset=True)
    async def runs(limit: int = 200) -> list[RunEntry]:
        limit = max(1, min(limit, _MOST_RUNS))
        points = {point.run_id: point for point in store.history(None, limit)}
        costs = store.costs(limit)
        return [
            RunEntry.of(run, points.get(run.id), costs.get(run.id)) for run in store.runs(limit)
        ]

    @router.get("/history")
    async def history(case: str, limit: int = 200) -> list[HistoryPoint]:
        points = store.history(case, max(1, min(limit, _MOST_RUNS)))
        return [HistoryPoint.of(point) for point in points]

    @router.get("/runs/{run_id}")
    async def run(run_id: int) -> dict[str, Any]:
        report = with_intervals(store.load(run_id))  # reports stored before they existed
        if "running" in report:  # stored as it runs: still running, or its process is gone
            report["live"] = live_status(report["running"].get("pid"))
        return report

    return router


def review_routes(store: RunStore) -> APIRouter:
    """People's labels on verdicts, the queue of runs to review, and each judge's calibration."""
    router = APIRouter(prefix="/api")

    @router.get("/reviews")
    async def labels() -> list[dict[str, Any]]:
        return [review.to_data() for review in reviews(store)]

    @router.post("/reviews")
    async def review(label: ReviewIn) -> dict[str, Any]:
        added = add_review(
            store, label.run, label.case, label.attempt, label.metric, label.verdict, label.note
        )
        return added.to_data()

    @router.get("/queue")
    async def queue(runs: int = 20) -> list[dict[str, Any]]:
        return review_queue(store, runs=max(1, min(runs, 1000)))

    @router.get("/judges")
    async def judges() -> list[dict[str, Any]]:
        return [found.to_data() for found in judge_calibration(reviews(store))]

    return router


def compare_routes(store: RunStore) -> APIRouter:
    """Two stored runs compared (by default the last two finished), regressions first."""
    router = APIRouter(prefix="/api")

    @router.get("/compare")
    async def compare(a: int | None = None, b: int | None = None) -> CompareReply:
        if a is None or b is None:
            a, b = store.last_two()
        return CompareReply.of(a, b, compare_reports(store.load(a), store.load(b)))

    return router
