"""One `Pacer` for a suite's Ray tasks: an actor holds it, each task asks it.

The Ray executor starts a `PacerActor` per suite (``ray.remote(PacerActor)``)
and hands it to its tasks, each with an owner name of its own; a task makes a
`RayPacerClient` of it its process's pacer (`use_pacer`), so that the suite's
model calls, on every node, wait in one pacer's queue and a 429 blocks the key
for all of them. The actor's methods are async: many waits go on at once in its
event loop. A wait its caller gives up is cancelled on the actor, which also
releases a grant given meanwhile; when a task fails, the executor drops its
owner (`PacerActor.drop`): its waits end and its grants are given back. An
actor that is gone leaves each client pacing alone, with one warning.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import threading
from typing import Any

from ._failures import Failure
from ._pacer import Grant, KeyState, Pacer
from ._pacer_wire import (
    UNKNOWN_STATE,
    Ledger,
    RemoteGrant,
    failure_data,
    failure_of,
    limit_data,
    limit_of,
    state_data,
    state_of,
)

__all__ = ["ACTOR_OPTIONS", "PacerActor", "RayPacerClient"]

ACTOR_OPTIONS: dict[str, Any] = {"num_cpus": 0, "max_concurrency": 10_000}
"""How the executor starts the actor: on no CPU of its own, with many waits at once."""

_LOG = logging.getLogger(__name__)

_STATE_SECONDS = 5.0


class PacerActor:
    """A suite's pacer on a Ray cluster (``ray.remote(PacerActor)``), asked by `RayPacerClient`.

    Each request names its owner (a task) and the owner's id for it.
    """

    def __init__(self) -> None:
        self.pacer = Pacer()
        self._ledgers: dict[str, Ledger] = {}

    def _ledger(self, owner: str) -> Ledger:
        ledger = self._ledgers.get(owner)
        if ledger is None:
            ledger = self._ledgers[owner] = Ledger(self.pacer)
        return ledger

    async def acquire(
        self, owner: str, ident: int, key: str, limit: dict[str, Any] | None, tokens: float
    ) -> float | None:
        """Waits for `key`'s turn; the seconds waited, or None when the wait was cancelled."""
        grant = await self._ledger(owner).acquire(ident, key, limit_of(limit), tokens)
        return grant.waited if grant is not None else None

    async def cancel(self, owner: str, ident: int) -> None:
        """The owner gave `ident` up (see `Ledger.cancel`)."""
        self._ledger(owner).cancel(ident)

    async def release(
        self, owner: str, ident: int, tokens: float | None, failure: dict[str, Any] | None
    ) -> None:
        """The call of `ident` is over (see `Pacer.release`)."""
        self._ledger(owner).release(ident, tokens, failure_of(failure))

    async def drop(self, owner: str) -> None:
        """The owner is gone (its task failed): its waits end, its grants are given back."""
        ledger = self._ledgers.pop(owner, None)
        if ledger is not None:
            ledger.close()

    async def state(self, key: str) -> dict[str, Any]:
        """What the pacer learned of `key`, as data."""
        return state_data(self.pacer.state(key))


class RayPacerClient:
    """A Ray task's side of a `PacerActor`: `Pacer`'s interface (no ``try_acquire``).

    Args:
        actor: The actor's handle.
        owner: Whose grants these are (the task's name for the actor).
    """

    def __init__(self, actor: Any, owner: str) -> None:
        self.actor = actor
        self.owner = owner
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._local: Pacer | None = None

    def state(self, key: str) -> KeyState:
        """What the actor's pacer learned of `key` (nothing known, when it cannot say)."""
        if self._local is not None:
            return self._local.state(key)
        import ray

        try:
            return state_of(ray.get(self.actor.state.remote(key), timeout=_STATE_SECONDS))
        except ray.exceptions.RayError:
            return UNKNOWN_STATE

    async def acquire(self, key: str, limit: Any, tokens: float = 0.0) -> Grant:
        """Waits until the actor says a call on `key` may go; cancelling gives up its turn."""
        if self._local is not None:
            return await self._local.acquire(key, limit, tokens)
        import ray

        ident = next(self._ids)
        request = (self.owner, ident, key, limit_data(limit), tokens)
        try:
            waited = await self.actor.acquire.remote(*request)
        except ray.exceptions.RayError:
            waited = None
        except BaseException:
            with contextlib.suppress(Exception):
                self.actor.cancel.remote(self.owner, ident)
            raise
        if waited is None:  # the actor is gone
            return await self._fallback().acquire(key, limit, tokens)
        return RemoteGrant(key, [math.inf, tokens], float(waited), ident)

    def release(
        self, grant: Grant, *, tokens: float | None = None, failure: Failure | None = None
    ) -> None:
        """A call is over (see `Pacer.release`); not waited on."""
        if not isinstance(grant, RemoteGrant):
            self._fallback().release(grant, tokens=tokens, failure=failure)
            return
        with contextlib.suppress(Exception):  # the actor is gone: nothing to give back
            self.actor.release.remote(self.owner, grant.ident, tokens, failure_data(failure))

    def _fallback(self) -> Pacer:
        with self._lock:
            if self._local is None:
                self._local = Pacer()
                _LOG.warning(
                    "adk-eval: the pacer this suite's Ray tasks share is gone; this task "
                    "paces its model calls alone from now on"
                )
            return self._local
