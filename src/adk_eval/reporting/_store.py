"""Suite results you can keep: an append-only SQLite file of runs.

Every `adk-eval run` appends its report (default ``.adk_eval/runs.db``, relative
to the working directory). A file that is not such a database (an SQLite file
without its ``runs`` table: `adk_eval._file_kinds.RUNS_DATABASE`) is never
touched: opening it fails with a message naming the file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import _strict_json as strict_json
from .._errors import RunStoreError
from .._file_kinds import RUNS_DATABASE
from ._db_path import DEFAULT_DB_PATH

__all__ = ["DEFAULT_DB_PATH", "CasePoint", "RunInfo", "RunStore", "RunStoreError"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    command TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    total INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    terminated INTEGER NOT NULL,
    pass_rate REAL NOT NULL,
    duration_ms REAL NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS case_results (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT NOT NULL,
    turns INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    metrics TEXT NOT NULL,
    PRIMARY KEY (run_id, name, attempt)
);
"""


@dataclass(frozen=True)
class RunInfo:
    """One stored run, as listed.

    `pass_rate` counts what `counted` says: finished runs, xfailed ones left out,
    xpassed ones counted as passed (as the suite's pass rate does).
    """

    id: int
    created_at: str
    command: str
    total: int
    passed: int
    pass_rate: float
    failed: int = 0
    errors: int = 0
    terminated: int = 0
    repeat: int = 1
    duration_ms: float = 0.0
    live: str | None = None
    xfailed: int = 0
    xpassed: int = 0
    not_run: int = 0

    @property
    def counted(self) -> int:
        """The runs the pass rate counts: finished, not xfailed."""
        return self.total - self.not_run - self.xfailed

    @property
    def passes(self) -> int:
        """The runs the pass rate counts as passed (xpassed runs passed too)."""
        return self.passed + self.xpassed


@dataclass(frozen=True)
class CasePoint:
    """How one case (or, summed, a suite) did in one stored run: a point of its history.

    Attributes:
        run_id: The run.
        created_at: When it ran.
        cases: Cases counted (1 for one case's history).
        runs: Finished runs of those cases.
        passes: Runs that passed.
        reliable: Cases whose every run of the repeat passed (pass^k).
        repeat: Runs asked per case.
    """

    run_id: int
    created_at: str
    cases: int
    runs: int
    passes: int
    reliable: int
    repeat: int

    @property
    def pass_rate(self) -> float:
        """Passed runs / finished runs."""
        return self.passes / self.runs if self.runs else 0.0

    @property
    def pass_hat_k(self) -> float:
        """Share of the cases that passed every run (pass^k; 1.0 or 0.0 for one case)."""
        return self.reliable / self.cases if self.cases else 0.0


class RunStore:
    """The runs database at `path` (created on first append)."""

    def __init__(self, path: Path = DEFAULT_DB_PATH) -> None:
        self.path = Path(path)

    @contextmanager
    def _connect(self, *, create: bool) -> Iterator[sqlite3.Connection]:
        if not create and not self.path.exists():
            raise RunStoreError(
                f"no runs stored yet: {self.path} does not exist (run `adk-eval run` first, "
                "or point --db at your runs file)"
            )
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = sqlite3.connect(self.path)
        except sqlite3.Error as error:
            raise RunStoreError(f"cannot open runs database {self.path}: {error}") from None
        try:
            try:
                version = connection.execute("PRAGMA user_version").fetchone()[0]
                tables = {
                    row[0]
                    for row in connection.execute(
                        "SELECT name FROM sqlite_master WHERE type='table'"
                    )
                }
            except sqlite3.DatabaseError as error:
                raise RunStoreError(
                    f"{self.path} is not an adk-eval runs database ({error}); it was left "
                    "untouched. Point --db at another file."
                ) from None
            if version > SCHEMA_VERSION:
                raise RunStoreError(
                    f"{self.path} was written by a newer adk-eval (schema {version}, this one "
                    f"reads {SCHEMA_VERSION}); upgrade adk-eval"
                )
            if tables and not RUNS_DATABASE.tables <= tables:
                raise RunStoreError(
                    f"{self.path} is an SQLite file but not an adk-eval runs database "
                    f"(tables: {', '.join(sorted(tables))}); it was left untouched. "
                    "Point --db at another file."
                )
            if create and not tables:
                connection.executescript(_SCHEMA)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            yield connection
            connection.commit()
        finally:
            connection.close()

    def check(self) -> None:
        """Checks, before a run, that its results can be stored here (creates nothing).

        Raises:
            RunStoreError: The path is a folder, not a runs database, written by a
                newer adk-eval, or in a folder that cannot be created or written.
        """
        if self.path.is_dir():
            raise RunStoreError(
                f"{self.path} is a folder, not a runs database; point --db at a file"
            )
        if self.path.exists():
            with self._connect(create=False):
                return
        folder = next((p for p in self.path.absolute().parents if p.exists()), None)
        if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise RunStoreError(
                f"cannot create runs database {self.path}: {folder} is not a writable folder; "
                "point --db elsewhere or use --no-store"
            )

    def append(self, report: dict[str, Any], *, command: str, run_id: int | None = None) -> int:
        """Stores a suite report; returns its run id.

        With `run_id` (a run stored while it ran, see `begin`), the report replaces
        what that run had so far, cases included.
        """
        summary = report["summary"]
        values = (
            report["created_at"],
            command,
            report["repeat"],
            summary["total"],
            summary["passed"],
            summary["failed"],
            summary["errors"],
            summary["terminated"],
            report["pass_rate"],
            report["duration_ms"],
            strict_json.dumps(report),
        )
        with self._connect(create=True) as db:
            if run_id is None:
                cursor = db.execute(
                    "INSERT INTO runs (created_at, command, repeat, total, passed, failed, "
                    "errors, terminated, pass_rate, duration_ms, report) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    values,
                )
                run_id = cursor.lastrowid
                assert run_id is not None
            else:
                db.execute(
                    "UPDATE runs SET created_at=?, command=?, repeat=?, total=?, passed=?, "
                    "failed=?, errors=?, terminated=?, pass_rate=?, duration_ms=?, report=? "
                    "WHERE id=?",
                    (*values, run_id),
                )
                db.execute("DELETE FROM case_results WHERE run_id = ?", (run_id,))
            db.executemany(
                "INSERT INTO case_results VALUES (?,?,?,?,?,?,?,?)",
                [
                    (
                        run_id,
                        r["name"],
                        r["attempt"],
                        r["status"],
                        r["outcome"],
                        r["turns"],
                        r["duration_ms"],
                        strict_json.dumps(r["metrics"]),
                    )
                    for r in report["results"]
                ],
            )
        return run_id

    def begin(self, report: dict[str, Any], *, command: str) -> int:
        """Stores a run as it starts, marked running by this process; returns its id.

        `append` with the id fills it in as runs finish, and at the end; a viewer
        shows it meanwhile. Were the process killed, the run stays what it had,
        marked as ended before its end (see `live_status`).
        """
        live = {**report, "running": {"pid": os.getpid()}}
        return self.append(live, command=command)

    def runs(self, limit: int = 20) -> list[RunInfo]:
        """The latest runs, newest first."""
        columns = [
            "id",
            "created_at",
            "command",
            "total",
            "passed",
            "pass_rate",
            "failed",
            "errors",
            "terminated",
            "repeat",
            "duration_ms",
        ]
        counts = ("xfailed", "xpassed", "not_run")  # in the report only: older runs lack some
        summary = [f"COALESCE(json_extract(report, '$.summary.{key}'), 0)" for key in counts]
        with self._connect(create=False) as db:
            rows = db.execute(
                f"SELECT {', '.join(columns + summary)}, json_extract(report, '$.running.pid') "
                "FROM runs ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        names = [*columns, *counts]
        return [
            RunInfo(**dict(zip(names, row[:-1], strict=True)), live=live_status(row[-1]))
            for row in rows
        ]

    def history(self, case: str | None = None, limit: int = 200) -> list[CasePoint]:
        """Pass rate and pass^k of the latest `limit` runs, oldest first.

        For one `case` (only the runs that hold it), every run of it counted, as its
        own row in a report counts them. For every case of each run, counted as the
        suite's pass rate and pass^k count them: xfailed runs left out of the runs,
        a case whose every run was xfailed left out of the cases.
        """
        where, params = ("WHERE c.name = ?", (limit, case)) if case else ("", (limit,))
        with self._connect(create=False) as db:
            rows = db.execute(
                "SELECT r.id, r.created_at, r.repeat, COUNT(*), SUM(c.status = 'passed'), "
                "SUM(c.outcome = 'xfailed') "
                "FROM (SELECT id, created_at, repeat FROM runs ORDER BY id DESC LIMIT ?) r "
                f"JOIN case_results c ON c.run_id = r.id {where} "
                "GROUP BY r.id, c.name ORDER BY r.id",
                params,
            ).fetchall()
        points: dict[int, CasePoint] = {}
        for run_id, created_at, repeat, runs, passes, xfailed in rows:
            left_out = 0 if case else xfailed
            counted = case is not None or xfailed < runs
            seen = points.get(run_id) or CasePoint(run_id, created_at, 0, 0, 0, 0, repeat)
            points[run_id] = replace(
                seen,
                cases=seen.cases + counted,
                runs=seen.runs + runs - left_out,
                passes=seen.passes + passes,
                reliable=seen.reliable + (counted and runs == repeat and passes == repeat),
            )
        return list(points.values())

    def costs(self, limit: int = 200) -> dict[int, dict[str, Any]]:
        """The cost block of each of the latest `limit` runs' reports, by run id.

        Runs stored before costs were kept have none.
        """
        with self._connect(create=False) as db:
            rows = db.execute(
                "SELECT id, json_extract(report, '$.cost') FROM runs ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return {run_id: json.loads(cost) for run_id, cost in rows if cost is not None}

    def case_rates(self, before_run: int, limit: int = 20) -> dict[str, list[float]]:
        """Each case's pass rate in the latest `limit` runs stored before `before_run`.

        Oldest first; a case has a rate only in the runs that hold it. Counted as
        `compare` counts: xfailed runs left out (a run where all were has no rate).
        """
        with self._connect(create=False) as db:
            rows = db.execute(
                "SELECT c.name, COUNT(*), SUM(c.status = 'passed') "
                "FROM (SELECT id FROM runs WHERE id < ? ORDER BY id DESC LIMIT ?) r "
                "JOIN case_results c ON c.run_id = r.id WHERE c.outcome != 'xfailed' "
                "GROUP BY r.id, c.name ORDER BY r.id",
                (before_run, limit),
            ).fetchall()
        rates: dict[str, list[float]] = {}
        for name, runs, passes in rows:
            rates.setdefault(name, []).append(passes / runs)
        return rates

    def load(self, run_id: int) -> dict[str, Any]:
        """The report of one run.

        Raises:
            RunStoreError: There is no run `run_id` (or the database cannot be used).
        """
        if not -(2**63) <= run_id < 2**63:  # SQLite's integers: no such run can exist
            raise RunStoreError(f"no run {str(run_id)[:30]} in {self.path}: run ids are small")
        with self._connect(create=False) as db:
            row = db.execute("SELECT report FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            known = ", ".join(str(run.id) for run in self.runs(10)) or "none"
            raise RunStoreError(f"no run {run_id} in {self.path} (latest runs: {known})")
        report: dict[str, Any] = json.loads(row[0])
        return report

    def last_two(self) -> tuple[int, int]:
        """Ids of the two latest finished runs (not one still running), older first."""
        latest = [run for run in self.runs(20) if run.live != "running"][:2]
        if len(latest) < 2:
            raise RunStoreError(
                f"compare needs two stored runs that finished; {self.path} has {len(latest)}"
            )
        return latest[1].id, latest[0].id


def live_status(pid: int | None) -> str | None:
    """``running`` while the process storing a run lives, ``abandoned`` once it is gone.

    None for a run stored whole (every run but one being written by ``adk-eval run``).
    """
    if pid is None:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "abandoned"
    except PermissionError:  # someone else's process: alive
        return "running"
    return "running"
