"""Conversations whose source carries no message text, kept out of what reads the words.

A trace whose model calls were traced with content capture off is rebuilt with
every turn in place but none of its words (its source's ``lacks_of`` says
``"content"``: see `production.TraceSource`). Measured as a user, such a
conversation is a silent one (no words, no questions, no answers), so the
realism report, calibration and mining leave it out, count it and name it
(`LeftOut`) rather than compare simulated users with silent ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.adk.sessions import Session

from .._errors import EvalSetupError

__all__ = ["NAMES_KEPT", "WHY", "LeftOut", "lacks_text"]

WHY = "their source carries no message text (content capture was off)"
NAMES_KEPT = 20
"""Sessions named, at most (the count covers them all)."""

_FIX = (
    "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY in the app's "
    "environment to trace what was said, or read the sessions from the session store"
)


def lacks_text(source: Any, session: Session) -> bool:
    """Whether `source` says `session` carries no message text (a trace, capture off)."""
    lacks_of = getattr(source, "lacks_of", None)
    return lacks_of is not None and "content" in lacks_of(session)


@dataclass
class LeftOut:
    """The conversations left out for want of their words: how many, and the first names."""

    count: int = 0
    sessions: list[str] = field(default_factory=list)

    def add(self, session: Session) -> None:
        """Counts `session` (named while fewer than `NAMES_KEPT` are)."""
        self.count += 1
        if len(self.sessions) < NAMES_KEPT:
            self.sessions.append(session.id)

    def line(self, what: str = "real conversation(s)") -> str | None:
        """``3 real conversation(s) left out: <why>: s1, s2, s3`` (None: none left out)."""
        if not self.count:
            return None
        names = ", ".join(self.sessions)
        more = self.count - len(self.sessions)
        if more:
            names += f" and {more} more"
        return f"{self.count}{f' {what}' if what else ''} left out: {WHY}: {names}"

    def nothing_left(self, command: str, spec: str) -> EvalSetupError:
        """The one-line error when every conversation of `spec` was left out."""
        return EvalSetupError(
            f"{command}: none of the {self.count} real conversation(s) of {spec} carry message "
            f"text (content capture was off), so there is nothing to measure; {_FIX}"
        )

    def to_data(self) -> dict[str, Any]:
        """``{"count", "sessions", "why"}``, as a report's JSON holds it."""
        return {"count": self.count, "sessions": list(self.sessions), "why": WHY}
