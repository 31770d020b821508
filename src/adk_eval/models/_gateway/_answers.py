"""Answers kept for model calls: what the cache and a cassette are to the gateway.

`ModelCall` is one call as they see it (its role, its number among that role's
calls, its request as data and the key made of it); a `ResponseStore` looks an
answer up, keeps one, and is closed when the run is over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ModelCall", "ResponseStore"]


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
        written: ``canonical(request)`` when the gateway made it (a cassette
            compares it), else empty.
    """

    case: str | None
    attempt: int
    role: str
    model: str
    base_url: str | None
    request: Mapping[str, Any]
    key: str
    index: int
    written: str = field(default="", repr=False, compare=False)


class ResponseStore(Protocol):
    """Answers kept for model calls: the cache, or a cassette."""

    def lookup(self, call: ModelCall) -> list[dict[str, Any]] | None:
        """The responses kept for `call` (``LlmResponse`` JSON data), or None."""

    def save(self, call: ModelCall, responses: list[dict[str, Any]]) -> None:
        """Keeps `responses` as the answer to `call`."""

    def close(self) -> None:
        """The run is over: what it kept is written for good (a cassette's file)."""
