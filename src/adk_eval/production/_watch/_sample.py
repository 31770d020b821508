"""Which conversations the judges read: a seeded, stable sample, within a budget per hour.

Cheap metrics (those that read only events and state) score every finished
conversation; judges (metrics that call a model) cost money and quota, so a
watch runs them on a sample only:

* `sampled(name, seed, rate)`: a conversation is in the sample when the SHA-256
  of the seed and its name, read as a number in [0, 1), is below the rate. The
  same conversation is in or out whatever the order, the machine or a restart;
  another seed draws another sample.
* `JudgeBudget`: at most so many judge calls (one call per judge metric on one
  conversation) in any hour; a sampled conversation the budget cannot afford
  gets its cheap metrics only, and is counted.
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from collections.abc import Callable

from ...metrics._types import Metric

__all__ = ["JudgeBudget", "is_judge", "sampled"]

_HOUR = 3600.0


def sampled(name: str, seed: int, rate: float) -> bool:
    """Whether conversation `name` is in the seeded sample of `rate` (0 to 1)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(f"{seed}\0{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def is_judge(metric: Metric) -> bool:
    """Whether `metric` calls a model (an `llm_judge`, a metric with a ``judge``)."""
    from ...metrics._judge import LlmJudge

    if isinstance(metric, LlmJudge):
        return True
    judge = getattr(metric, "judge", None)
    return judge is not None and judge is not False


class JudgeBudget:
    """At most `calls_per_hour` judge calls in any hour (None: no limit).

    Args:
        calls_per_hour: The budget.
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(
        self, calls_per_hour: int | None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = calls_per_hour
        self._clock = clock
        self._calls: deque[tuple[float, int]] = deque()
        self.spent = 0
        """Judge calls made so far (every hour)."""

    def in_last_hour(self) -> int:
        """Judge calls made in the last hour."""
        now = self._clock()
        while self._calls and now - self._calls[0][0] >= _HOUR:
            self._calls.popleft()
        return sum(calls for _, calls in self._calls)

    def take(self, calls: int) -> bool:
        """Spends `calls` if the budget affords them; False (nothing spent) if not."""
        if self.limit is not None and self.in_last_hour() + calls > self.limit:
            return False
        self._calls.append((self._clock(), calls))
        self.spent += calls
        return True
