"""What a watch remembers between polls and restarts: its own small SQLite file.

A watch must score each finished conversation once, and again only when it
changed; stopped and started again, it must repeat nothing and lose nothing. So
it keeps, in a file of its own (never the store it watches):

* each conversation it scored, by name, with the mark it had then (its last
  update time and its number of events): a conversation whose mark moved is
  scored again;
* the seed of its sample (a restart with another seed would sample other
  conversations, so it is refused);
* how far the store is settled (`settled`): every conversation last updated
  before it was scored or is left for good, so a poll reads only what is newer.

Beside them, in tables of its own, the journal the viewer's live page reads
(`_journal`: verdicts over time, alerts, the newest conversations as the watch
read them, so redacted unless told otherwise); never a source URL (a PostgreSQL
URL holds a password). The watch commits what it scored in groups (`commit`: a
few hundred conversations, or a second) and hands their verdicts on
only once committed; SQLite in WAL mode loses nothing committed when the process
is killed (a power cut: at most the last moments). So a watch stopped at any
point has handed on exactly what it committed: what it was scoring since is lost
with the verdicts nobody saw, and scored again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..._errors import EvalSetupError
from ._journal import WatchJournal

__all__ = ["Mark", "WatchState"]

Mark = tuple[float, int]
"""A conversation's last update time (POSIX seconds) and number of events."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS scored (name TEXT PRIMARY KEY, updated REAL NOT NULL, "
    "events INTEGER NOT NULL, at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


class WatchState:
    """The conversations a watch scored, its seed and its settled mark (see the module doc).

    Args:
        path: The state file (created with its folder; None: kept in memory only).
        seed: The sample's seed; a file written with another seed is refused.

    Raises:
        EvalSetupError: The file is not a watch's state (or cannot be opened), or it
            was written with another seed: one line naming it and the fix.
    """

    def __init__(self, path: Path | None, seed: int) -> None:
        self.path = path
        self._held: dict[str, tuple[float, int, float]] = {}
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(":memory:" if path is None else str(path))
            # a commit survives the process (a crash, a kill) without a disk sync each time
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            for statement in _SCHEMA:
                self._db.execute(statement)
            self.journal = WatchJournal(self._db)
            self._db.commit()
        except sqlite3.DatabaseError as error:
            raise EvalSetupError(
                f"cannot use {path} as a watch's state file ({error}); give --state a new file"
            ) from None
        before = self._meta("seed")
        if before is None:
            self._set("seed", str(seed))
        elif int(before) != seed:
            raise EvalSetupError(
                f"{path} was written by a watch sampling with seed {before}, not {seed}: "
                f"give --seed {before} to resume it, or another --state file"
            )

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
        self._db.commit()

    @property
    def settled(self) -> float | None:
        """Every conversation last updated before this was scored or left for good."""
        value = self._meta("settled")
        return None if value is None else float(value)

    def settle(self, moment: float) -> None:
        """Moves the settled mark forward to `moment` (never back)."""
        before = self.settled
        if before is None or moment > before:
            self._set("settled", repr(moment))

    def mark_of(self, name: str) -> Mark | None:
        """The mark `name` was last scored at (recorded, committed or not), or None."""
        held = self._held.get(name)
        if held is not None:
            return held[0], held[1]
        row = self._db.execute(
            "SELECT updated, events FROM scored WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else (float(row[0]), int(row[1]))

    def seen(self, name: str, mark: Mark) -> bool:
        """Whether `name` was scored at `mark` (or a later one) already."""
        before = self.mark_of(name)
        return before is not None and before >= mark

    def record(self, name: str, mark: Mark, at: float) -> None:
        """`name` was scored at `mark`: held, with the journal's rows, until `commit`."""
        self._held[name] = (mark[0], mark[1], at)

    def commit(self, *, everything: bool = False) -> None:
        """Commits what was recorded since the last commit, with the journal's rows.

        Args:
            everything: Also the journal's newest conversations, now (the watch
                ends); otherwise at most every `KEPT_EVERY` seconds.
        """
        if self._held:
            self._db.executemany(
                "INSERT OR REPLACE INTO scored (name, updated, events, at) VALUES (?, ?, ?, ?)",
                [(name, *held) for name, held in self._held.items()],
            )
            self._held.clear()
        self.journal.write(everything=everything)
        self._db.commit()

    def count(self) -> int:
        """Conversations scored so far (over every run on this file)."""
        return int(self._db.execute("SELECT COUNT(*) FROM scored").fetchone()[0])

    def close(self) -> None:
        """Closes the file."""
        self._db.close()
