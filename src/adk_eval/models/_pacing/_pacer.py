"""`Pacer`: when a model call may go, so that a suite stays within its providers' quotas.

`Pacer` is what the gateway asks (a protocol); `LocalPacer` paces in this
process, and the clients of a suite's shared pacer (`_shared`, `_ray`) ask
one that another process holds.

Calls are paced per **key** (a model, and the address it is served from), in
the order they asked, each waiting for three things:

* **the quota window**, when a `RateLimit` is known: at most ``limit.requests``
  calls, and ``limit.tokens`` tokens (estimated before the call, corrected by
  the answer's usage), in any window of ``limit.window`` seconds. A provider
  counts a request from when it arrives, which is somewhere between when the
  call was let go and when its answer came back (a busy client sends late); so
  a call holds its place in the window until ``window`` seconds after its
  answer (plus `WINDOW_MARGIN`), and nothing a client does late can push a
  window over the quota. That costs the answer's latency per window;
* **a block** the provider asked for: after a 429 the key waits until its
  ``Retry-After`` (or Gemini's ``RetryInfo``) has passed, or, when it named no
  time or one under `MIN_RETRY_WAIT` (a provider that says ``0`` and refuses
  again would be asked again at once, without end), an exponential backoff with
  jitter. The backoff grows with each refusal of a call sent after the last
  one (calls already in flight when a 429 came are refused by the same
  shortage, and do not grow it), and a success resets it;
* **its concurrency**: unlimited until the first 429, which halves it (to half
  the calls then in flight); each success raises it by ``1 / concurrency``
  (additive increase, multiplicative decrease).

The state is plain data behind a thread lock; each waiter waits on an event of
its own event loop, woken thread-safely, so one pacer serves every loop and
thread of a process (`_shared` serves one to a suite's other processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ._failures import Failure
from ._limits import RateLimit

__all__ = [
    "MAX_BACKOFF",
    "MIN_RETRY_WAIT",
    "WINDOW_MARGIN",
    "Grant",
    "KeyState",
    "LocalPacer",
    "Pacer",
]

WINDOW_MARGIN = 0.01
"""The share of a window (at most a quarter second) added to it when counting."""

MAX_BACKOFF = 60.0
"""The longest wait after a 429 that named no time, in seconds."""

MIN_RETRY_WAIT = 0.5
"""The shortest wait after a 429, in seconds: a shorter time named is not taken (backoff)."""

_BASE_BACKOFF = 1.0


@dataclass
class Grant:
    """A call that may go now: release it with its outcome (`Pacer.release`).

    Attributes:
        key: Its key.
        entry: Its place in the key's window: ``[until, tokens]``, where ``until``
            is when its answer came (infinite while it is in flight).
        waited: Seconds it waited for its turn.
        round: How many backoffs its key had grown by when it was granted.
    """

    key: str
    entry: list[float]
    waited: float
    round: int = field(default=0, kw_only=True)


@dataclass(frozen=True)
class KeyState:
    """What a key's pacing has learned (for reports and tests).

    Attributes:
        concurrency: Calls allowed in flight (``inf`` until a 429 was seen).
        in_flight: Calls in flight now.
        blocked_for: Seconds until the provider's last 429 stops blocking.
        rate_limited: 429 answers seen.
    """

    concurrency: float
    in_flight: int
    blocked_for: float
    rate_limited: int


class Pacer(Protocol):
    """What the gateway asks before a model call goes, and tells once it is over."""

    def try_acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant | None:
        """A go-ahead at once, without waiting, or None (then `acquire`)."""

    async def acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant:
        """Waits until a call on `key` may go; cancelling the wait gives up its turn."""

    def release(
        self, grant: Grant, *, tokens: float | None = None, failure: Failure | None = None
    ) -> None:
        """A call is over: `tokens` it used (None: the estimate stands), `failure` if it failed."""

    def state(self, key: str) -> KeyState:
        """What `key`'s pacing has learned so far."""


class _Waiter:
    __slots__ = ("event", "loop")

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()

    def wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
            self.loop.call_soon_threadsafe(self.event.set)


@dataclass
class _Key:
    limit: RateLimit | None = None
    log: deque[list[float]] = field(default_factory=deque)
    queue: deque[_Waiter] = field(default_factory=deque)
    blocked_until: float = 0.0
    concurrency: float = math.inf
    in_flight: int = 0
    rate_limited: int = 0
    backoffs: int = 0


class LocalPacer:
    """Paces model calls by key in this process (see the module doc): a `Pacer`.

    Args:
        clock: Monotonic seconds (tests give their own).
        rng: Where backoff jitter comes from.
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, rng: random.Random | None = None
    ) -> None:
        self._clock = clock
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._keys: dict[str, _Key] = {}

    def state(self, key: str) -> KeyState:
        """What `key`'s pacing has learned so far."""
        with self._lock:
            state = self._keys.get(key) or _Key()
            blocked = max(0.0, state.blocked_until - self._clock())
            return KeyState(state.concurrency, state.in_flight, blocked, state.rate_limited)

    def try_acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant | None:
        """A go-ahead for a call on `key` if it may go at once (nobody waiting), else None."""
        with self._lock:
            state = self._keys.setdefault(key, _Key())
            if limit is not None:
                state.limit = limit
            if state.queue or self._delay(state, tokens) != 0.0:
                return None
            return self._grant(state, key, tokens, self._clock())

    async def acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant:
        """Waits until a call on `key` may go; cancelling the wait gives up its turn.

        Args:
            key: The model and address.
            limit: The key's quota (None: only what 429s taught).
            tokens: The call's estimated tokens.
        """
        started = self._clock()
        waiter = _Waiter()
        with self._lock:
            state = self._keys.setdefault(key, _Key())
            if limit is not None:
                state.limit = limit
            state.queue.append(waiter)
        try:
            while True:
                with self._lock:
                    head = state.queue[0] is waiter
                    delay = self._delay(state, tokens) if head else math.inf
                    if delay == 0.0:
                        state.queue.popleft()
                        if state.queue:
                            state.queue[0].wake()
                        return self._grant(state, key, tokens, started)
                    waiter.event.clear()
                if delay == math.inf:
                    await waiter.event.wait()
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(waiter.event.wait(), delay)
        except BaseException:
            with self._lock:
                if waiter in state.queue:
                    head = state.queue[0] is waiter
                    state.queue.remove(waiter)
                    if head and state.queue:
                        state.queue[0].wake()
            raise

    def release(
        self, grant: Grant, *, tokens: float | None = None, failure: Failure | None = None
    ) -> None:
        """A call is over: `tokens` it used (None: the estimate stands), `failure` if it failed."""
        with self._lock:
            state = self._keys[grant.key]
            in_flight = state.in_flight
            state.in_flight = max(0, in_flight - 1)
            now = self._clock()
            grant.entry[0] = now
            if tokens is not None:
                grant.entry[1] = tokens
            if failure is not None and failure.kind == "rate_limit":
                state.rate_limited += 1
                wait = failure.retry_after
                if wait is None or wait < MIN_RETRY_WAIT:
                    if grant.round == state.backoffs or not state.backoffs:  # sent after it
                        state.backoffs += 1
                    ceiling = min(MAX_BACKOFF, _BASE_BACKOFF * 2 ** (state.backoffs - 1))
                    wait = self._rng.uniform(ceiling / 2, ceiling)
                else:
                    wait += self._rng.uniform(0.0, min(0.25, wait * 0.05))
                state.blocked_until = max(state.blocked_until, now + wait)
                state.concurrency = max(1.0, min(state.concurrency, in_flight) / 2)
            elif failure is None:
                state.backoffs = 0
                if math.isfinite(state.concurrency):
                    state.concurrency += 1 / state.concurrency
            if state.queue:
                state.queue[0].wake()

    def _grant(self, state: _Key, key: str, tokens: float, started: float) -> Grant:
        now = self._clock()
        entry = [math.inf, tokens]
        state.log.append(entry)
        state.in_flight += 1
        return Grant(key, entry, now - started, round=state.backoffs)

    def _delay(self, state: _Key, tokens: float) -> float:
        """Seconds until a call of `tokens` may go (0: now; inf: when a call in flight ends)."""
        now = self._clock()
        delay = max(0.0, state.blocked_until - now)
        limit = state.limit
        if limit is not None:
            window = limit.window + min(0.25, limit.window * WINDOW_MARGIN)
            log = state.log = deque(entry for entry in state.log if entry[0] + window > now)
            allowed = max(1, math.floor(min(limit.requests, 1e12) + 1e-9))
            if len(log) >= allowed:
                ends = sorted(entry[0] for entry in log)
                delay = max(delay, ends[len(log) - allowed] + window - now)
            if math.isfinite(limit.tokens):
                excess = sum(entry[1] for entry in log) + tokens - limit.tokens
                if excess > 0:
                    for end, used in sorted((entry[0], entry[1]) for entry in log):
                        delay = max(delay, end + window - now)
                        excess -= used
                        if excess <= 0:
                            break
        if delay > 0:
            return delay
        return 0.0 if state.in_flight < state.concurrency else math.inf
