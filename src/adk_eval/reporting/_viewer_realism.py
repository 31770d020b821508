"""Realism reports in the viewer: ``adk-eval view --realism REPORT.json``, read once, never written.

Each file is a realism report's JSON (``adk-eval realism ... --json``; its texts come
from redacted sessions), read and checked against ``realism.schema.json`` when the
viewer starts, so a missing or foreign file is one error line before anything is
served. The viewer keeps the data in memory and writes nothing anywhere.

* ``GET /realism`` lists the reports given (the index links it);
* ``GET /realism/{n}`` is one report: the counts, the overall distance, the pass-rate
  gap, the table of behaviours (`_realism_html.feature_table`) and its scenarios;
* ``GET /realism/{n}/scenarios/{k}`` is one scenario: the real conversation beside
  the simulated run, in two columns (`_realism_html.pair_html`).

The pages are drawn on the server with every value escaped as text and carry no
script; their style is ``static/realism.css``, so the viewer's Content-Security-Policy
(no inline script or style) holds on them as on every other response.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from .._errors import EvalSetupError
from ._realism_html import feature_table, pair_html, summary_html

__all__ = ["RealismFile", "load_realism_reports", "realism_routes"]

_FIX = "write one with `adk-eval realism SESSIONS RUNS --json PATH`"


@dataclass(frozen=True)
class RealismFile:
    """A realism report given to the viewer.

    Attributes:
        path: The file it was read from.
        data: Its JSON data (`RealismReport.to_data()`), checked against its schema.
    """

    path: Path
    data: dict[str, Any]

    def line(self) -> str:
        """``40 real conversation(s) against 40 simulated; 2 of 10 behaviour(s) unlike``."""
        features = self.data["features"]
        unlike = sum(1 for feature in features if feature["significant"])
        return (
            f"{self.data['real']} real conversation(s) against {self.data['simulated']} "
            f"simulated; {unlike} of {len(features)} behaviour(s) unlike"
        )


def load_realism_reports(paths: Iterable[Path]) -> tuple[RealismFile, ...]:
    """Reads and checks each realism report's JSON file.

    Raises:
        EvalSetupError: A file is missing, unreadable, not JSON or not a realism report
            (one line naming the file, the problem and how to write one).
    """
    import jsonschema

    schema = json.loads(
        resources.files(__package__).joinpath("realism.schema.json").read_text(encoding="utf-8")
    )
    loaded = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise EvalSetupError(f"cannot read realism report {path}: {reason}; {_FIX}") from None
        except ValueError as error:
            raise EvalSetupError(
                f"{path} is not JSON ({error}), so not a realism report; {_FIX}"
            ) from None
        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as error:
            where = "/".join(str(part) for part in error.absolute_path) or "the top level"
            raise EvalSetupError(
                f"{path} is not a realism report (at {where}: {error.message[:200]}); {_FIX}"
            ) from None
        loaded.append(RealismFile(Path(path), data))
    return tuple(loaded)


def _document(title: str, body: str, *, depth: int) -> HTMLResponse:
    """A page `depth` folders below the root (its links are relative, as the viewer's are)."""
    up = "../" * depth
    text = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · adk-eval viewer</title>
<link rel="stylesheet" href="{up}static/realism.css">
</head>
<body>
<nav><a href="{up or "./"}">stored runs</a> <a href="{up}realism">realism reports</a></nav>
{body}
</body>
</html>
"""
    return HTMLResponse(text, headers={"Cache-Control": "no-store"})


def _missing(what: str, depth: int) -> HTMLResponse:
    response = _document("Not found", f"<h1>Not found</h1><p>{escape(what)}</p>", depth=depth)
    response.status_code = 404
    return response


def _report_page(n: int, report: RealismFile) -> HTMLResponse:
    data = report.data
    scenarios = "".join(
        f'<li><a href="{n}/scenarios/{k}">{escape(str(pair["source"]))}</a> '
        f"(simulated run {'passed' if pair['simulated_passed'] else 'did not pass'})</li>"
        for k, pair in enumerate(data["pairs"])
    )
    if not scenarios:
        scenarios = "<li>No simulated run is named after a real conversation's mined scenario.</li>"
    body = (
        f"<h1>Your simulated users against your real users</h1>"
        f'<p class="alike">{escape(str(report.path))}</p>\n{summary_html(data)}'
        f"<h2>Behaviours</h2>\n{feature_table(data)}\n"
        f'<h2>Scenarios side by side</h2>\n<ol id="scenarios">{scenarios}</ol>'
    )
    return _document(f"realism {report.path.name}", body, depth=1)


def realism_routes(reports: Sequence[RealismFile]) -> APIRouter:
    """The pages of the realism reports `reports` (see the module doc)."""
    router = APIRouter(prefix="/realism")

    def given(n: int) -> str:
        return f"no realism report {n}: the viewer was given {len(reports)} (`--realism`)"

    @router.get("", response_class=HTMLResponse)
    async def listed() -> HTMLResponse:
        items = "".join(
            f'<li><a href="realism/{n}">{escape(report.path.name)}</a>: '
            f"{escape(report.line())}</li>"
            for n, report in enumerate(reports)
        )
        if not items:
            items = "<li>None given: start the viewer with `--realism REPORT.json`.</li>"
        return _document(
            "realism reports", f'<h1>Realism reports</h1><ul id="reports">{items}</ul>', depth=0
        )

    @router.get("/{n}", response_class=HTMLResponse)
    async def report(n: int) -> HTMLResponse:
        if not 0 <= n < len(reports):
            return _missing(given(n), depth=1)
        return _report_page(n, reports[n])

    @router.get("/{n}/scenarios/{k}", response_class=HTMLResponse)
    async def scenario(n: int, k: int) -> HTMLResponse:
        if not 0 <= n < len(reports):
            return _missing(given(n), depth=3)
        pairs = reports[n].data["pairs"]
        if not 0 <= k < len(pairs):
            return _missing(f"no scenario {k} in realism report {n}: it has {len(pairs)}", depth=3)
        body = (
            f'<p><a href="../../{n}">back to the report</a></p>'
            f"<h1>Real against simulated</h1>{pair_html(pairs[k], heading='h2')}"
        )
        return _document(f"scenario {pairs[k]['source']}", body, depth=3)

    return router
