"""Session stores filled the way production fills them: an ADK agent run for real on them.

`fill` runs a small shop agent (ScriptedLlm, one real tool) through ADK's `Runner` on
ADK's own `DatabaseSessionService` (or `SqliteSessionService`, what ``adk web``
uses), for sessions of two apps and three users, with app, user and session state.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from click.testing import CliRunner, Result
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

from adk_eval._cli import main
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call

APPS = ("shop", "bank")
USERS = ("ann", "bob", "cyd")


def lookup(key: str) -> dict:
    """Looks an order up (the real tool: it runs while the store is filled)."""
    return {"status": "shipped", "key": key}


def respond(request) -> object:
    """Looks up when asked about an order, then answers; small talk gets a text reply."""
    asked = next(
        (p.text for c in request.contents if c.role == "user" for p in c.parts or [] if p.text),
        "",
    )
    turn = sum(content.role == "model" for content in request.contents)
    if "order" in asked and turn == 0:
        return tool_call("lookup", {"key": asked.split()[-1]})
    return "Your order has shipped." if "order" in asked else "Hello!"


METRICS = [
    event_count_metric("looked_up", "tool_call", lambda c: c.name == "lookup", lambda n: n >= 1),
    event_count_metric("one_reply", "agent_message", lambda m: bool(m.text), lambda n: n == 1),
    state_metric("even", "session", "n", lambda v: v % 2 == 0),
]
"""Three cheap metrics, as a team would score its sessions with."""


def message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def fill_service(service: BaseSessionService, count: int) -> list[tuple[str, str, str]]:
    """Runs `count` conversations on `service`; returns their (app, user, session id)."""
    keys = []
    for index in range(count):
        app, user = APPS[index % 2], USERS[index % 3]
        agent = LlmAgent(name=app, model=ScriptedLlm(responder=respond), tools=[lookup])
        runner = Runner(agent=agent, app_name=app, session_service=service)
        session = await service.create_session(
            app_name=app,
            user_id=user,
            state={"n": index, "app:region": "eu", "user:tier": f"tier-{user}"},
        )
        text = f"where is my order A{index}" if index % 3 else "hello there"
        async for _ in runner.run_async(
            user_id=user, session_id=session.id, new_message=message(text)
        ):
            pass
        keys.append((app, user, session.id))
    return keys


def fill(url: str, count: int) -> list[tuple[str, str, str]]:
    """Fills the store `url` names (``sqlite:///`` for ADK's SqliteSessionService)."""

    async def run() -> list[tuple[str, str, str]]:
        if url.startswith("sqlite:///"):
            service: BaseSessionService = SqliteSessionService(url.removeprefix("sqlite:///"))
        else:
            service = DatabaseSessionService(db_url=url)
        try:
            return await fill_service(service, count)
        finally:
            await close(service)

    return asyncio.run(run())


async def close(service: BaseSessionService) -> None:
    """Closes a service's connections (ADK's database services keep a pool)."""
    closing = getattr(service, "close", None)
    if closing is not None:
        await closing()


def adk_service(url: str) -> BaseSessionService:
    """ADK's own service for a store (to compare with what adk-eval reads)."""
    if url.startswith("sqlite:///"):
        return SqliteSessionService(url.removeprefix("sqlite:///"))
    return DatabaseSessionService(db_url=url)


def checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


METRICS_FILE = "from tests.production.stores import METRICS\n"
"""A metrics file of `adk-eval score --metrics`: the `METRICS` above."""


def score(tmp_path: Path, sessions: str, *args: str) -> tuple[Result, dict]:
    """``adk-eval score SESSIONS`` with `METRICS`, and its JSON report (``{}``: none written)."""
    metrics = tmp_path / "metrics_eval.py"
    metrics.write_text(METRICS_FILE)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        ["score", sessions, "--metrics", str(metrics), "--json", str(report), "--no-store", *args],
    )
    data = json.loads(report.read_text()) if report.exists() else {}
    return result, data
