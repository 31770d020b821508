"""A watch's journal, read while the watch writes it: what the viewer's live page shows.

`JournalView` opens a watch's state file read-only (SQLite's ``mode=ro``: it never
writes the file, never creates it, and reads what the watch committed last, WAL mode
letting both go on at once; like any reader of a WAL database, SQLite may leave its
empty log and shared-memory index, ``-wal`` and ``-shm``, beside it) and answers
the live page's questions: each metric's pass rate per time bucket with its Wilson
interval, the alerts, the newest failing conversations and one conversation with
its verdicts, evidence and session (see `_journal` for what is kept).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.sessions import Session

from ..._errors import EvalSetupError
from ..._statistics import wilson

__all__ = ["AlertRow", "ConversationRecord", "ConversationRow", "JournalView", "Point"]


@dataclass(frozen=True)
class Point:
    """One time bucket of a metric's pass rate.

    Attributes:
        start: The bucket's start (seconds since the epoch).
        end: Its end.
        passed: Verdicts that passed in it.
        failed: Verdicts that failed in it (not applicable ones are left out).
        rate: The pass rate; None when no verdict applied.
        low: The rate's 95 % Wilson interval, low end (0 without verdicts).
        high: Its high end (1 without verdicts).
    """

    start: float
    end: float
    passed: int
    failed: int
    rate: float | None
    low: float
    high: float


@dataclass(frozen=True)
class AlertRow:
    """An alert as journalled: when, which metric, its one line and its fields."""

    at: float
    metric: str
    line: str
    alert: dict[str, Any]


@dataclass(frozen=True)
class ConversationRow:
    """A kept conversation, listed: its name, when it was scored, the metrics it failed."""

    name: str
    at: float
    failed: list[str]
    trace_id: str | None


@dataclass(frozen=True)
class ConversationRecord:
    """A kept conversation, whole.

    Attributes:
        name: ``app/user/session``.
        at: When it was scored.
        verdicts: Per metric: ``metric``, ``passed``, ``score``, ``party``,
            ``judged``, ``evidence`` (a list of lines).
        session: The session as the watch read it (redacted unless told otherwise).
        trace_id: Its OpenTelemetry trace id, when its source carries one.
    """

    name: str
    at: float
    verdicts: list[dict[str, Any]]
    session: Session
    trace_id: str | None


class JournalView:
    """A watch's state file, read-only (see the module doc).

    Args:
        path: The state file a watch writes (``--state``).

    Raises:
        EvalSetupError: It is missing or is not a watch's state file: one line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise EvalSetupError(
                f"{path} is not a watch's state file (no such file); give the --state "
                "file of a running or finished `adk-eval watch`"
            )
        try:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as error:
            raise EvalSetupError(
                f"{path} is not a watch's state file ({error}); give the --state file of "
                "an `adk-eval watch`"
            ) from None
        if not {"scored", "verdicts", "kept", "alerts"} <= tables:
            self._db.close()
            raise EvalSetupError(
                f"{path} is not a watch's state file (or one written before the live page "
                "existed): give the --state file of an `adk-eval watch`"
            )

    def metrics(self) -> list[str]:
        """The metrics with verdicts, in the order they first appeared."""
        rows = self._db.execute(
            "SELECT metric FROM verdicts GROUP BY metric ORDER BY MIN(rowid)"
        ).fetchall()
        return [str(row[0]) for row in rows]

    def series(self, metric: str, buckets: int = 60) -> list[Point]:
        """`metric`'s pass rate in `buckets` equal time buckets over the whole watch."""
        first, last = self._db.execute(
            "SELECT MIN(at), MAX(at) FROM verdicts WHERE metric = ?", (metric,)
        ).fetchone()
        if first is None:
            return []
        width = max((last - first) / buckets, 1e-9)
        counts = self._db.execute(
            "SELECT MIN(CAST((at - ?) / ? AS INTEGER), ?), SUM(passed = 1), SUM(passed = 0) "
            "FROM verdicts WHERE metric = ? GROUP BY 1 ORDER BY 1",
            (first, width, buckets - 1, metric),
        ).fetchall()
        points = []
        for index, passed, failed in counts:
            n = int(passed or 0) + int(failed or 0)
            start = first + index * width
            if n:
                interval = wilson(int(passed or 0), n)
                rate, low, high = interval.estimate, interval.low, interval.high
            else:
                rate, low, high = None, 0.0, 1.0
            points.append(
                Point(start, start + width, int(passed or 0), int(failed or 0), rate, low, high)
            )
        return points

    def alerts(self, limit: int = 50) -> list[AlertRow]:
        """The newest alerts first."""
        rows = self._db.execute(
            "SELECT at, metric, line, body FROM alerts ORDER BY at DESC, rowid DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [AlertRow(float(a), str(m), str(line), json.loads(b)) for a, m, line, b in rows]

    def failing(self, limit: int = 50) -> list[ConversationRow]:
        """The newest kept conversations that failed a metric, newest first."""
        return self._listed(True, limit)

    def passing(self, limit: int = 50) -> list[ConversationRow]:
        """The newest kept conversations that failed none, newest first."""
        return self._listed(False, limit)

    def _listed(self, failed: bool, limit: int) -> list[ConversationRow]:
        rows = self._db.execute(
            "SELECT name, at, failing, trace_id FROM kept WHERE failed = ? "
            "ORDER BY at DESC, name DESC LIMIT ?",
            (failed, limit),
        ).fetchall()
        return [ConversationRow(str(n), float(a), json.loads(f), t) for n, a, f, t in rows]

    def conversation(self, name: str) -> ConversationRecord | None:
        """A kept conversation whole, or None when it is not (or no longer) kept."""
        row = self._db.execute(
            "SELECT at, verdicts, session, trace_id FROM kept WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            return None
        at, verdicts, session, trace_id = row
        return ConversationRecord(
            name, float(at), json.loads(verdicts), Session.model_validate_json(session), trace_id
        )

    def totals(self) -> dict[str, int]:
        """``scored`` (conversations), ``verdicts``, ``failed`` (verdicts), ``alerts``."""
        scored = self._db.execute("SELECT COUNT(*) FROM scored").fetchone()[0]
        verdicts, failed = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(passed = 0), 0) FROM verdicts"
        ).fetchone()
        alerts = self._db.execute("SELECT COUNT(*) FROM alerts").fetchone()[0]
        return {
            "scored": int(scored),
            "verdicts": int(verdicts),
            "failed": int(failed),
            "alerts": int(alerts),
        }

    def close(self) -> None:
        """Closes the file."""
        self._db.close()
