"""One self-contained HTML file of a run: the JSON report and the page that draws it, inline.

The file needs no server and no network: its Content-Security-Policy allows no
connection at all, the report is embedded as JSON (``<`` written as a JSON escape, so
no value can close the script element), and the page draws every value as text.
Upload it as a CI artifact and open it from disk.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["render_html_report", "write_html_report"]

_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'"
)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def _inline(text: str) -> str:
    """`text` safe inside a ``<script>`` or ``<style>`` element."""
    return text.replace("</", "<\\/")


def render_html_report(report: dict[str, Any]) -> str:
    """The HTML document of `report` (a `suite_report` dict)."""
    data = json.dumps(report, ensure_ascii=False).replace("<", "\\u003c")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adk-eval report</title>
<style>{_inline(_asset("report.css"))}</style>
</head>
<body>
<header><h1 id="title"></h1><div id="meta"></div></header>
<main>
<section id="list">
<div class="filters">
<select id="status" aria-label="status">
<option value="all">all outcomes</option><option value="failed">failed</option>
<option value="error">error</option><option value="terminated">terminated</option>
<option value="xpassed">xpassed</option><option value="xfailed">xfailed</option>
<option value="passed">passed</option>
</select>
<input id="search" type="search" placeholder="case name" aria-label="case name">
<span id="count"></span>
</div>
<table><thead><tr><th>Case</th><th>#</th><th>Outcome</th><th>Turns</th><th>Time</th>
<th>Failed metrics</th><th>Tokens</th></tr></thead><tbody id="cases"></tbody></table>
<div class="pager"><button id="prev">previous</button><span id="page"></span>
<button id="next">next</button></div>
</section>
<section id="detail"></section>
</main>
<script type="application/json" id="adk-eval-data">{data}</script>
<script>{_inline(_asset("report.js"))}</script>
</body>
</html>
"""


def write_html_report(report: dict[str, Any], path: Path) -> None:
    """Writes `render_html_report(report)` to `path` (its folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html_report(report), encoding="utf-8")
