"""Session tasks: one per session, each knowing its session; cancelled together on stop."""

from __future__ import annotations

import asyncio

from adk_eval.studio._tasks import SessionTasks, current_session


async def test_a_task_knows_its_session_and_reports_when_it_ends():
    finished: list[str] = []
    ended = asyncio.Event()

    async def done(session_id: str) -> None:
        finished.append(session_id)
        ended.set()

    tasks = SessionTasks(done)
    seen: list[str | None] = []
    release = asyncio.Event()

    async def run() -> None:
        seen.append(current_session())
        await release.wait()

    tasks.spawn("s1", run())
    await asyncio.sleep(0)
    assert (tasks.busy("s1"), tasks.busy("s2"), current_session()) == (True, False, None)
    release.set()
    await asyncio.wait_for(ended.wait(), 5)
    assert (seen, finished, tasks.busy("s1")) == (["s1"], ["s1"], False)


async def test_cancel_all_stops_every_task():
    finished: list[str] = []

    async def done(session_id: str) -> None:
        finished.append(session_id)

    tasks = SessionTasks(done)
    for session_id in ("a", "b"):
        tasks.spawn(session_id, asyncio.sleep(600))
    await asyncio.sleep(0)
    await tasks.settle(tasks.cancel_all())
    assert sorted(finished) == ["a", "b"]
    assert not tasks.busy("a")
