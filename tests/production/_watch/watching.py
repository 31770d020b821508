"""A real ADK app writing conversations to a store while a watch reads it: shared by the tests.

`write` runs conversations through ADK's `Runner` on ADK's `DatabaseSessionService`
(ScriptedLlm): some of two turns with a pause between them shorter than the watch's
idle time, so a watch that scored a conversation between its turns would score it
again. Every user message holds an e-mail address, which redaction must hide.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService

from adk_eval.metrics import MetricResult, event_count_metric
from adk_eval.production import watch_sessions
from adk_eval.testing import ScriptedLlm
from tests.production.stores import close, message

CHEAP = [event_count_metric("replied", "agent_message", lambda m: bool(m.text), lambda n: n >= 1)]
"""A cheap metric: the agent replied."""


class Judge:
    """A metric that counts as a judge (``judge`` set), and keeps what it read."""

    judge = True

    def __init__(self, name: str = "judged") -> None:
        self.name = name
        self.read: list[str] = []

    def evaluate(self, trace) -> MetricResult:
        texts = [m.text for m in trace.messages if m.role == "user"]
        self.read.extend(texts)
        return MetricResult(passed=True, evidence=["read"])


async def write(
    url: str, count: int, *, pause: float = 0.05, two_turns_every: int = 3, at_once: int = 1
) -> list[str]:
    """Runs `count` conversations on the store `url`; returns their names (app/user/id).

    `at_once` conversations run at a time, as an app serves several users (the
    store's tables must exist first: ADK creates them on first use, racing itself).
    """
    service = DatabaseSessionService(db_url=url)
    agent = LlmAgent(name="shop", model=ScriptedLlm(responder=lambda request: "Noted."))
    runner = Runner(agent=agent, app_name="shop", session_service=service)
    names: list[str] = []
    indexes = iter(range(count))

    async def converse() -> None:
        for index in indexes:
            user = f"u{index % 4}"
            session = await service.create_session(app_name="shop", user_id=user)
            turns = 2 if index % two_turns_every == 0 else 1
            for turn in range(turns):
                if turn:
                    await asyncio.sleep(pause)
                text = f"mail me at person{index}@example.com (turn {turn})"
                async for _ in runner.run_async(
                    user_id=user, session_id=session.id, new_message=message(text)
                ):
                    pass
            names.append(f"shop/{user}/{session.id}")
            await asyncio.sleep(0)

    try:
        await asyncio.gather(*(converse() for _ in range(at_once)))
    finally:
        await close(service)
    return names


async def stopped_halfway(source: Any, count: int, **settings: Any) -> list[str]:
    """A watch of `source` (`CHEAP`) cancelled, as a process is stopped, at `count` // 2 scored.

    Returns the conversations it scored.
    """
    first: list[str] = []
    async with anyio.create_task_group() as group:

        def stop(verdict: Any) -> None:
            first.append(verdict.conversation)
            if len(first) >= count // 2:
                group.cancel_scope.cancel()

        group.start_soon(lambda: watch_sessions(source, CHEAP, on_verdict=stop, **settings))
    return first
