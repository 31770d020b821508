"""A watch's live page in the viewer: ``adk-eval view --watch STATE``, the state file only read.

``adk-eval watch`` keeps a journal in its state file (the verdicts, the alerts, the
newest failing and passing conversations, redacted). The viewer opens that file
read-only (`JournalView`: SQLite in ``mode=ro``) once when it starts, so a missing
or foreign file is one error line before anything is served, and again on every
request, so the page follows a watch that is still running without a restart and
no connection is held across threads.

* ``GET /watch`` is the live page (``static/watch.js`` draws it and fetches the
  JSON again every few seconds; ``?every=SECONDS`` changes how often);
* ``GET /api/watch`` is what it draws: each metric's pass rate per time bucket with
  its Wilson interval and the times of its alerts, the newest alerts (their one
  line), the newest failing conversations and the totals;
* ``GET /watch/conversations/{name}`` is one kept conversation (its name, which
  holds slashes, percent-encoded): each metric's verdict with its evidence, and the
  turns of its redacted session;
* ``GET /watch/goldens/{name}`` downloads that conversation as an ADK EvalSet of one
  case (`adk_eval.goldens.to_golden`), built for the response: nothing is written.

The conversation page is drawn on the server with every value escaped as text, and
the live page inserts every value as text; neither carries inline script or style,
so the viewer's Content-Security-Policy holds on them as on every other page.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from .._errors import EvalSetupError
from .._web import page_with_token

if TYPE_CHECKING:
    from google.adk.events import Event
    from google.adk.sessions import Session

    from ..production._watch._journal_view import ConversationRecord, JournalView

__all__ = ["COOKIE", "NO_WATCH", "WatchFile", "load_watch", "watch_data", "watch_routes"]

NO_WATCH = (
    "no watch given: start the viewer with `adk-eval view --watch .adk_eval/watch.db` "
    "(the --state file of `adk-eval watch`)"
)
_FIX = "give the --state file of an `adk-eval watch` (for example .adk_eval/watch.db)"
_MOST_ALERT_MARKS = 1000
"""The most alerts marked on the charts (the list shows `_ALERTS`)."""
COOKIE = "adk_eval_viewer"
"""The viewer's cookie (`_viewer`'s `Access`): set when the live page is opened with its token."""
_ALERTS = 50
_FAILING = 50


@dataclass(frozen=True)
class WatchFile:
    """A watch's state file given to the viewer (checked once; read on every request).

    Attributes:
        path: The file.
    """

    path: Path

    @contextmanager
    def opened(self) -> Iterator[JournalView]:
        """The file's journal, opened read-only for one request."""
        from ..production._watch._journal_view import JournalView

        view = JournalView(self.path)
        try:
            yield view
        finally:
            view.close()


def load_watch(path: Path) -> WatchFile:
    """Checks that `path` is a watch's state file, opening it read-only once.

    Raises:
        EvalSetupError: The file is missing, a folder, or not a watch's state file (one
            line naming it and what to give instead).
    """
    path = Path(path)
    if not path.exists():
        raise EvalSetupError(f"--watch {path}: no such file; {_FIX}")
    if not path.is_file():
        raise EvalSetupError(f"--watch {path}: it is not a file; {_FIX}")
    found = WatchFile(path)
    with found.opened():
        pass
    return found


def _link(name: str) -> str:
    """A conversation's name as one path segment (its slashes encoded)."""
    return quote(name, safe="")


def watch_data(watch: WatchFile, buckets: int = 60) -> dict[str, Any]:
    """What the live page draws (see the module doc), read from the journal now."""
    with watch.opened() as view:
        alerts = view.alerts(_MOST_ALERT_MARKS)
        metrics = [
            {
                "name": metric,
                "points": [
                    {
                        "start": p.start,
                        "end": p.end,
                        "passed": p.passed,
                        "failed": p.failed,
                        "rate": p.rate,
                        "low": p.low,
                        "high": p.high,
                    }
                    for p in view.series(metric, buckets)
                ],
                "alerts": [{"at": a.at, "line": a.line} for a in alerts if a.metric == metric],
            }
            for metric in view.metrics()
        ]
        failing = [
            {
                "name": row.name,
                "at": row.at,
                "failed": list(row.failed),
                "trace_id": row.trace_id,
                "href": f"watch/conversations/{_link(row.name)}",
            }
            for row in view.failing(_FAILING)
        ]
        totals = dict(view.totals())
    return {
        "file": str(watch.path),
        "read_at": time.time(),
        "totals": totals,
        "metrics": metrics,
        "alerts": [{"at": a.at, "metric": a.metric, "line": a.line} for a in alerts[:_ALERTS]],
        "failing": failing,
    }


def _document(title: str, body: str, *, depth: int, token: str, script: bool = False) -> str:
    """A viewer page `depth` folders below the root (relative links, as the viewer's are)."""
    up = "../" * depth
    head = (
        f'<script src="{up}static/page.js" defer></script>\n'
        f'<script src="{up}static/watch.js" defer></script>\n'
        if script
        else ""
    )
    text = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · adk-eval viewer</title>
<link rel="stylesheet" href="{up}static/page.css">
<link rel="stylesheet" href="{up}static/watch.css">
{head}</head>
<body>
<nav><a href="{up or "./"}">stored runs</a> <a href="{up}watch">live watch</a></nav>
<main>
{body}
</main>
</body>
</html>
"""
    return page_with_token(text, "viewer-token", token)


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})


def _live_page(watch: WatchFile | None, token: str) -> HTMLResponse:
    if watch is None:
        body = f'<h1>Live watch</h1>\n<p id="no-watch">{escape(NO_WATCH)}.</p>'
        return _html(_document("live watch", body, depth=0, token=token))
    body = f"""<h1>Live watch</h1>
<p class="muted">{escape(str(watch.path))}, read-only: <span id="totals"></span></p>
<p id="status" role="status"></p>
<h2>Pass rate per metric</h2>
<p class="muted">Each point is a time bucket's pass rate, the band its 95 % Wilson interval;
a red line marks an alert.</p>
<div id="charts"></div>
<h2>Alerts</h2>
<ul id="alerts"></ul>
<h2>Newest failing conversations</h2>
<table id="failing"><thead><tr><th scope="col">Conversation</th><th scope="col">Scored</th>
<th scope="col">Failed metrics</th></tr></thead><tbody></tbody></table>"""
    return _html(_document("live watch", body, depth=0, token=token, script=True))


def _event_lines(event: Event) -> list[tuple[str, str]]:
    """An event's parts as (kind, text): what was said, tool calls and their answers."""
    lines: list[tuple[str, str]] = []
    for part in (event.content.parts or []) if event.content is not None else []:
        if part.text and not part.thought:
            lines.append(("user" if event.author == "user" else "model_text", part.text))
        if part.function_call is not None:
            args = json.dumps(part.function_call.args or {}, ensure_ascii=False, default=str)
            lines.append(("tool_call", f"{part.function_call.name}({args})"))
        if part.function_response is not None:
            answer = json.dumps(part.function_response.response, ensure_ascii=False, default=str)
            lines.append(("tool_result", f"{part.function_response.name} → {answer}"))
    return lines


def _turns_html(session: Session) -> str:
    entries = [
        f'<div class="entry entry-{kind}"><div class="label">{escape(event.author)}'
        f"</div><pre>{escape(text)}</pre></div>"
        for event in session.events
        for kind, text in _event_lines(event)
    ]
    return "\n".join(entries) or "<p>The session holds no text and no tool call.</p>"


def _verdicts_html(record: ConversationRecord) -> str:
    rows = []
    for verdict in record.verdicts:
        passed = verdict.get("passed")
        said = {True: "passed", False: "failed", None: "not applicable"}[passed]
        evidence = "".join(
            f"<li>{escape(str(item))}</li>" for item in verdict.get("evidence") or []
        )
        score = verdict.get("score")
        rows.append(
            f'<tr><th scope="row">{escape(str(verdict.get("metric")))}</th>'
            f'<td class="outcome {said.replace(" ", "-")}">{said}</td>'
            f"<td>{'—' if score is None else escape(f'{score:.3g}')}</td>"
            f"<td>{escape(str(verdict.get('party') or '—'))}</td>"
            f'<td><ul class="evidence">{evidence}</ul></td></tr>'
        )
    return (
        '<table id="verdicts"><thead><tr><th scope="col">Metric</th><th scope="col">Verdict</th>'
        '<th scope="col">Score</th><th scope="col">Party</th><th scope="col">Evidence</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _golden(session: Session) -> dict[str, Any] | None:
    """`session` as an ADK EvalSet of one case (JSON data); None if no user turn."""
    from google.adk.evaluation.eval_set import EvalSet

    from ..goldens import snake_case, to_golden

    try:
        case = to_golden(
            session, eval_id=session.id, app_name=session.app_name, user_id=session.user_id
        )
    except ValueError:  # no user turn: nothing to replay
        return None
    snake = snake_case(session.app_name)
    eval_set = EvalSet(
        eval_set_id=f"{snake}_evals",
        name=f"{snake}_evals",
        description="A watched conversation kept as a golden, captured with adk-eval",
        eval_cases=[case],
        creation_timestamp=time.time(),
    )
    dumped = eval_set.model_dump_json(exclude_unset=True, exclude_defaults=True, exclude_none=True)
    data: dict[str, Any] = json.loads(dumped)
    return data


def _conversation_page(record: ConversationRecord, token: str) -> HTMLResponse:
    if _golden(record.session) is None:
        keep = '<p id="no-golden">No golden to keep: the conversation has no user turn.</p>'
    else:
        keep = (
            f'<p><a id="keep-golden" href="../goldens/{_link(record.name)}" download>'
            "Keep as golden</a> (an ADK EvalSet of this one conversation)</p>"
        )
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(record.at))
    trace = f", trace {escape(record.trace_id)}" if record.trace_id else ""
    body = (
        f'<p><a href="../../watch">back to the live watch</a></p>'
        f'<h1>{escape(record.name)}</h1>\n<p class="muted">scored {when}{trace}</p>\n{keep}\n'
        f"<h2>Verdicts</h2>\n{_verdicts_html(record)}\n"
        f'<h2>Conversation</h2>\n<div id="turns">{_turns_html(record.session)}</div>'
    )
    return _html(_document(f"conversation {record.name}", body, depth=2, token=token))


def _not_kept(name: str) -> str:
    return (
        f"no conversation {name!r} in the watch's journal: it keeps the newest 100 failing "
        "and 50 passing conversations"
    )


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:120] + ".evalset.json"


def watch_routes(watch: WatchFile | None, token: str) -> APIRouter:
    """The live page, its JSON, one conversation's page and its golden (see the module doc)."""
    router = APIRouter()

    def missing(what: str, depth: int) -> HTMLResponse:
        body = f"<h1>Not found</h1>\n<p>{escape(what)}.</p>"
        return _html(_document("not found", body, depth=depth, token=token), 404)

    @router.get("/watch", response_class=HTMLResponse)
    async def live(request: Request) -> HTMLResponse:
        response = _live_page(watch, token)
        if request.query_params.get("token"):  # checked already: its files load with the cookie
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    @router.get("/api/watch", response_model=None)
    async def data(buckets: int = 60) -> dict[str, Any] | Response:
        if watch is None:
            return JSONResponse({"error": NO_WATCH}, status_code=404)
        return watch_data(watch, max(1, min(buckets, 500)))

    def kept(name: str) -> Any:
        """The kept conversation `name`, or the page saying why there is none."""
        if watch is None:
            return missing(NO_WATCH, depth=2)
        with watch.opened() as view:
            record = view.conversation(name)
        return missing(_not_kept(name), depth=2) if record is None else record

    @router.get("/watch/conversations/{name:path}", response_class=HTMLResponse)
    async def conversation(name: str) -> HTMLResponse:
        record = kept(name)
        if isinstance(record, HTMLResponse):
            return record
        return _conversation_page(record, token)

    @router.get("/watch/goldens/{name:path}", response_model=None)
    async def golden(name: str) -> Response:
        record = kept(name)
        if isinstance(record, HTMLResponse):
            return record
        data = _golden(record.session)
        if data is None:
            return missing(f"{name!r} has no user turn, so no golden to keep", depth=2)
        disposition = f'attachment; filename="{_file_name(name)}"'
        return Response(
            json.dumps(data, indent=2, ensure_ascii=False),
            media_type="application/json",
            headers={"Content-Disposition": disposition, "Cache-Control": "no-store"},
        )

    return router
