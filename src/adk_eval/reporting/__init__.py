"""Reports of suite runs: JSON (versioned), JUnit XML, a SQLite store, and comparisons."""

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
