"""The file-kind table against the files adk-eval and ADK really write."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from google.adk.sessions.sqlite_session_service import SqliteSessionService

from adk_eval import EvalResult
from adk_eval._file_kinds import (
    MOCK_MCP_LOG,
    MODEL_CACHE,
    OTLP_JSON,
    OTLP_PROTO,
    RUNS_DATABASE,
    SESSION_STORE,
    SPANS_FILE,
    SQLITE_HEADER,
    read_head,
    sqlite_kind,
    sqlite_mark,
    suffix_kind,
)
from adk_eval._sources._spans._spans_file import open_spans_file
from adk_eval._suites._results import suite_from_results
from adk_eval.mock_mcp._log import claim
from adk_eval.models._gateway._cache_file import CacheDatabase
from adk_eval.reporting import RunStore, suite_report


def kind_of(path: Path):
    """The kind of an SQLite file, as a reader that opens it tells it."""
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        mark = db.execute("PRAGMA application_id").fetchone()[0]
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
    return sqlite_kind(mark, tables)


def test_the_marked_files_carry_their_marks_in_the_header(tmp_path):
    log = tmp_path / "calls.sqlite"
    claim(log, create=True)
    cache = tmp_path / "models.sqlite"
    CacheDatabase(cache).connection.close()

    assert sqlite_mark(read_head(log) or b"") == MOCK_MCP_LOG.mark
    assert sqlite_mark(read_head(cache) or b"") == MODEL_CACHE.mark
    assert (kind_of(log), kind_of(cache)) == (MOCK_MCP_LOG, MODEL_CACHE)


async def test_the_unmarked_files_are_known_by_their_tables(tmp_path):
    runs = tmp_path / "runs.db"
    suite = suite_from_results(
        [EvalResult(name="a", status="passed")], case_names=["a"], repeat=1, duration_ms=1.0
    )
    RunStore(runs).append(suite_report(suite), command="run")
    spans = tmp_path / "spans.db"
    open_spans_file(spans).close()
    sessions = tmp_path / "sessions.db"
    service = SqliteSessionService(str(sessions))
    await service.create_session(app_name="app", user_id="u")

    assert sqlite_mark(read_head(runs) or b"") == 0
    assert kind_of(runs) == RUNS_DATABASE
    assert kind_of(spans) == SPANS_FILE
    assert kind_of(sessions) == SESSION_STORE


def test_another_programs_file_is_no_kind_and_text_is_not_sqlite(tmp_path):
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("PRAGMA application_id = 7")
        db.execute("CREATE TABLE runs (id INTEGER)")  # a `runs` table does not make it ours
        db.commit()
    text = tmp_path / "notes.txt"
    text.write_text("SQLite format 3, or so it says\n" * 10)

    assert kind_of(other) is None
    assert sqlite_kind(0, ["notes"]) is None
    assert sqlite_mark(read_head(text) or b"") is None
    assert sqlite_mark(SQLITE_HEADER) is None  # too short to hold a mark
    assert read_head(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("name", "kind"),
    [("a.json", OTLP_JSON), ("b.JSONL", OTLP_JSON), ("c.pb", OTLP_PROTO), ("d.binpb", OTLP_PROTO)],
)
def test_trace_files_are_known_by_their_suffixes(name, kind):
    assert suffix_kind(Path(name)) == kind
    assert suffix_kind(Path("e.sqlite")) is None
