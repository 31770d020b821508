"""Reports of suite runs: JSON (versioned), JUnit XML, a SQLite store, and comparisons.

Names are imported on first use, so reading stored runs (``adk-eval runs``) does
not import ADK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._compare import CaseChange as CaseChange
    from ._compare import Comparison as Comparison
    from ._compare import compare_reports as compare_reports
    from ._json_report import REPORT_SCHEMA as REPORT_SCHEMA
    from ._json_report import REPORT_VERSION as REPORT_VERSION
    from ._json_report import load_report_schema as load_report_schema
    from ._json_report import suite_report as suite_report
    from ._junit import junit_xml as junit_xml
    from ._junit import write_junit_xml as write_junit_xml
    from ._store import DEFAULT_DB_PATH as DEFAULT_DB_PATH
    from ._store import RunInfo as RunInfo
    from ._store import RunStore as RunStore
    from ._store import RunStoreError as RunStoreError

_EXPORTS = {
    # JSON
    "REPORT_SCHEMA": "._json_report",
    "REPORT_VERSION": "._json_report",
    "load_report_schema": "._json_report",
    "suite_report": "._json_report",
    # JUnit XML
    "junit_xml": "._junit",
    "write_junit_xml": "._junit",
    # stored runs
    "DEFAULT_DB_PATH": "._store",
    "RunInfo": "._store",
    "RunStore": "._store",
    "RunStoreError": "._store",
    # comparing runs
    "CaseChange": "._compare",
    "Comparison": "._compare",
    "compare_reports": "._compare",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
