"""Change notifications: versions per session, waiting for the next change, and restarts."""

from __future__ import annotations

import asyncio

from adk_eval.studio._notify import Notifier


async def test_wait_for_change_returns_the_sessions_changed_since_a_version():
    notifier = Notifier()
    b = notifier.boot
    await notifier.changed("a")
    await notifier.changed("b")
    await notifier.changed("a")
    assert await notifier.wait_for_change(b, 1) == (b + 3, {"a": b + 3, "b": b + 2})
    assert await notifier.wait_for_change(b + 2, 1) == (b + 3, {"a": b + 3})
    assert (notifier.version("a"), notifier.version("never")) == (b + 3, b)


async def test_wait_for_change_wakes_on_a_change_or_gives_up():
    notifier = Notifier()
    b = notifier.boot
    assert await notifier.wait_for_change(b, 0.01) == (b, {})
    waiting = asyncio.ensure_future(notifier.wait_for_change(b, 30))
    await asyncio.sleep(0.01)
    await notifier.changed("s")
    assert await asyncio.wait_for(waiting, 5) == (b + 1, {"s": b + 1})


async def test_versions_only_grow_across_a_restart():
    before = Notifier()
    for _ in range(50):
        await before.changed("s")
    await asyncio.sleep(0.002)
    after = Notifier()  # the studio restarted: a new notifier, nothing changed yet
    assert after.boot > before.version("s")
    assert after.version("s") > before.version("s")  # a page's view is never "behind"
    # a page that knows a version this run never reached hears of everything at once
    await after.changed("t")
    too_new = before.version("s") + 10**9
    assert await asyncio.wait_for(after.wait_for_change(too_new, 30), 5) == (
        after.boot + 1,
        {"t": after.boot + 1},
    )
