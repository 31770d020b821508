"""The realism report as one self-contained HTML file: every behaviour, then scenarios side by side.

The page is drawn here, on the server side, with every value escaped as text; it
carries no script at all, and its Content-Security-Policy allows none and no
connection, so a conversation holding markup shows it as text. It reads the report's
JSON data (`RealismReport.to_data()`): a summary, one row per behaviour (each group's
estimate and the difference with their intervals, the corrected p-value, whether the
two groups are unlike, the sentence), the overall distance and the pass-rate gap, then
up to 20 scenarios with the real conversation beside the simulated run of its mined case.

The parts (`summary_html`, `feature_table`, `pair_html`) are the viewer's too
(`_viewer_realism`), as is the style, ``static/realism.css``: inlined here, linked there.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from .._web import static_text

__all__ = [
    "feature_table",
    "pair_html",
    "render_realism_html",
    "summary_html",
    "write_realism_html",
]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; "
    "form-action 'none'; base-uri 'none'"
)
_SHARES = ("flag", "rate")
"""The kinds shown as percentages (the others as numbers)."""


def _cell(value: Any, css: str = "") -> str:
    return (
        f'<td class="{css}">{escape(str(value))}</td>' if css else f"<td>{escape(str(value))}</td>"
    )


def _number(x: Any, share: bool) -> str:
    if not isinstance(x, int | float):
        return str(x)
    return str(round(100 * x)) if share else f"{x:.3g}"


def _interval(interval: Any, share: bool, unit: str = " %") -> str:
    """``71 % [64, 77]`` (a share) or ``2.5 [2.1, 2.9]``; ``—`` for none."""
    if not isinstance(interval, dict):
        return "—"
    low, high = (_number(interval.get(end), share) for end in ("low", "high"))
    return f"{_number(interval.get('estimate'), share)}{unit if share else ''} [{low}, {high}]"


def _group(group: Any, share: bool) -> str:
    if not isinstance(group, dict):
        return "—"
    return f"{_interval(group.get('estimate'), share)} (n = {group.get('n', 0)})"


def feature_table(data: dict[str, Any]) -> str:
    """The table of behaviours: real and simulated with intervals, difference, p, verdict, words."""
    rows = []
    for feature in data.get("features", []):
        p = feature.get("p_adjusted")
        share = feature.get("kind") in _SHARES
        verdict = "unlike" if feature.get("significant") else "alike"
        rows.append(
            f'<tr class="{verdict}">'
            + _cell(feature.get("name"))
            + _cell(_group(feature.get("real"), share), "number")
            + _cell(_group(feature.get("simulated"), share), "number")
            + _cell(_interval(feature.get("difference"), share, " points"), "number")
            + _cell("—" if not isinstance(p, int | float) else f"{p:.3g}")
            + _cell("unlikely to be noise" if feature.get("significant") else "within noise")
            + _cell(feature.get("sentence"))
            + "</tr>"
        )
    return (
        "<table><thead><tr><th>Behaviour</th><th>Real users</th><th>Simulated users</th>"
        "<th>Difference</th><th>p (Holm)</th><th>Verdict</th><th>In words</th></tr></thead>"
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )


def _side(title: str, lines: list[list[str]]) -> str:
    shown = "".join(
        f'<div class="line{" user" if author == "user" else ""}">'
        f'<span class="author">{escape(str(author))}:</span> {escape(str(text))}</div>'
        for author, text in lines
    )
    return f'<div class="side"><h3>{escape(title)}</h3>{shown}</div>'


def pair_html(pair: dict[str, Any], *, heading: str = "h3") -> str:
    """One scenario: its source as a heading, the real conversation beside the simulated run."""
    verdict = "passed" if pair.get("simulated_passed") else "did not pass"
    return (
        f'<{heading}>{escape(str(pair.get("source")))}</{heading}><div class="pair">'
        + _side("Real conversation", pair.get("real", []))
        + _side(f"Simulated run ({verdict})", pair.get("simulated", []))
        + "</div>"
    )


def _pairs(data: dict[str, Any]) -> str:
    parts = [pair_html(pair) for pair in data.get("pairs", [])]
    if not parts:
        return "<p>No simulated run is named after a real conversation's mined scenario.</p>"
    return "".join(parts)


def summary_html(data: dict[str, Any]) -> str:
    """The counts, the overall distance and the pass-rate gap, as paragraphs."""
    distance = data.get("distance")
    gap = data.get("gap")
    summary = (
        f"{data.get('real', 0)} real conversation(s) against {data.get('simulated', 0)} simulated"
    )
    shown = f'<p id="summary">{escape(summary)}</p>\n'
    if distance:
        shown += (
            f'<p id="distance">Overall distance: {distance["distance"]:.2f} standard deviations '
            f"over {distance['features']} behaviour(s) (p = {distance['p_value']:.3g}).</p>\n"
        )
    if gap:
        shown += f'<p id="gap">{escape(str(gap.get("sentence")))}</p>\n'
    return shown


def render_realism_html(data: dict[str, Any]) -> str:
    """The page of a realism report's JSON data (see the module doc)."""
    style = static_text("realism.css", __package__).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adk-eval realism</title>
<style>{style}</style>
</head>
<body>
<h1>Your simulated users against your real users</h1>
{summary_html(data)}
<h2>Behaviours</h2>
{feature_table(data)}
<h2>Scenarios side by side</h2>
{_pairs(data)}
</body>
</html>
"""


def write_realism_html(data: dict[str, Any], path: Path) -> None:
    """Writes the page of a realism report's JSON data to `path`."""
    path.write_text(render_realism_html(data), encoding="utf-8")
