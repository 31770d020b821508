"""Reports of suite runs: JSON (versioned), JUnit XML, a SQLite store, and comparisons."""

from .compare import CaseChange, Comparison, compare_reports
from .json_report import REPORT_SCHEMA, REPORT_VERSION, load_report_schema, suite_report
from .junit import junit_xml, write_junit_xml
from .store import DEFAULT_DB_PATH, RunInfo, RunStore, RunStoreError

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
