"""Where the runs database is by default, in a module of its own.

The commands' ``--db`` options name it; importing it from here, not from the store,
keeps ``sqlite3`` and the store out of a command that stores nothing
(``adk-eval run --no-store``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_DB_PATH"]

DEFAULT_DB_PATH = Path(".adk_eval") / "runs.db"
"""``.adk_eval/runs.db``, relative to the working directory."""
