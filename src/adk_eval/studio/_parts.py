"""The parts every session driver shares: store, notifier, broker, tool runner, tasks."""

from __future__ import annotations

from dataclasses import dataclass

from ._broker import Broker
from ._notify import Notifier
from ._store import StudioStore
from ._tasks import SessionTasks
from ._tools import ToolRunner

__all__ = ["StudioParts"]


@dataclass(frozen=True)
class StudioParts:
    """What the drivers of agent, eval-case and remote sessions work with.

    Attributes:
        store: The studio's tables.
        notifier: Tells the page which sessions changed.
        broker: The requests waiting for the person.
        tools: The tools running for the sessions.
        tasks: Each session's background run.
    """

    store: StudioStore
    notifier: Notifier
    broker: Broker
    tools: ToolRunner
    tasks: SessionTasks

    @classmethod
    def create(cls, store: StudioStore) -> StudioParts:
        """The parts around `store`, wired together."""
        notifier = Notifier()
        return cls(
            store=store,
            notifier=notifier,
            broker=Broker(store, notifier),
            tools=ToolRunner(notifier),
            tasks=SessionTasks(notifier.changed),
        )
