"""What a shared pacer's server and its clients share: grants by id, and their data.

A `Ledger` is a server's book of one client's grants (a socket connection's, or a
Ray task's on the actor): it waits in the real `Pacer.acquire` for each id, ends
a wait or releases a grant that the client gave up, gives everything back when
the client is gone, and does what a socket client's request asks (`handle`).
`RemotePacer` is what both kinds of client have in common: no go-ahead without
asking, releases sent and never waited on, and a pacer of their own once the
shared one is gone (said once). The functions turn a `RateLimit`, a `Failure`
and a `KeyState` into JSON-able data and back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from ._failures import Failure
from ._limits import RateLimit
from ._pacer import Grant, KeyState, LocalPacer, Pacer

__all__ = [
    "UNKNOWN_STATE",
    "UNUSED",
    "Ledger",
    "RemoteGrant",
    "RemotePacer",
    "failure_data",
    "failure_of",
    "limit_data",
    "limit_of",
    "state_data",
    "state_of",
]

UNUSED = Failure("other")
"""How a grant nobody used is released: it frees its place, teaching the pacer nothing."""

UNKNOWN_STATE = KeyState(concurrency=math.inf, in_flight=0, blocked_for=0.0, rate_limited=0)
"""A key's state when the shared pacer cannot say: nothing learned."""

_LOG = logging.getLogger(__name__)


@dataclass
class RemoteGrant(Grant):
    """A grant of a shared pacer.

    Attributes:
        ident: Its id on the server.
    """

    ident: Hashable = 0


class Ledger:
    """A server's grants to one client, by the client's ids (see the module doc).

    Args:
        pacer: The pacer served.
    """

    def __init__(self, pacer: Pacer) -> None:
        self.pacer = pacer
        self.waits: dict[Hashable, asyncio.Task[Grant]] = {}
        self.grants: dict[Hashable, Grant] = {}
        self.given_up: set[Hashable] = set()
        """Ids cancelled before their acquire arrived (requests may overtake each other)."""
        self.closed = False

    async def acquire(
        self, ident: Hashable, key: str, limit: RateLimit | None, tokens: float
    ) -> Grant | None:
        """Waits for `key`'s turn; the grant (kept under `ident`), or None when given up."""
        if ident in self.given_up:
            self.given_up.discard(ident)
            return None
        wait: asyncio.Task[Grant] = asyncio.ensure_future(self.pacer.acquire(key, limit, tokens))
        self.waits[ident] = wait
        try:
            grant = await wait
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this request itself is cancelled, not only its wait
            return None
        finally:
            self.waits.pop(ident, None)
        if self.closed:
            self.pacer.release(grant, failure=UNUSED)
            return None
        self.grants[ident] = grant
        return grant

    def cancel(self, ident: Hashable) -> None:
        """The client gave `ident` up: its wait ends, or its grant is released unused."""
        wait = self.waits.pop(ident, None)
        if wait is not None:
            wait.cancel()
            return
        grant = self.grants.pop(ident, None)
        if grant is not None:
            self.pacer.release(grant, failure=UNUSED)
        else:
            self.given_up.add(ident)

    def release(self, ident: Hashable, tokens: float | None, failure: Failure | None) -> None:
        """The call of `ident` is over (see `Pacer.release`)."""
        grant = self.grants.pop(ident, None)
        if grant is not None:
            self.pacer.release(grant, tokens=tokens, failure=failure)

    def handle(
        self,
        message: dict[str, Any],
        send: Callable[[dict[str, Any]], None],
        answering: set[asyncio.Task[None]],
    ) -> None:
        """Does what a client's request `message` asks (the protocol of `_shared`).

        Args:
            message: The request.
            send: Sends an answer to the client.
            answering: The tasks waiting to answer an ``acquire`` (each adds itself
                and leaves when done; cancel them when the client is gone).
        """
        op, ident = message.get("op"), message.get("id")
        if op == "acquire":

            async def answer() -> None:
                limit = limit_of(message.get("limit"))
                tokens = float(message.get("tokens") or 0.0)
                grant = await self.acquire(ident, str(message["key"]), limit, tokens)
                if grant is not None:
                    send({"id": ident, "waited": grant.waited})

            task = asyncio.ensure_future(answer())
            answering.add(task)
            task.add_done_callback(answering.discard)
        elif op == "cancel":
            self.cancel(ident)
        elif op == "release":
            tokens = message.get("tokens")
            failure = failure_of(message.get("failure"))
            self.release(ident, None if tokens is None else float(tokens), failure)
        elif op == "state":
            send({"id": ident, "state": state_data(self.pacer.state(str(message["key"])))})

    def close(self) -> None:
        """The client is gone: its waits end and its grants are released unused."""
        self.closed = True
        for wait in list(self.waits.values()):
            wait.cancel()
        grants = list(self.grants.values())
        self.grants.clear()
        for grant in grants:
            self.pacer.release(grant, failure=UNUSED)


class RemotePacer:
    """What a client of a shared pacer has of `Pacer` besides asking it (see the module doc).

    A subclass asks the shared pacer (``acquire``, ``state``), sends a release
    (`send_release`) and names, for its warning, the pacer it shares and who
    it paces for.
    """

    sharing = "the pacer this suite's processes share"
    """The shared pacer, as the warning names it."""
    pacing = "this process"
    """Who paces alone once it is gone, as the warning names it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local: LocalPacer | None = None

    def try_acquire(self, key: str, limit: RateLimit | None, tokens: float = 0.0) -> Grant | None:
        """None: every call asks the shared pacer (see `Pacer.try_acquire`)."""
        return None

    def release(
        self, grant: Grant, *, tokens: float | None = None, failure: Failure | None = None
    ) -> None:
        """A call is over (see `Pacer.release`): told to the pacer that granted it, unawaited."""
        if isinstance(grant, RemoteGrant):
            self.send_release(grant.ident, tokens, failure_data(failure))
        else:  # a grant of this client's own pacer
            self.alone().release(grant, tokens=tokens, failure=failure)

    def send_release(
        self, ident: Hashable, tokens: float | None, failure: dict[str, Any] | None
    ) -> None:
        """Tells the shared pacer that the call of `ident` is over."""
        raise NotImplementedError

    @property
    def is_alone(self) -> bool:
        """Whether the shared pacer is gone and this client paces on its own."""
        return self._local is not None

    def alone(self) -> LocalPacer:
        """The pacer of this client's own, once the shared one is gone (said once)."""
        with self._lock:
            if self._local is None:
                self._local = LocalPacer()
                _LOG.warning(
                    "adk-eval: %s is gone; %s paces its model calls alone from now on",
                    self.sharing,
                    self.pacing,
                )
            return self._local


def limit_data(limit: RateLimit | None) -> dict[str, Any] | None:
    """`limit` as JSON-able data."""
    return dataclasses.asdict(limit) if limit is not None else None


def limit_of(data: Any) -> RateLimit | None:
    """`limit_data`'s data back."""
    return RateLimit(**data) if data else None


def failure_data(failure: Failure | None) -> dict[str, Any] | None:
    """`failure` as JSON-able data."""
    return dataclasses.asdict(failure) if failure is not None else None


def failure_of(data: Any) -> Failure | None:
    """`failure_data`'s data back."""
    return Failure(**data) if data else None


def state_data(state: KeyState) -> dict[str, Any]:
    """`state` as JSON-able data (an unlimited concurrency is null)."""
    data = dataclasses.asdict(state)
    if not math.isfinite(state.concurrency):
        data["concurrency"] = None
    return data


def state_of(data: dict[str, Any]) -> KeyState:
    """`state_data`'s data back."""
    concurrency = data.get("concurrency")
    return KeyState(
        concurrency=math.inf if concurrency is None else float(concurrency),
        in_flight=int(data.get("in_flight", 0)),
        blocked_for=float(data.get("blocked_for", 0.0)),
        rate_limited=int(data.get("rate_limited", 0)),
    )
