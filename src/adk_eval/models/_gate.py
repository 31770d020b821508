"""`RunGate`: one run's model calls as the gateway sees them, and what they cost in waiting.

A run sets its gate (`gating`) for everything it calls: its settings, which
roles it caches, its cassette, the count of each role's calls (a cassette's
order), and its tally: calls answered by a provider, retries, 429s, server
errors, cache hits and what they saved, replayed and recorded calls, and the
seconds some call of the run was waiting for quota (`waiting`: the union of
overlapping waits, so two calls waiting side by side count once). Listeners
(`on_pause`) hear when the run starts and stops waiting: the run's
``max_duration`` stands still meanwhile. Outside a run (a judge scoring stored
sessions) each call gets a gate of its own.

`ResponseStore` is what the cache and a cassette are to the gateway.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, fields
from typing import Any, Protocol

from ._settings import ModelCalls, current_settings, role_kind

__all__ = [
    "ModelCall",
    "ProviderStats",
    "ResponseStore",
    "RunGate",
    "close_cassette",
    "current_gate",
    "gating",
]


_NOT_A_WAIT = 0.01
"""Seconds below which a wait is not counted (the go-ahead of a pacer in another process)."""


@dataclass(frozen=True)
class ProviderStats:
    """What a run's model calls met on the way to their providers.

    Attributes:
        calls: Calls a provider answered.
        retries: Calls sent again after a 429 or a server error.
        rate_limited: 429 / ``RESOURCE_EXHAUSTED`` answers.
        server_errors: 5xx answers, timeouts and dropped connections.
        waited_s: Seconds some call was waiting (for quota, or to retry).
        cache_hits: Calls answered by the cache.
        cache_misses: Cacheable calls the cache could not answer.
        saved_usd: What the cache hits would have cost (None: a model without
            a known price).
        replayed: Calls answered by a cassette.
        recorded: Calls written to a cassette.
    """

    calls: int = 0
    retries: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    waited_s: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    saved_usd: float | None = 0.0
    replayed: int = 0
    recorded: int = 0

    def __add__(self, other: ProviderStats) -> ProviderStats:
        values: dict[str, Any] = {}
        for item in fields(self):
            mine, theirs = getattr(self, item.name), getattr(other, item.name)
            values[item.name] = None if mine is None or theirs is None else mine + theirs
        return ProviderStats(**values)

    @property
    def eventful(self) -> bool:
        """Whether anything here is worth a line: retries, waiting, the cache, a cassette."""
        return bool(
            self.retries or self.waited_s >= 0.05 or self.cache_hits or self.cache_misses
        ) or bool(self.replayed or self.recorded)

    def line(self) -> str:
        """``2 retries (2 rate-limited), waited 4.1 s; cache 3 hits / 1 miss, saved $0.0012``.

        The cache says what its hits saved only when it had hits.
        """
        pieces = []
        if self.retries or self.waited_s >= 0.05:
            causes = [
                f"{count} {name}"
                for count, name in (
                    (self.rate_limited, "rate-limited"),
                    (self.server_errors, "server errors"),
                )
                if count
            ]
            retry = f"{self.retries} retr{'y' if self.retries == 1 else 'ies'}"
            pieces.append(
                retry
                + (f" ({', '.join(causes)})" if causes else "")
                + f", waited {self.waited_s:.1f} s"
            )
        if self.cache_hits or self.cache_misses:
            pieces.append(
                f"cache {self.cache_hits} hit{'s' * (self.cache_hits != 1)} / "
                f"{self.cache_misses} miss{'es' * (self.cache_misses != 1)}"
                + (f", saved {_saved(self.saved_usd)}" if self.cache_hits else "")
            )
        if self.replayed or self.recorded:
            pieces.append(f"cassette {self.replayed} replayed / {self.recorded} recorded")
        return "; ".join(pieces)

    def to_data(self) -> dict[str, Any]:
        """Plain data, for results files and reports."""
        return {item.name: getattr(self, item.name) for item in fields(self)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> ProviderStats:
        """`to_data` back (None or missing fields: zeros)."""
        known = {item.name for item in fields(cls)}
        return cls(**{key: value for key, value in (data or {}).items() if key in known})


def _saved(usd: float | None) -> str:
    """``$0.0012``; ``$0.000020`` (a saving too small for 4 places is not shown as none)."""
    if usd is None:
        return "an unknown amount (a model without a known price)"
    return f"${usd:.4f}" if usd >= 0.0001 or usd == 0 else f"${usd:.6f}"


@dataclass(frozen=True)
class ModelCall:
    """One model call, as the cache and a cassette see it.

    Attributes:
        case: The case that made it (None: outside a run).
        attempt: Which repetition of the case.
        role: ``agent``, ``user:NAME``, ``judge:METRIC``, ``tool:NAME``, ``summarizer``.
        model: The model's name.
        base_url: The address it is served from (None: its provider's default).
        request: The request, as `request_data` makes it.
        key: `fingerprint` of all of the above but the case and index.
        index: Which call of its role in its run this is (from 1).
    """

    case: str | None
    attempt: int
    role: str
    model: str
    base_url: str | None
    request: Mapping[str, Any]
    key: str
    index: int


class ResponseStore(Protocol):
    """Answers kept for model calls: the cache, or a cassette."""

    def lookup(self, call: ModelCall) -> list[dict[str, Any]] | None:
        """The responses kept for `call` (``LlmResponse`` JSON data), or None."""

    def save(self, call: ModelCall, responses: list[dict[str, Any]]) -> None:
        """Keeps `responses` as the answer to `call`."""


class RunGate:
    """One run's model calls (see the module doc).

    Args:
        settings: The run's `ModelCalls`.
        case: The case's name (None: outside a run).
        attempt: Which repetition.
        cache: The roles cached in this run (None: the settings').
        clock: Monotonic seconds.
    """

    def __init__(
        self,
        settings: ModelCalls,
        *,
        case: str | None = None,
        attempt: int = 0,
        cache: frozenset[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.case = case
        self.attempt = attempt
        self.cached_roles = settings.cached if cache is None else cache
        self.cassette: ResponseStore | None = None
        """The run's cassette, when the settings record or replay (set by the run)."""
        self.tally: Counter[str] = Counter()
        self.saved_usd: float | None = 0.0
        self._clock = clock
        self._indexes: Counter[str] = Counter()
        self._waiting = 0
        self._since = 0.0
        self._waited = 0.0
        self._listeners: list[Callable[[bool], None]] = []

    def caches(self, role: str) -> bool:
        """Whether `role`'s answers are cached in this run."""
        return role_kind(role) in self.cached_roles

    def next_index(self, role: str) -> int:
        """The number of `role`'s next call in this run (from 1)."""
        self._indexes[role] += 1
        return self._indexes[role]

    def on_pause(self, listener: Callable[[bool], None]) -> None:
        """Calls ``listener(True)`` when the run starts waiting, ``listener(False)`` after."""
        self._listeners.append(listener)

    @property
    def waited(self) -> float:
        """Seconds some call of the run has waited so far (the wait going on included)."""
        current = self._clock() - self._since if self._waiting else 0.0
        return self._waited + current

    def wait_left(self) -> float:
        """Seconds of waiting the run may still spend (`ModelCalls.max_wait`)."""
        return max(0.0, self.settings.max_wait - self.waited)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """The code inside waits for a provider: it does not count as the run's time."""
        self._waiting += 1
        if self._waiting == 1:
            self._since = self._clock()
            for listener in self._listeners:
                listener(True)
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0:
                waited = self._clock() - self._since
                if waited >= _NOT_A_WAIT:  # (a shared pacer's round trip is not a wait)
                    self._waited += waited
                for listener in self._listeners:
                    listener(False)

    def saved(self, usd: float | None) -> None:
        """Adds what one cache hit saved (None: unknown price)."""
        if self.saved_usd is not None:
            self.saved_usd = None if usd is None else self.saved_usd + usd

    def stats(self) -> ProviderStats:
        """The tally so far."""
        tally = self.tally
        return ProviderStats(
            calls=tally["calls"],
            retries=tally["retries"],
            rate_limited=tally["rate_limited"],
            server_errors=tally["server_errors"],
            waited_s=round(self.waited, 3),
            cache_hits=tally["cache_hits"],
            cache_misses=tally["cache_misses"],
            saved_usd=self.saved_usd if tally["cache_hits"] else 0.0,
            replayed=tally["replayed"],
            recorded=tally["recorded"],
        )


_GATE: ContextVar[RunGate | None] = ContextVar("adk_eval_run_gate", default=None)


def current_gate() -> RunGate:
    """The current run's gate, or a gate of its own for a call outside any run."""
    gate = _GATE.get()
    return gate if gate is not None else RunGate(current_settings())


@contextlib.contextmanager
def gating(gate: RunGate) -> Iterator[RunGate]:
    """Makes `gate` the gate of every model call made inside."""
    token = _GATE.set(gate)
    try:
        yield gate
    finally:
        _GATE.reset(token)


def close_cassette(gate: RunGate) -> None:
    """Writes out and closes the run's cassette, if it has one."""
    cassette = gate.cassette
    close = getattr(cassette, "close", None)
    if close is not None:
        close()
