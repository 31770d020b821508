"""The error the studio answers a request it cannot carry out with."""

from __future__ import annotations

from .._errors import AdkEvalError

__all__ = ["StudioError"]


class StudioError(AdkEvalError):
    """A request the studio cannot carry out.

    Attributes:
        status: The HTTP status to answer with (404 unknown, 409 not now, 422 does not fit).
        problems: Every problem found with what was sent, as readable messages.
    """

    def __init__(self, message: str, status: int = 409, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problems = problems or []
