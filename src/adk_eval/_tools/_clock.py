"""The case clock: what `MockToolContext.now()` reads, and where injected latency goes.

A run's clock is the case's `clock` (or the system clock) plus the time faults
injected so far. Injected latency is virtual: it moves this clock and eats into
the run's `max_duration` (through the listeners the run registers) without
sleeping, so a suite with latency faults runs as fast as one without.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = ["CaseClock", "system_clock"]


def system_clock() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class CaseClock:
    """A run's clock: `base` plus the latency injected so far.

    Args:
        base: The case's clock; None for the system clock.
    """

    def __init__(self, base: Callable[[], datetime] | None = None) -> None:
        self._base = base or system_clock
        self.injected = 0.0
        """Seconds of latency injected in this run."""
        self._listeners: list[Callable[[float], None]] = []

    def __call__(self) -> datetime:
        return self._base() + timedelta(seconds=self.injected)

    def on_advance(self, listener: Callable[[float], None]) -> None:
        """Calls `listener(seconds)` whenever the clock is advanced."""
        self._listeners.append(listener)

    def advance(self, seconds: float) -> None:
        """Moves the clock `seconds` ahead (injected latency)."""
        if seconds <= 0:
            return
        self.injected += seconds
        for listener in self._listeners:
            listener(seconds)

    def close(self) -> None:
        """The run is over: nothing listens (a listener closing over the run would keep it)."""
        self._listeners.clear()
