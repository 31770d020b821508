"""Which stored sessions to read: `SessionFilter`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from google.adk.sessions import Session

from .._errors import EvalSetupError

__all__ = ["SessionFilter"]


@dataclass(frozen=True)
class SessionFilter:
    """Which stored sessions to read.

    Attributes:
        app: Only this app's sessions.
        user: Only this user's sessions.
        since: Only sessions last updated at or after this POSIX time.
        until: Only sessions last updated before this POSIX time.
        sessions: Only these session ids (empty: any).
        limit: At most this many sessions (the most recently updated first).
    """

    app: str | None = None
    user: str | None = None
    since: float | None = None
    until: float | None = None
    sessions: Sequence[str] = field(default_factory=tuple)
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise EvalSetupError(f"limit must be >= 1, got {self.limit}")

    def keeps(self, session: Session) -> bool:
        """Whether `session` passes every filter but `limit`."""
        return (
            (self.app is None or session.app_name == self.app)
            and (self.user is None or session.user_id == self.user)
            and (not self.sessions or session.id in self.sessions)
            and (self.since is None or session.last_update_time >= self.since)
            and (self.until is None or session.last_update_time < self.until)
        )
