"""Change notifications: versions per session, and waiting for the next change."""

from __future__ import annotations

import asyncio

from adk_eval.studio._notify import Notifier


async def test_wait_for_change_returns_the_sessions_changed_since_a_version():
    notifier = Notifier()
    await notifier.changed("a")
    await notifier.changed("b")
    await notifier.changed("a")
    assert await notifier.wait_for_change(0, 1) == (3, {"a": 3, "b": 2})
    assert await notifier.wait_for_change(2, 1) == (3, {"a": 3})
    assert (notifier.version("a"), notifier.version("never")) == (3, 0)


async def test_wait_for_change_wakes_on_a_change_or_gives_up():
    notifier = Notifier()
    assert await notifier.wait_for_change(0, 0.01) == (0, {})
    waiting = asyncio.ensure_future(notifier.wait_for_change(0, 30))
    await asyncio.sleep(0.01)
    await notifier.changed("s")
    assert await asyncio.wait_for(waiting, 5) == (1, {"s": 1})
