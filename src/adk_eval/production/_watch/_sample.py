"""Which conversations the judges read: a seeded, stable sample, within a budget per hour.

Cheap metrics (those that read only events and state) score every finished
conversation; judges (metrics that call a model) cost money and quota, so a
watch runs them on a sample only:

* `sampled(name, seed, rate)`: a conversation is in the sample when the SHA-256
  of the seed and its name, read as a number in [0, 1), is below the rate. The
  same conversation is in or out whatever the order, the machine or a restart;
  another seed draws another sample.
* `JudgeBudget`: at most so many judge calls (one call per judge metric on one
  conversation), tokens or dollars in any hour; a sampled conversation the
  budget cannot afford gets its cheap metrics only, and is counted.
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
    """At most so many judge calls, tokens and US dollars in any hour (None: no limit).

    Calls are known before they are made: a conversation's judges run only if
    their calls fit. Tokens and cost are known only after: its judges run while
    the last hour's spend is below the limit, so the limit may be passed by one
    conversation's judges at most, and is then held until enough of that hour
    has passed. A model with no known price spends no dollars (its tokens count).

    Args:
        calls_per_hour: Judge calls (one per judge metric on one conversation).
        tokens_per_hour: Judge tokens (prompt and completion).
        cost_per_hour: Judge spend in US dollars.
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        calls_per_hour: int | None,
        tokens_per_hour: int | None = None,
        cost_per_hour: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = calls_per_hour
        self.limits = (calls_per_hour, tokens_per_hour, cost_per_hour)
        self._clock = clock
        self._spent: deque[tuple[float, int, int, float]] = deque()
        self.spent = 0
        """Judge calls made so far (every hour)."""
        self.tokens = 0
        """Judge tokens used so far."""
        self.cost = 0.0
        """Judge US dollars spent so far (priced models only)."""

    @property
    def after_the_fact(self) -> bool:
        """Whether a limit is on what calls use (tokens, dollars), known only after them."""
        return self.limits[1] is not None or self.limits[2] is not None

    def in_last_hour(self) -> tuple[int, int, float]:
        """Judge calls, tokens and dollars of the last hour."""
        now = self._clock()
        while self._spent and now - self._spent[0][0] >= _HOUR:
            self._spent.popleft()
        return (
            sum(calls for _, calls, _, _ in self._spent),
            sum(tokens for _, _, tokens, _ in self._spent),
            sum(cost for _, _, _, cost in self._spent),
        )

    def take(self, calls: int) -> bool:
        """Spends `calls` if the budget affords them; False (nothing spent) if not."""
        if self.limits != (None, None, None):
            spent_calls, tokens, cost = self.in_last_hour()
            calls_limit, tokens_limit, cost_limit = self.limits
            if (
                (calls_limit is not None and spent_calls + calls > calls_limit)
                or (tokens_limit is not None and tokens >= tokens_limit)
                or (cost_limit is not None and cost >= cost_limit)
            ):
                return False
        self._spent.append((self._clock(), calls, 0, 0.0))
        self.spent += calls
        return True

    def used(self, tokens: int, cost: float) -> None:
        """Records what the judges just taken used (tokens, priced dollars)."""
        self._spent.append((self._clock(), 0, tokens, cost))
        self.tokens += tokens
        self.cost += cost
