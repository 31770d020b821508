"""Reports of suite runs: JSON (versioned), JUnit XML, a SQLite store, and comparisons.

Names are imported on first use, so reading stored runs (``adk-eval runs``) does
not import ADK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._compare import CaseChange, Comparison, compare_reports
    from ._json_report import REPORT_SCHEMA, REPORT_VERSION, load_report_schema, suite_report
    from ._junit import junit_xml, write_junit_xml
    from ._store import DEFAULT_DB_PATH, RunInfo, RunStore, RunStoreError


__all__ = [
    # JSON
    "REPORT_SCHEMA",
    "REPORT_VERSION",
    "load_report_schema",
    "suite_report",
    # JUnit XML
    "junit_xml",
    "write_junit_xml",
    # stored runs
    "DEFAULT_DB_PATH",
    "RunInfo",
    "RunStore",
    "RunStoreError",
    # comparing runs
    "CaseChange",
    "Comparison",
    "compare_reports",
]

_EXPORTS = {
    "REPORT_SCHEMA": "_json_report",
    "REPORT_VERSION": "_json_report",
    "load_report_schema": "_json_report",
    "suite_report": "_json_report",
    "junit_xml": "_junit",
    "write_junit_xml": "_junit",
    "DEFAULT_DB_PATH": "_store",
    "RunInfo": "_store",
    "RunStore": "_store",
    "RunStoreError": "_store",
    "CaseChange": "_compare",
    "Comparison": "_compare",
    "compare_reports": "_compare",
}

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
