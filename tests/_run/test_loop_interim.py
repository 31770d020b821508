"""A long-running tool's interim answer: the same events and model calls as a plain ADK run.

The agent is written for the purpose, after ADK's human-in-the-loop shape: a
reimbursement that asks a manager (a long-running tool that answers "pending"
at once), then pays once the manager's final answer arrives.
"""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.tools import LongRunningFunctionTool
from google.genai import types

from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

ASKED: list[str] = []


def ask_for_approval(purpose: str, amount: float) -> dict:
    """Asks the manager to approve a reimbursement; the answer comes later."""
    ASKED.append(purpose)
    return {"status": "pending", "ticket": "T-1"}


def reimburse(purpose: str, amount: float) -> dict:
    """Pays the reimbursement."""
    return {"status": "ok"}


def agent(calls: list[int]) -> LlmAgent:
    """A reimbursement agent whose scripted model answers from the last part it was sent."""

    def respond(request):
        calls.append(1)
        last = request.contents[-1].parts[-1]
        answer = last.function_response.response if last.function_response else None
        if answer is None:
            return tool_call("ask_for_approval", {"purpose": "travel", "amount": 200.0})
        if answer.get("status") == "pending":
            return "Your request is pending manager approval (ticket T-1)."
        if answer.get("status") == "approved":
            return tool_call("reimburse", {"purpose": "travel", "amount": 200.0})
        return "Reimbursed $200."

    return LlmAgent(
        name="reimbursement",
        model=ScriptedLlm(responder=respond),
        tools=[LongRunningFunctionTool(ask_for_approval), reimburse],
    )


def shape(events) -> list[tuple]:
    """Each event as its author and parts: text, or a call or response by name and content."""
    out = []
    for event in events:
        parts = []
        for part in event.content.parts if event.content else []:
            if part.text:
                parts.append(("text", part.text))
            elif part.function_call:
                parts.append(("call", part.function_call.name, dict(part.function_call.args)))
            elif part.function_response:
                parts.append(
                    ("response", part.function_response.name, part.function_response.response)
                )
        if parts:
            out.append((event.author, tuple(parts)))
    return out


async def adks_own_run() -> tuple[list[tuple], int]:
    calls: list[int] = []
    runner = InMemoryRunner(agent=agent(calls))
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")

    async def send(message):
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass

    await send(types.Content(role="user", parts=[types.Part(text="Please reimburse $200")]))
    done = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session.id
    )
    [call] = [c for e in done.events for c in e.get_function_calls()]
    answer = types.FunctionResponse(id=call.id, name=call.name, response={"status": "approved"})
    await send(types.Content(role="user", parts=[types.Part(function_response=answer)]))
    done = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session.id
    )
    return shape(done.events), len(calls)


@pytest.mark.parametrize("interim", ["provided", "mocked"])
async def test_an_interim_answer_then_the_user_agents_final_one_as_in_adk(interim):
    ASKED.clear()
    expected, expected_calls = await adks_own_run()
    ASKED.clear()
    calls: list[int] = []
    gives_interim = (
        ask_for_approval
        if interim == "provided"
        else ToolMock.returning({"status": "pending", "ticket": "T-1"})
    )
    result = await run_eval(
        EvalCase(
            name="reimburses",
            agent=agent(calls),
            first_message="Please reimburse $200",
            tool_mocks={"ask_for_approval": gives_interim, "reimburse": reimburse},
            user_agents=UserAgents(
                tools={
                    "ask_for_approval": ScriptedUserAgent(
                        name="manager", script=[{"status": "approved"}]
                    )
                }
            ),
        )
    )
    assert result.status == "passed", result.explain()
    assert shape(result.events) == expected
    assert len(calls) == expected_calls == 4
    ran_for_real = ["travel"] if interim == "provided" else []
    assert ran_for_real == ASKED
