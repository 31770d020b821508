"""One self-contained HTML file of a run: the JSON report and the page that draws it, inline.

The file needs no server and no network: its Content-Security-Policy allows no
connection at all, the report is embedded as JSON (``<`` written as a JSON escape, so
no value can close the script element), and the page draws every value as text.
Upload it as a CI artifact and open it from disk.
"""

from __future__ import annotations

from pathlib import Path
from string import Template
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

    The markup is ``static/report.html``. The static report inlines its style, data
    and script; the viewer links them, and adds `nav` (markup, such as its links to the
    realism reports) to its navigation.
    """
    return Template(asset("report.html")).substitute(head=head, nav=nav, body_end=body_end)


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
