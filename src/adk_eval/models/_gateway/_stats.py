"""`ProviderStats`: what a run's model calls met on the way to their providers.

Each count is a field. The gate adds up what each call met as it goes
(`RunGate.count`), and a suite adds up its runs': `+` adds field by field, and
a saving of unknown price (None) stays unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["ProviderStats"]


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
