"""Studio fixtures: real engines on SQLite, real uvicorn servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool

from adk_eval import STOP, EvalCase, ScriptedUserAgent, TerminateWhen, ToolMock, UserAgents
from adk_eval.metrics import state_metric
from adk_eval.studio._config import SimulatedAgentConfig, StudioTarget
from adk_eval.studio._engine import StudioEngine
from adk_eval.studio._server import create_app
from adk_eval.testing import ScriptedLlm, tool_call
from examples.toolbox.agent import root_agent, structured_agent

from ..conftest import serving

TOKEN = "test-token-0123456789"


def agent_targets(folder: Path) -> list[StudioTarget]:
    return [
        StudioTarget(
            name="Toolbox",
            config=SimulatedAgentConfig("Toolbox", root_agent, folder / "toolbox.evalset.json"),
        ),
        StudioTarget(
            name="Structured",
            config=SimulatedAgentConfig(
                "Structured", structured_agent, folder / "structured.evalset.json"
            ),
        ),
    ]


def clinic_case(folder: Path) -> StudioTarget:
    """An eval case: mocks, a real state tool, a scripted patient, a metric."""

    def lookup(patient: str) -> dict:
        """Looks the patient up."""
        raise AssertionError("mocked: never runs")

    def note(text: str, tool_context) -> dict:
        """Takes a note (safe)."""
        tool_context.state["note"] = text
        return {"ok": True}

    def ask(question: str) -> None:
        """Asks the patient."""

    def delete_record(patient: str) -> dict:
        """Deletes a record (a side effect the case neither mocks nor allows)."""
        raise AssertionError("never runs")

    agent = LlmAgent(
        name="clinic",
        model=ScriptedLlm(
            [tool_call("ask", {"question": "Where does it hurt?"}), "Rest, then call 111.", "Bye."]
        ),
        tools=[lookup, note, LongRunningFunctionTool(ask), delete_record],
    )
    case = EvalCase(
        name="clinic-case",
        agent=agent,
        first_message="I feel unwell",
        tool_mocks={"lookup": ToolMock.returning({"age": 40}), "note": note},
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="patient", script=["Thanks", STOP]),
            tools={"ask": ScriptedUserAgent(name="patient_answer", script=["My head"])},
        ),
        terminate_when=TerminateWhen(max_turns=6),
        metrics=[state_metric("noted", "session", "note", lambda v: v == "head")],
    )
    return StudioTarget(name="clinic-case", case=case, eval_set_path=folder / "clinic.evalset.json")


async def wait_for(
    engine: StudioEngine, session_id: str, *, kind: str | None = None, phase: str | None = None
):
    """Polls the session until a request of `kind` is pending, or it reaches `phase`."""
    view = None
    deadline = time.monotonic() + 60  # generous: a cold first ADK run on a busy CI machine
    while time.monotonic() < deadline:
        view = await engine.view(session_id)
        if kind is not None:
            pending = [r for r in view["pending"] if r["kind"] == kind]
            if pending:
                return view, pending[0]
        if phase is not None and view["phase"] == phase:
            return view, None
        await asyncio.sleep(0.025)
    raise AssertionError(f"session {session_id} never got {kind or phase}: {view}")


@pytest.fixture
async def engine(tmp_path):
    studio = StudioEngine(agent_targets(tmp_path), tmp_path / "studio.db")
    await studio.start()
    yield studio
    await studio.stop()


@contextmanager
def running_server(
    targets: list[StudioTarget], db: Path, token: str = TOKEN, host: str = "127.0.0.1"
) -> Iterator[str]:
    """A studio server on a free port of `host`, in a background thread; yields its URL."""
    with serving(create_app(StudioEngine(targets, db), token), host) as url:
        yield url
