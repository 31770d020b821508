"""What a watch says about one finished conversation, and when a metric drops.

The watch loop scores conversations as they finish and hands each metric's verdict
to its consumers (the drop monitor, the OpenTelemetry export, the Prometheus
counters, the alert sinks) as one `WatchVerdict`; a consumer never reads the
conversation itself, so nothing unredacted reaches it. An `Alert` is what the drop
monitor says when a metric's pass rate fell by more than noise explains.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Alert", "WatchVerdict"]


@dataclass(frozen=True)
class WatchVerdict:
    """One metric's verdict on one finished conversation.

    Attributes:
        conversation: The conversation's name (``app/user/session``), as `score` names it.
        metric: The metric's name.
        passed: Whether it passed; None when the metric was not applicable.
        score: The metric's score, when it has one.
        party: Who a failure is attributed to (``agent``, ``user``, ``setup``,
            ``provider``, ``unknown``), as runs are; None when it passed.
        trace_id: The conversation's OpenTelemetry trace id (32 hex digits), when its
            source carries one.
        at: When it was scored (seconds since the epoch).
        judged: Whether a model judged it (it spent judge budget).
    """

    conversation: str
    metric: str
    passed: bool | None
    score: float | None = None
    party: str | None = None
    trace_id: str | None = None
    at: float = 0.0
    judged: bool = False


@dataclass(frozen=True)
class Alert:
    """A metric's pass rate dropped by more than noise explains.

    Attributes:
        metric: The metric's name.
        baseline: The baseline pass rate.
        current: The pass rate since the baseline (or in the rolling window).
        interval: The interval of the drop (baseline minus current), low and high.
        conversations: The failing conversations behind it, newest first (a few).
        parties: Failures behind it by party.
        looked: Conversations scored for this metric when it fired.
        test: The sequential test that fired, in a few words.
        at: When it fired (seconds since the epoch).
    """

    metric: str
    baseline: float
    current: float
    interval: tuple[float, float]
    conversations: Sequence[str] = ()
    parties: Mapping[str, int] = field(default_factory=dict)
    looked: int = 0
    test: str = ""
    at: float = 0.0

    def line(self) -> str:
        """The alert as one line, for people."""
        low, high = self.interval
        return (
            f"{self.metric}: pass rate {self.current:.0%} against {self.baseline:.0%} "
            f"(drop {low:+.0%} to {high:+.0%}, {self.test}) after {self.looked} conversation(s)"
        )
