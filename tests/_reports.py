"""Helpers over JSON reports shared by the scale-out tests (shards, workers, Ray)."""

from __future__ import annotations

import json
from pathlib import Path


def report_view(path: Path) -> list:
    """What must not depend on how a suite was split: runs, summary and per-case stats."""
    report = json.loads(path.read_text())
    runs = sorted(
        (
            r["name"],
            r["attempt"],
            r["status"],
            json.dumps(r["metrics"], sort_keys=True),
            r["transcript"],
        )
        for r in report["results"]
    )
    return [runs, report["summary"], report["cases"]]
