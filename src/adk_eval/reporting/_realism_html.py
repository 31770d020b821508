"""The realism report as one self-contained HTML file: every behaviour, then scenarios side by side.

The page is drawn here, on the server side, with every value escaped as text; it
carries no script at all, and its Content-Security-Policy allows none and no
connection, so a conversation holding markup shows it as text. It reads the report's
JSON data (`RealismReport.to_data()`): a summary, one row per behaviour (the sentence,
the corrected p-value, whether the two groups are unlike), the overall distance and
the pass-rate gap, then up to 20 scenarios with the real conversation beside the
simulated run of its mined case.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

__all__ = ["render_realism_html", "write_realism_html"]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; "
    "form-action 'none'; base-uri 'none'"
)
_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.35rem;
text-align:left;vertical-align:top}.unlike{color:#a40000;font-weight:600}.alike{color:#555}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem;margin:1rem 0}
.side{border:1px solid #ddd;border-radius:6px;padding:.5rem}.line{margin:.2rem 0}
.author{font-weight:600}.user{background:#f3f7ff}
"""


def _cell(value: Any) -> str:
    return f"<td>{escape(str(value))}</td>"


def _features(data: dict[str, Any]) -> str:
    rows = []
    for feature in data.get("features", []):
        p = feature.get("p_adjusted")
        verdict = "unlike" if feature.get("significant") else "alike"
        rows.append(
            f'<tr class="{verdict}">'
            + _cell(feature.get("name"))
            + _cell(feature.get("sentence"))
            + _cell("—" if p is None else f"{p:.3g}")
            + _cell("unlikely to be noise" if feature.get("significant") else "within noise")
            + "</tr>"
        )
    return (
        "<table><thead><tr><th>Behaviour</th><th>In words</th><th>p (Holm)</th>"
        "<th>Verdict</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _side(title: str, lines: list[list[str]]) -> str:
    shown = "".join(
        f'<div class="line{" user" if author == "user" else ""}">'
        f'<span class="author">{escape(str(author))}:</span> {escape(str(text))}</div>'
        for author, text in lines
    )
    return f'<div class="side"><h3>{escape(title)}</h3>{shown}</div>'


def _pairs(data: dict[str, Any]) -> str:
    parts = []
    for pair in data.get("pairs", []):
        verdict = "passed" if pair.get("simulated_passed") else "did not pass"
        parts.append(
            f'<h3>{escape(str(pair.get("source")))}</h3><div class="pair">'
            + _side("Real conversation", pair.get("real", []))
            + _side(f"Simulated run ({verdict})", pair.get("simulated", []))
            + "</div>"
        )
    if not parts:
        return "<p>No simulated run is named after a real conversation's mined scenario.</p>"
    return "".join(parts)


def render_realism_html(data: dict[str, Any]) -> str:
    """The page of a realism report's JSON data (see the module doc)."""
    distance = data.get("distance")
    gap = data.get("gap")
    summary = (
        f"{data.get('real', 0)} real conversation(s) against {data.get('simulated', 0)} simulated"
    )
    extra = ""
    if distance:
        extra += (
            f"<p>Overall distance: {distance['distance']:.2f} standard deviations over "
            f"{distance['features']} behaviour(s) (p = {distance['p_value']:.3g}).</p>"
        )
    if gap:
        extra += f"<p>{escape(str(gap.get('sentence')))}</p>"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adk-eval realism</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>Your simulated users against your real users</h1>
<p id="summary">{escape(summary)}</p>
{extra}
<h2>Behaviours</h2>
{_features(data)}
<h2>Scenarios side by side</h2>
{_pairs(data)}
</body>
</html>
"""


def write_realism_html(data: dict[str, Any], path: Path) -> None:
    """Writes the page of a realism report's JSON data to `path`."""
    path.write_text(render_realism_html(data), encoding="utf-8")
