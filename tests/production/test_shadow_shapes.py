"""Shadow replay on real agent shapes: transfers, AgentTools, confirmations, long-running tools.

Each conversation is run for real on ADK's `DatabaseSessionService` (SQLite, a
ScriptedLlm playing the model, the person's answers sent as ADK expects them),
then replayed by the same agent: the verdict is `same`, the calls of each turn
are equal, and no tool body runs in the replay.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.adk.tools import FunctionTool, LongRunningFunctionTool
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.production import open_sessions, shadow_session
from adk_eval.testing import ScriptedLlm, tool_call

from . import stores

RAN: list[str] = []


def refund(order: str) -> dict:
    """Refunds an order (moves money)."""
    RAN.append("refund")
    return {"refunded": order}


def price(item: str) -> dict:
    """Prices an item (the pricing service)."""
    RAN.append("price")
    return {"item": item, "price": 3}


def ask_manager(amount: int) -> dict:
    """Asks a manager to approve an amount; the answer comes later."""
    RAN.append("ask_manager")
    return {"status": "pending"}


def transfers() -> LlmAgent:
    billing = LlmAgent(
        name="billing",
        description="Refunds orders.",
        model=ScriptedLlm([tool_call("refund", {"order": "A1"}), "Refunded A1."]),
        tools=[refund],
    )
    return LlmAgent(
        name="front",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "billing"})]),
        sub_agents=[billing],
    )


def confirmations() -> LlmAgent:
    pricer = LlmAgent(
        name="pricer",
        description="Prices items.",
        model=ScriptedLlm([tool_call("price", {"item": "lamp"}), "The lamp costs 3."]),
        tools=[price],
    )
    return LlmAgent(
        name="shop",
        model=ScriptedLlm(
            [
                tool_call("pricer", {"request": "lamp"}),
                tool_call("refund", {"order": "A1"}),
                "Refunded A1.",
            ]
        ),
        tools=[AgentTool(pricer), FunctionTool(refund, require_confirmation=True)],
    )


def long_running() -> LlmAgent:
    return LlmAgent(
        name="approvals",
        model=ScriptedLlm([tool_call("ask_manager", {"amount": 3}), "Waiting for the manager."]),
        tools=[LongRunningFunctionTool(ask_manager)],
    )


ANSWERS = {"adk_request_confirmation": {"confirmed": True}, "ask_manager": {"status": "approved"}}
"""What the person answered, by the call that waited for them."""


async def _record(path: Path, agent: LlmAgent) -> None:
    """One conversation: the user's message, then the person's answer to each waiting call."""
    service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")
    runner = Runner(agent=agent, app_name="shop", session_service=service)
    session = await service.create_session(app_name="shop", user_id="ann")
    message = stores.message("Please refund order A1.")
    while message is not None:
        waiting = []
        async for event in runner.run_async(
            user_id="ann", session_id=session.id, new_message=message
        ):
            waiting += [
                call
                for call in event.get_function_calls()
                if call.id in (event.long_running_tool_ids or ())
            ]
        responses = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=ANSWERS[call.name or ""]
                )
            )
            for call in waiting
        ]
        message = types.Content(role="user", parts=responses) if responses else None
    await stores.close(service)


@pytest.fixture(scope="module", params=[transfers, confirmations, long_running])
def recorded(request, tmp_path_factory):
    """The agent's builder, and the conversation it had, as `open_sessions` reads it."""
    path = tmp_path_factory.mktemp("shapes") / "sessions.db"

    async def record_and_read():
        await _record(path, request.param())
        return [s async for s in open_sessions(f"sqlite:///{path}").sessions()]

    (session,) = asyncio.run(record_and_read())
    ran = list(RAN)
    RAN.clear()
    return request.param, session, ran


async def test_the_same_agent_replays_the_same_conversation_and_runs_no_tool(recorded):
    build, session, ran_in_production = recorded
    metrics = [
        event_count_metric("calls", "tool_call", lambda call: True, lambda n: n >= 1),
        event_count_metric("replied", "agent_message", lambda m: bool(m.text), lambda n: n >= 1),
    ]

    result = await shadow_session(session, build(), metrics=metrics)

    assert ran_in_production  # the recording's tools did run, in "production"
    assert RAN == []  # the replay's never do: recorded answers only
    assert result.new.status == "passed", result.explain()
    assert result.outcome == "same", result.explain()
    assert result.new_calls == result.recorded_calls, result.explain()
    assert not result.divergence


def quoting() -> LlmAgent:
    """An `AgentTool` whose agent keeps its reply in state (`output_key`)."""
    quoter = LlmAgent(
        name="quoter",
        description="Quotes a price.",
        model=ScriptedLlm(["The lamp costs 3."]),
        output_key="quote",
    )
    return LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("quoter", {"request": "lamp"}), "It costs 3."]),
        tools=[AgentTool(quoter)],
    )


async def test_an_agent_tools_recorded_state_change_is_replayed_with_its_reply(tmp_path):
    """The recorded reply of an `AgentTool` comes with the state its agent wrote."""
    path = tmp_path / "sessions.db"
    await _record(path, quoting())
    (session,) = [s async for s in open_sessions(f"sqlite:///{path}").sessions()]
    quoted = state_metric("quoted", "session", "quote", lambda v: v == "The lamp costs 3.")

    result = await shadow_session(session, quoting(), metrics=[quoted])

    assert result.recorded.metrics["quoted"].passed  # ADK wrote it in the recording
    assert result.outcome == "same", result.explain()
    assert result.state_changes == {}, result.explain()
    assert result.new.final_state["session"]["quote"] == "The lamp costs 3."
