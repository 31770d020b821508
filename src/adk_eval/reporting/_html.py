"""One self-contained HTML file of a run: the JSON report and the page that draws it, inline.

The file needs no server and no network: its Content-Security-Policy allows no
connection at all, the report is embedded as JSON (``<`` written as a JSON escape, so
no value can close the script element), and the page draws every value as text.
Upload it as a CI artifact and open it from disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import _strict_json as strict_json
from .._web import SHARED_FILES, static_text

__all__ = ["asset", "page", "render_html_report", "write_html_report"]

_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'"
)


def asset(name: str) -> str:
    """A file of the page: shared (``page.js``, ``page.css``) or its own (``report.js``, ...)."""
    return static_text(name) if name in SHARED_FILES else static_text(name, __package__)


def _inline(text: str) -> str:
    """`text` safe inside a ``<script>`` or ``<style>`` element."""
    return text.replace("</", "<\\/")


def page(*, head: str, body_end: str, nav: str = "") -> str:
    """The report page: `head` goes in ``<head>``, `body_end` (data, scripts) last in ``<body>``.

    The static report inlines its style, data and script; the viewer links them, and
    adds `nav` (markup, such as its links to the realism reports) to its navigation.
    """
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adk-eval report</title>
{head}
</head>
<body>
<header><div id="verdict" role="status" hidden></div>
<h1 id="title"></h1><div id="meta"></div><details id="safety" hidden><summary></summary>
<ul></ul></details><details id="runs-for-real" hidden>
<summary></summary><ul></ul></details><section id="robustness" hidden><h2></h2>
<table><thead><tr><th>Case</th><th>Without faults</th><th>With faults</th><th>Drop (points)</th>
<th>Beyond noise</th></tr></thead><tbody></tbody></table><p></p></section><nav id="nav" hidden>
<button id="show-runs">runs</button> <button id="show-queue">review queue</button>
<button id="show-judges">judges</button>{nav}
<span id="compare-hint"></span></nav></header>
<section id="judges" hidden><table><thead><tr><th>Judge metric</th><th>Model</th>
<th>Prompt</th><th>Labels</th><th>Agreement</th><th>Cohen's κ</th><th>People's pass rate</th>
<th>Self-consistency</th></tr></thead><tbody id="judge-rows"></tbody></table></section>
<section id="queue" hidden><div class="filters">
<select id="queue-status" aria-label="outcome"><option value="all">all outcomes</option>
<option value="notok">not passed</option><option value="error">error</option>
<option value="failed">failed</option><option value="passed">passed</option></select>
<select id="queue-party" aria-label="attributed to"><option value="all">any party</option>
<option value="agent">agent</option><option value="simulated_user">simulated user</option>
<option value="setup">setup</option><option value="provider">provider</option>
<option value="unknown">unknown</option></select>
<input id="queue-search" type="search" placeholder="case name" aria-label="case name">
<label><input id="queue-unreviewed" type="checkbox" checked> not reviewed yet</label></div>
<table><thead><tr><th>Run</th><th>Case</th><th>Outcome</th><th>Party</th>
<th>Failing metrics</th><th>Reviewed</th></tr></thead><tbody id="queue-rows"></tbody></table>
</section>
<section id="runs" hidden><svg id="chart" width="640" height="140" role="img"
aria-label="pass rate by run"></svg>
<table><thead><tr><th></th><th>Run</th><th>When</th><th>Pass rate</th><th>pass^k</th>
<th>Outcomes (runs)</th><th>Time</th><th>Cost</th><th>Command</th></tr></thead>
<tbody id="run-rows"></tbody>
</table>
<button id="compare">compare the two ticked runs</button></section>
<section id="comparison" hidden><table><thead><tr><th>Case</th><th>Change</th><th>Before</th>
<th>After</th><th>Metrics (before → after)</th></tr></thead><tbody id="changes"></tbody></table>
<div id="compare-detail"></div>
</section>
<main id="run">
<section id="list">
<div class="filters">
<select id="status" aria-label="status">
<option value="all">all outcomes</option><option value="failed">failed</option>
<option value="error">error</option><option value="terminated">terminated</option>
<option value="xpassed">xpassed</option><option value="xfailed">xfailed</option>
<option value="passed">passed</option>
</select>
<input id="search" type="search" placeholder="case name" aria-label="case name">
<select id="party" aria-label="attributed to">
<option value="all">any party</option><option value="agent">agent</option>
<option value="simulated_user">simulated user</option><option value="setup">setup</option>
<option value="provider">provider</option><option value="unknown">unknown</option>
</select>
<select id="metric" aria-label="failing metric"><option value="all">any metric</option></select>
<label><input id="unreviewed" type="checkbox"> not reviewed yet</label>
<span id="count"></span>
</div>
<table><thead><tr><th>Case</th><th>Run</th><th>Outcome</th><th>Replies</th><th>Time</th>
<th>Failed metrics</th><th>Repeats</th><th>Tokens · cost</th></tr></thead>
<tbody id="cases"></tbody></table>
<div class="pager"><button id="prev">previous</button><span id="page"></span>
<button id="next">next</button></div>
</section>
<section id="detail"></section>
</main>
{body_end}
</body>
</html>
"""


def render_html_report(report: dict[str, Any]) -> str:
    """The self-contained HTML document of `report` (a `suite_report` dict)."""
    data = strict_json.dumps(report, ensure_ascii=False).replace("<", "\\u003c")
    head = (
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        f"<style>{_inline(asset('page.css'))}\n{_inline(asset('report.css'))}</style>"
    )
    body_end = (
        f'<script type="application/json" id="adk-eval-data">{data}</script>\n'
        f"<script>{_inline(asset('page.js'))}\n{_inline(asset('report.js'))}</script>"
    )
    return page(head=head, body_end=body_end)


def write_html_report(report: dict[str, Any], path: Path) -> None:
    """Writes `render_html_report(report)` to `path` (its folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html_report(report), encoding="utf-8")
