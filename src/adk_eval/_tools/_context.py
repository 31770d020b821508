"""`MockToolContext`: what a mock may know about the call it answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeAlias

from .._state import ScopedState
from ._clock import system_clock

__all__ = ["Clock", "MockToolContext"]

Clock: TypeAlias = Callable[[], datetime]
"""A function returning the current time; `EvalCase.clock` may fix it."""


@dataclass(frozen=True)
class MockToolContext:
    """What a mock may know about the call it answers.

    Attributes:
        call_id: The function call id (``adk-...`` when the model gave none).
        tool_name: Name of the tool being called.
        invocation_id: The ADK invocation the call belongs to.
        agent_name: Name of the agent that made the call.
        state: Scoped read/write access to the calling session's state; writes
            land in the tool response's state delta, like a real tool's.
        occurrence: How many times this run called this tool with these same
            args before (0 the first time).
    """

    call_id: str
    tool_name: str
    invocation_id: str
    agent_name: str
    state: ScopedState
    occurrence: int = 0
    _clock: Clock = field(default=system_clock, repr=False)

    def now(self) -> datetime:
        """Returns the current time from the case's clock (timezone-aware)."""
        return self._clock()
