"""One `Pacer` for a suite's Ray tasks: an actor holds it, each task asks it.

The Ray executor starts a `PacerActor` per suite (``ray.remote(PacerActor)``)
and hands it to its tasks, each with an owner name of its own; a task's runs
pace their model calls on a `RayPacerClient` of it, so that the suite's model
calls, on every node, wait in one pacer's queue and a 429 blocks the key for
all of them. The actor's methods are async: many waits go on at once in its
event loop. A wait its caller gives up is cancelled on the actor, which also
releases a grant given meanwhile; when a task fails, the executor drops its
owner (`PacerActor.drop`): its waits end and its grants are given back. An
actor that is gone leaves each client pacing alone, with one warning.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Hashable
from typing import Any

from ._limits import RateLimit
from ._pacer import Grant, KeyState, LocalPacer
from ._wire import (
    UNKNOWN_STATE,
    Ledger,
    RemoteGrant,
    RemotePacer,
    failure_of,
    limit_data,
    limit_of,
    state_data,
    state_of,
)

__all__ = ["ACTOR_OPTIONS", "PacerActor", "RayPacerClient"]

ACTOR_OPTIONS: dict[str, Any] = {"num_cpus": 0, "max_concurrency": 10_000}
"""How the executor starts the actor: on no CPU of its own, with many waits at once."""

_STATE_SECONDS = 5.0


class PacerActor:
    """A suite's pacer on a Ray cluster (``ray.remote(PacerActor)``), asked by `RayPacerClient`.

    Each request names its owner (a task) and the owner's id for it.
    """

    def __init__(self) -> None:
        self.pacer = LocalPacer()
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


class RayPacerClient(RemotePacer):
    """A Ray task's side of a `PacerActor`: a `Pacer` that asks the actor.

    Args:
        actor: The actor's handle.
        owner: Whose grants these are (the task's name for the actor).
    """

    sharing = "the pacer this suite's Ray tasks share"
    pacing = "this task"

    def __init__(self, actor: Any, owner: str) -> None:
        super().__init__()
        self.actor = actor
        self.owner = owner
        self._ids = itertools.count(1)

    def state(self, key: str) -> KeyState:
        """What the actor's pacer learned of `key` (nothing known, when it cannot say)."""
        if self.is_alone:
            return self.alone().state(key)
        import ray

        try:
            return state_of(ray.get(self.actor.state.remote(key), timeout=_STATE_SECONDS))
        except ray.exceptions.RayError:
            return UNKNOWN_STATE

    async def acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant:
        """Waits until the actor says a call on `key` may go; cancelling gives up its turn."""
        if self.is_alone:
            return await self.alone().acquire(key, limit, tokens)
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
            return await self.alone().acquire(key, limit, tokens)
        return RemoteGrant(key, [math.inf, tokens], float(waited), ident)

    def send_release(
        self, ident: Hashable, tokens: float | None, failure: dict[str, Any] | None
    ) -> None:
        """Tells the actor (see `RemotePacer.release`)."""
        with contextlib.suppress(Exception):  # the actor is gone: nothing to give back
            self.actor.release.remote(self.owner, ident, tokens, failure)
