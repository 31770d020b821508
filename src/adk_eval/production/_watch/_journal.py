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
  sessions as stored (``--no-redact``). Older ones are dropped as new ones come.

A conversation's rows are written without a commit: `WatchState.commit` commits
them with its mark, so a watch stopped at any point has journalled a conversation
exactly when it recorded it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict

from ..._result import EvalResult
from ..._sources._stored import StoredConversation
from ._verdict import Alert, WatchVerdict

__all__ = ["KEEP_FAILING", "KEEP_PASSING", "WatchJournal"]

KEEP_FAILING = 100
"""Failing conversations kept whole (the newest)."""

KEEP_PASSING = 50
"""Conversations that failed no metric kept whole (the newest)."""

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
    ) -> None:
        self._db = db
        self._keep = {True: keep_failing, False: keep_passing}
        for statement in SCHEMA:
            self._db.execute(statement)

    def conversation(
        self,
        stored: StoredConversation,
        result: EvalResult,
        verdicts: Sequence[WatchVerdict],
    ) -> None:
        """Journals one scored conversation (uncommitted: its mark's commit takes it)."""
        self._db.executemany(
            "INSERT INTO verdicts (at, metric, passed, conversation) VALUES (?, ?, ?, ?)",
            [(v.at, v.metric, v.passed, v.conversation) for v in verdicts],
        )
        failing = [v.metric for v in verdicts if v.passed is False]
        at = verdicts[0].at if verdicts else 0.0
        trace_id = verdicts[0].trace_id if verdicts else None
        details = [
            {
                "metric": v.metric,
                "passed": v.passed,
                "score": v.score,
                "party": v.party,
                "judged": v.judged,
                "evidence": list(result.metrics[v.metric].evidence),
            }
            for v in verdicts
        ]
        self._db.execute(
            "INSERT OR REPLACE INTO kept (name, at, failed, failing, trace_id, verdicts, session) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                stored.name,
                at,
                bool(failing),
                json.dumps(failing),
                trace_id,
                json.dumps(details, default=str),
                stored.session.model_dump_json(),
            ),
        )

    def trim(self) -> None:
        """Drops the kept conversations older than the newest `keep_failing` / `keep_passing`."""
        for failed, keep in self._keep.items():
            self._db.execute(
                "DELETE FROM kept WHERE failed = ? AND name NOT IN "
                "(SELECT name FROM kept WHERE failed = ? ORDER BY at DESC, name DESC LIMIT ?)",
                (failed, failed, keep),
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
