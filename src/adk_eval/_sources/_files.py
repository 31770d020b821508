"""What a path a user names is, and what cannot be read from it: `Unreadable`.

A session source reads only regular files: a FIFO named ``*.json`` would block
the read forever and ``/dev/zero`` never ends, so they are refused before
anything is read (`not_a_file`, from the file-kind table), as EvalSet files are.

A stored session whose row cannot be read (a malformed JSON column, an event
ADK's own model refuses) is an `Unreadable`: a source hands it to its caller,
who skips and counts it, or stops there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .._errors import EvalSetupError
from .._file_kinds import not_a_file

__all__ = ["OnUnreadable", "Unreadable", "first_line", "not_a_file", "refuse"]


@dataclass(frozen=True)
class Unreadable:
    """A stored session that could not be read, and why.

    Attributes:
        name: The session (``app/user/session-id``; for exported JSON, the file too).
        reason: What is wrong with its rows, in one line.
    """

    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


OnUnreadable = Callable[[Unreadable], None]
"""What a source does with an unreadable session: skip and count it, or raise."""


def refuse(source: str) -> OnUnreadable:
    """What a source does with an unreadable session when no one asked: stop, naming it."""

    def stop(found: Unreadable) -> None:
        raise EvalSetupError(
            f"cannot read stored session `{found.name}` of {source}: {found.reason}"
        )

    return stop


def first_line(error: BaseException) -> str:
    """An error in one line: a pydantic error's first problem and where, else its first line."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            found = errors()
        except Exception:  # not pydantic's: its own text will do
            found = None
        if found:
            where = ".".join(str(part) for part in found[0].get("loc", ()))
            return f"{where}: {found[0].get('msg', '')}" if where else str(found[0].get("msg"))
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
