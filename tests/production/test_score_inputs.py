"""adk-eval score on awkward inputs: WAL stores, odd file names, non-files, bad rows, open talks."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from google.adk.events import Event
from google.adk.sessions import DatabaseSessionService

from adk_eval.production import open_sessions
from adk_eval.production._score import score_sessions

from . import stores
from .stores import METRICS_FILE, score

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _forget_metrics_files(isolated_imports):
    """Each test's metrics file is a module of its own (one name, many tmp folders)."""


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> Path:
    """An SQLite file ADK's DatabaseSessionService wrote: 6 finished conversations."""
    path = tmp_path_factory.mktemp("store") / "sessions.db"
    stores.fill(f"sqlite+aiosqlite:///{path}", 6)
    return path


@pytest.fixture
def store(filled, tmp_path) -> Path:
    """A copy of the filled store of this test's own, in a folder of its own."""
    folder = tmp_path / "store"
    folder.mkdir()
    shutil.copy(filled, folder / "sessions.db")
    return folder / "sessions.db"


def untouched(path: Path) -> tuple[list[str], str, int]:
    """What a store's folder holds, and the store's bytes and modification time."""
    return sorted(os.listdir(path.parent)), stores.checksum(path), path.stat().st_mtime_ns


def copy_session(db: sqlite3.Connection) -> str:
    """Copies the first session's rows under a new id (as a live agent adds one); its id."""
    app, user, old, state, created, updated = db.execute("SELECT * FROM sessions").fetchone()
    new = str(uuid.uuid4())
    db.execute(
        "INSERT INTO sessions VALUES (?,?,?,?,?,?)", (app, user, new, state, created, updated)
    )
    for row in db.execute("SELECT * FROM events WHERE session_id = ?", (old,)).fetchall():
        db.execute(
            "INSERT INTO events VALUES (?,?,?,?,?,?,?)",
            (uuid.uuid4().hex, *row[1:3], new, *row[4:]),
        )
    db.commit()
    return new


# -- a store in WAL mode -----------------------------------------------------------------


def test_a_wal_store_closed_or_in_use_gets_no_new_file_beside_it(store, tmp_path):
    db = sqlite3.connect(store)
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()  # the last connection: SQLite checkpoints and removes -wal and -shm
    before = untouched(store)
    assert before[0] == ["sessions.db"]

    result, report = score(tmp_path, f"sqlite:///{store}")

    assert report["summary"]["total"] == 6, result.output
    assert untouched(store) == before

    writer = sqlite3.connect(store)  # an agent still writing: its rows in the -wal file
    writer.execute("PRAGMA wal_autocheckpoint=0")
    added = copy_session(writer)
    before = untouched(store)
    assert before[0] == ["sessions.db", "sessions.db-shm", "sessions.db-wal"]

    result, report = score(tmp_path, f"sqlite:///{store}")
    after = untouched(store)
    writer.close()

    assert report["summary"]["total"] == 7, result.output  # what the log holds is read
    assert any(run["name"].endswith(added) for run in report["results"])
    assert after == before


def test_a_wal_log_without_its_shm_file_is_one_line_and_left_alone(store, tmp_path):
    writer = sqlite3.connect(store)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    copy_session(writer)
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("sessions.db", "sessions.db-wal"):  # copied without the -shm file
        shutil.copy(store.parent / name, moved / name)
    writer.close()
    before = untouched(moved / "sessions.db")

    result, _ = score(tmp_path, f"sqlite:///{moved / 'sessions.db'}")

    assert result.exit_code == 2, result.output
    assert "has a write-ahead log (sessions.db-wal) but no sessions.db-shm" in result.output
    assert result.output.count("\n") == 1, result.output
    assert untouched(moved / "sessions.db") == before


# -- file names that look like URI options ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("uri?mode=rwc&x=.db", "uri?mode=rwc&x=.db"),
        ("uri?mode=rwc&x=.db", "uri%3Fmode=rwc%26x=.db"),
        ("a#b%20c.db", "a#b%20c.db"),
    ],
)
def test_a_file_name_with_question_mark_or_hash_is_read_as_that_file(
    store, tmp_path, name, written
):
    odd = store.parent / name
    store.rename(odd)
    before = untouched(odd)

    result, report = score(tmp_path, f"sqlite:///{odd.parent}/{written}")

    assert report["summary"]["total"] == 6, result.output
    assert untouched(odd) == before  # no `uri` beside it, nothing written


def test_options_after_a_sqlite_path_are_refused_in_one_line(store, tmp_path):
    result, _ = score(tmp_path, f"sqlite:///{store}?mode=rwc")

    assert result.exit_code == 2, result.output
    assert "sqlite:///PATH takes no options, got `?mode=rwc`" in result.output
    assert result.output.count("\n") == 1, result.output


# -- what is not a regular file --------------------------------------------------------


def score_at_once(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`adk-eval score` in a process of its own, cut off if it hangs or reads without end."""
    (tmp_path / "metrics_eval.py").write_text(METRICS_FILE)
    limited = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31)); "
        "from adk_eval._cli import main; main()"
    )
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-c", limited, "score", *args, "--metrics", "metrics_eval.py"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path, "ADK_EVAL_DB": str(tmp_path / "runs.db")},
    )


@pytest.mark.parametrize(
    ("sessions", "message"),
    [
        ("/dev/zero", "/dev/zero is a character device, not a file"),
        ("{tmp}/fifo.json", "fifo.json is a FIFO (named pipe), not a file"),
        ("{tmp}/exported", "fifo.json is a FIFO (named pipe), not a file"),
        ("sqlite:///{tmp}/fifo.json", "fifo.json is a FIFO (named pipe), not an SQLite file"),
        ("sqlite:////dev/zero", "/dev/zero is a character device, not an SQLite file"),
    ],
)
@pytest.mark.slow
def test_what_is_not_a_regular_file_is_refused_at_once_in_one_line(tmp_path, sessions, message):
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "exported").mkdir()
    os.mkfifo(tmp_path / "exported" / "fifo.json")

    done = score_at_once(tmp_path, sessions.format(tmp=tmp_path))

    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout + done.stderr
    assert (done.stdout + done.stderr).count("\n") == 1, done.stdout + done.stderr


# -- rows that cannot be read ------------------------------------------------------------


def test_a_malformed_row_is_skipped_counted_and_named_unless_strict(store, tmp_path):
    db = sqlite3.connect(store)
    keys = db.execute("SELECT app_name, user_id, id FROM sessions ORDER BY id").fetchall()
    event = db.execute("SELECT id FROM events WHERE session_id = ?", (keys[0][2],)).fetchone()[0]
    db.execute("UPDATE events SET event_data = '{\"content\": ' WHERE id = ?", (event,))
    db.execute("UPDATE sessions SET state = '[1, 2]' WHERE id = ?", (keys[1][2],))
    db.commit()
    db.close()
    names = ["/".join(key) for key in keys[:2]]

    result, report = score(tmp_path, f"sqlite:///{store}")

    assert result.exit_code == 1, result.output  # the others were scored: odd `n` fails
    assert report["summary"]["total"] == 4
    assert (
        "skipped 2 session(s) that cannot be read (--strict stops at the first):" in result.output
    )
    assert f"  {names[0]}: its event {event}: Invalid JSON" in result.output
    assert f"  {names[1]}: its session row: Attribute 'state' does not accept" in result.output

    strict, _ = score(tmp_path, f"sqlite:///{store}", "--strict")

    assert strict.exit_code == 2, strict.output
    *_, line = strict.output.strip().splitlines()  # after the line saying what it scores
    assert line.startswith("adk-eval: error: stopped at stored session `"), line
    assert "which cannot be read (strict)" in line
    assert any(f"stored session `{name}`" in line for name in names)


def test_a_malformed_exported_session_is_skipped_and_named(store, tmp_path):
    async def export() -> Path:
        folder = tmp_path / "exported"
        folder.mkdir()
        async for session in open_sessions(f"sqlite:///{store}").sessions():
            (folder / f"{session.id}.json").write_text(session.model_dump_json())
        (folder / "broken.json").write_text("{not json")
        (folder / "wrong.json").write_text(
            json.dumps([{"app_name": "a", "user_id": "u", "id": "s", "events": 5}])
        )
        return folder

    folder = asyncio.run(export())
    result, report = score(tmp_path, str(folder))

    assert report["summary"]["total"] == 6, result.output
    assert "skipped 2 session(s)" in result.output
    assert f"  {folder / 'broken.json'}: not exported session JSON" in result.output
    assert f"  a/u/s ({folder / 'wrong.json'}[0]): not a Session: events:" in result.output


def test_a_malformed_postgresql_row_is_skipped_and_named(postgres, tmp_path):
    postgres.create_database("broken_store")
    url = postgres.url("broken_store")
    keys = stores.fill(url, 3)
    app, user, session_id = keys[0]
    postgres.psql(
        "broken_store",
        "UPDATE events SET event_data = '{\"content\": 5}'::jsonb "
        f"WHERE session_id = '{session_id}'",
    )

    result, report = score(tmp_path, url)

    assert report["summary"]["total"] == 2, result.output
    assert f"  {app}/{user}/{session_id}: its event " in result.output
    assert "content: Input should be a valid dictionary" in result.output


# -- conversations still being written --------------------------------------------------


def test_an_open_conversation_is_said_open_and_left_out_unless_asked(store, tmp_path):
    async def start_one() -> str:  # the user's message is stored; the agent is still at work
        service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{store}")
        session = await service.create_session(app_name="shop", user_id="dan")
        await service.append_event(
            session, Event(author="user", invocation_id="i-1", content=stores.message("hi?"))
        )
        await service.close()
        return f"shop/dan/{session.id}"

    name = asyncio.run(start_one())

    result, report = score(tmp_path, f"sqlite:///{store}")

    assert report["summary"]["total"] == 6, result.output
    assert "1 open conversation(s), still being written, left out (--include-open" in result.output
    assert f"  {name}: the agent has not answered the user's last message yet" in result.output
    assert name not in {run["name"] for run in report["results"]}

    included, report = score(tmp_path, f"sqlite:///{store}", "--include-open")

    assert report["summary"]["total"] == 7, included.output
    (run,) = [r for r in report["results"] if r["name"] == name]
    assert not run["metrics"]["one_reply"]["passed"]  # scored as it stands
    assert "1 open conversation(s), still being written, scored as they stand" in included.output


# -- golden export: its file is checked before anything is scored -----------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("notes.json", "notes.json is not valid JSON"),
        ("fifo.json", "it is a FIFO (named pipe), not a file"),
        ("notes.json/mined.json", "cannot create it"),
    ],
)
def test_an_export_goldens_file_that_cannot_be_appended_to_stops_before_scoring(
    store, tmp_path, target, message
):
    (tmp_path / "notes.json").write_text("not json\n")
    os.mkfifo(tmp_path / "fifo.json")

    result, report = score(
        tmp_path, f"sqlite:///{store}", "--export-goldens", str(tmp_path / target)
    )

    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.output.count("\n") == 1, result.output  # nothing was scored
    assert report == {}
    assert (tmp_path / "notes.json").read_text() == "not json\n"


# -- memory: counts for every session, a bounded list of runs ------------------------------


def test_a_score_counts_every_session_and_lists_a_bounded_number(store, tmp_path):
    every = asyncio.run(score_sessions(open_sessions(f"sqlite:///{store}"), stores.METRICS))
    kept = asyncio.run(score_sessions(open_sessions(f"sqlite:///{store}"), stores.METRICS, keep=2))

    assert kept.summary == every.summary
    assert kept.pass_rate == every.pass_rate
    assert kept.pass_rate_interval == every.pass_rate_interval
    assert len(every.results) == 6
    assert len(kept.results) == 2
    assert not any(run.passed for run in kept.results)  # those that did not pass first
    assert not kept.listed_all
