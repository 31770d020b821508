"""Conversations whose source carries no message text, kept out of what reads the words.

A trace whose model calls were traced with content capture off is rebuilt with
every turn in place but none of its words (the stored conversation ``lacks``
``"content"``: see `_sources._traces`). Measured as a user, such a conversation
is a silent one (no words, no questions, no answers), so the realism report,
calibration and mining read stored conversations that carry their words
(`_sources._stored.with_words`): the others are left out, counted and named
(`LeftOut`) rather than compare simulated users with silent ones. Open
conversations, still being written, are left out too, and said the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._errors import EvalSetupError
from .._sources._stored import Named, ReadCounts

__all__ = ["NAMES_KEPT", "OPEN", "WHY", "LeftOut", "left_out"]

WHY = "their source carries no message text (content capture was off)"
OPEN = "still being written (updated in the last 10 minutes, stopped mid-turn)"
NAMES_KEPT = 20
"""Sessions named, at most (the count covers them all)."""

_FIX = (
    "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY in the app's "
    "environment to trace what was said, or read the sessions from the session store"
)


@dataclass
class LeftOut:
    """Conversations left out for one reason (`why`): how many, and the first names."""

    count: int = 0
    sessions: list[str] = field(default_factory=list)
    why: str = WHY

    @classmethod
    def of(cls, named: Named[str], why: str = WHY) -> LeftOut:
        """The first `NAMES_KEPT` of what a stream of stored conversations left out."""
        return cls(named.count, named.first[:NAMES_KEPT], why)

    def line(self, what: str = "real conversation(s)") -> str | None:
        """``3 real conversation(s) left out: <why>: s1, s2, s3`` (None: none left out)."""
        if not self.count:
            return None
        names = ", ".join(self.sessions)
        more = self.count - len(self.sessions)
        if more:
            names += f" and {more} more"
        return f"{self.count}{f' {what}' if what else ''} left out: {self.why}: {names}"

    def nothing_left(self, command: str, spec: str) -> EvalSetupError:
        """The one-line error when every conversation of `spec` was left out."""
        return EvalSetupError(
            f"{command}: none of the {self.count} real conversation(s) of {spec} carry message "
            f"text (content capture was off), so there is nothing to measure; {_FIX}"
        )

    def to_data(self) -> dict[str, Any]:
        """``{"count", "sessions", "why"}``, as a report's JSON holds it."""
        return {"count": self.count, "sessions": list(self.sessions), "why": self.why}


def left_out(counts: ReadCounts) -> tuple[LeftOut, LeftOut]:
    """What a stream left out of a reader of words: the silent conversations, the open ones."""
    opened = Named(counts.opened.count, [name for name, _ in counts.opened.first])
    return LeftOut.of(counts.lacking), LeftOut.of(opened, OPEN)
