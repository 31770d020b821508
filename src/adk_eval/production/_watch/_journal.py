"""What a watch keeps for people to see: verdicts over time, alerts, its newest conversations.

The viewer's live page (``adk-eval view --watch STATE``) shows a watch as it runs:
each metric's pass rate over time with its interval, the alerts where they fired,
the newest failing conversations and, one click away, a conversation with its
evidence. The watch writes that here, in its own state file (`WatchState`'s
connection), and the page reads it there, read-only, while the watch writes on:

* ``verdicts``: one row per verdict (when, metric, passed or not applicable): the
  series. A few dozen bytes each; the page groups them into time buckets.
* ``alerts``: each alert, as its fields.
* ``kept``: the newest `KEEP_FAILING` conversations that failed a metric and the
  newest `KEEP_PASSING` that failed none, each with its verdicts and evidence and
  the session **as the watch read it**: redacted, unless the watch was told to read
  sessions as stored (``--no-redact``). Older ones are dropped as new ones come;
  they are written at most every `KEPT_EVERY` seconds (and when the watch ends),
  as most would be dropped as soon as written.

A conversation's rows are held until its mark's commit (`WatchState.commit`
writes them, then commits both), so a watch stopped at any point has journalled
a conversation's verdicts exactly when it recorded it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict

from ..._result import EvalResult
from ..._sources._stored import StoredConversation
from ._verdict import Alert, WatchVerdict

__all__ = ["KEEP_FAILING", "KEEP_PASSING", "KEPT_EVERY", "WatchJournal"]

KEEP_FAILING = 100
"""Failing conversations kept whole (the newest)."""

KEEP_PASSING = 50
"""Conversations that failed no metric kept whole (the newest)."""

KEPT_EVERY = 1.0
"""Seconds between two writes of the newest conversations (the page re-reads every 5)."""

_Kept = tuple[StoredConversation, dict[str, list[str]], Sequence[WatchVerdict]]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS verdicts (at REAL NOT NULL, metric TEXT NOT NULL, "
    "passed INTEGER, conversation TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS verdicts_at ON verdicts (metric, at)",
    "CREATE TABLE IF NOT EXISTS alerts (at REAL NOT NULL, metric TEXT NOT NULL, "
    "line TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS kept (name TEXT PRIMARY KEY, at REAL NOT NULL, "
    "failed INTEGER NOT NULL, failing TEXT NOT NULL, trace_id TEXT, verdicts TEXT NOT NULL, "
    "session TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS kept_at ON kept (failed, at)",
)
"""The journal's tables (created beside the state's own)."""


class WatchJournal:
    """Writes a watch's verdicts, alerts and newest conversations to its state file.

    Args:
        db: The state file's connection (`WatchState`'s): rows are committed with
            the conversation's mark.
        keep_failing: Failing conversations kept whole (the newest).
        keep_passing: Conversations that failed nothing kept whole (the newest).
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        keep_failing: int = KEEP_FAILING,
        keep_passing: int = KEEP_PASSING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._keep = {True: keep_failing, False: keep_passing}
        self._clock = clock
        self._verdicts: list[tuple[float, str, bool | None, str]] = []
        self._newest: dict[bool, deque[_Kept]] = {
            failed: deque(maxlen=keep) for failed, keep in self._keep.items()
        }
        self._kept_written = float("-inf")
        for statement in SCHEMA:
            self._db.execute(statement)

    def conversation(
        self,
        stored: StoredConversation,
        result: EvalResult,
        verdicts: Sequence[WatchVerdict],
    ) -> None:
        """Journals one scored conversation (held until `write`, which its mark's commit calls)."""
        self._verdicts.extend((v.at, v.metric, v.passed, v.conversation) for v in verdicts)
        failed = any(v.passed is False for v in verdicts)
        evidence = {v.metric: list(result.metrics[v.metric].evidence) for v in verdicts}
        self._newest[failed].append((stored, evidence, verdicts))  # (not the trace: the GC's)

    def write(self, *, everything: bool = False) -> None:
        """Writes what was journalled since (uncommitted: the caller commits).

        Verdicts are written each time; the newest conversations at most every
        `KEPT_EVERY` seconds (or now, `everything`): only the newest of them are
        kept, so most would be written only to be dropped.
        """
        if self._verdicts:
            self._db.executemany(
                "INSERT INTO verdicts (at, metric, passed, conversation) VALUES (?, ?, ?, ?)",
                self._verdicts,
            )
            self._verdicts = []
        now = self._clock()
        if not everything and now - self._kept_written < KEPT_EVERY:
            return
        self._kept_written = now
        for failed in (True, False):
            newest = self._newest[failed]
            if not newest:
                continue
            self._db.executemany(
                "INSERT OR REPLACE INTO kept (name, at, failed, failing, trace_id, verdicts, "
                "session) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [_row(*kept) for kept in newest],
            )
            newest.clear()
            self._db.execute(
                "DELETE FROM kept WHERE failed = ? AND name NOT IN "
                "(SELECT name FROM kept WHERE failed = ? ORDER BY at DESC, name DESC LIMIT ?)",
                (failed, failed, self._keep[failed]),
            )

    def alert(self, alert: Alert) -> None:
        """Journals one alert, committed at once."""
        body = asdict(alert)
        body["parties"] = dict(alert.parties)
        body["conversations"] = list(alert.conversations)
        self._db.execute(
            "INSERT INTO alerts (at, metric, line, body) VALUES (?, ?, ?, ?)",
            (alert.at, alert.metric, alert.line(), json.dumps(body, default=str)),
        )
        self._db.commit()


def _row(
    stored: StoredConversation,
    evidence: dict[str, list[str]],
    verdicts: Sequence[WatchVerdict],
) -> tuple[str, float, bool, str, str | None, str, str]:
    """A kept conversation's row: its verdicts with their evidence, and its session."""
    failing = [v.metric for v in verdicts if v.passed is False]
    details = [
        {
            "metric": v.metric,
            "passed": v.passed,
            "score": v.score,
            "party": v.party,
            "judged": v.judged,
            "evidence": evidence[v.metric],
        }
        for v in verdicts
    ]
    return (
        stored.name,
        verdicts[0].at if verdicts else 0.0,
        bool(failing),
        json.dumps(failing),
        verdicts[0].trace_id if verdicts else None,
        json.dumps(details, default=str),
        stored.session.model_dump_json(),
    )
