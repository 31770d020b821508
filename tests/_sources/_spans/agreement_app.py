"""An ADK app with every shape a trace must carry, run for real on a session store.

`run_conversations` runs three conversations through ADK's `Runner` on ADK's
`DatabaseSessionService` (SQLite), the models played by `ScriptedLlm`:

* ``parallel``: two `lookup` calls in one model turn, then an answer;
* ``deep``: an `AgentTool` (``researcher``) whose agent calls another `AgentTool`
  (``finder``, which calls `lookup`), then a transfer to the ``billing`` sub-agent;
* ``waits``: a long-running tool (``ask_manager``) answered by the user in a
  second message, then an answer.

Whatever span exporters the test added to `capture_spans` receive the spans.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.adk.tools import LongRunningFunctionTool
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from adk_eval.metrics import (
    event_count_metric,
    never_called,
    state_metric,
    trajectory_match,
)
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call

APP = "desk_app"
USER = "ann"


def lookup(key: str) -> dict:
    """Looks an order up."""
    return {"status": "shipped", "key": key}


def ask_manager(question: str) -> dict:
    """Asks a manager; the answer comes later."""
    return {"status": "pending", "question": question}


def _first_user_text(request) -> str:
    for content in request.contents:
        for part in content.parts or []:
            if content.role == "user" and part.text:
                return part.text
    return ""


def _desk(request) -> object:
    asked, turn = _first_user_text(request), model_turn_index(request)
    if "parallel" in asked:
        steps: list = [[tool_call("lookup", {"key": "A1"}), tool_call("lookup", {"key": "A2"})]]
        steps.append("Both orders have shipped.")
    elif "deep" in asked:
        steps = [tool_call("researcher", {"request": "find order B"})]
        steps.append(tool_call("transfer_to_agent", {"agent_name": "billing"}))
    else:
        steps = [tool_call("ask_manager", {"question": "refund order C?"})]
        steps += ["I have asked the manager.", "Refund approved."]
    return steps[min(turn, len(steps) - 1)]


def build_agent() -> LlmAgent:
    """The app's root agent (fresh objects each time)."""
    finder = LlmAgent(
        name="finder",
        model=ScriptedLlm([tool_call("lookup", {"key": "B"}), "Found order B: shipped."]),
        tools=[lookup],
    )
    researcher = LlmAgent(
        name="researcher",
        model=ScriptedLlm([tool_call("finder", {"request": "B"}), "Research done: B shipped."]),
        tools=[AgentTool(agent=finder)],
    )
    billing = LlmAgent(name="billing", model=ScriptedLlm(["Billing here: refund issued."]))
    return LlmAgent(
        name="desk",
        model=ScriptedLlm(responder=_desk),
        tools=[lookup, LongRunningFunctionTool(ask_manager), AgentTool(agent=researcher)],
        sub_agents=[billing],
    )


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_conversations(url: str) -> list[str]:
    """Runs the three conversations on the store at `url`; returns their session ids."""
    service = DatabaseSessionService(url)
    runner = Runner(agent=build_agent(), app_name=APP, session_service=service)
    ids = []
    try:
        for kind in ("parallel", "deep", "waits"):
            session = await service.create_session(app_name=APP, user_id=USER, state={"n": 2})
            pending = None
            async for event in runner.run_async(
                user_id=USER, session_id=session.id, new_message=_user(f"{kind} please")
            ):
                for call in event.get_function_calls():
                    if call.name == "ask_manager":
                        pending = call
            if pending is not None:
                answer = types.Part(
                    function_response=types.FunctionResponse(
                        id=pending.id, name=pending.name, response={"approved": True}
                    )
                )
                reply = types.Content(role="user", parts=[answer])
                async for _ in runner.run_async(
                    user_id=USER, session_id=session.id, new_message=reply
                ):
                    pass
            ids.append(session.id)
    finally:
        await service.close()
    return ids


METRICS = [
    event_count_metric("looked_up", "tool_call", lambda c: c.name == "lookup", lambda n: n >= 1),
    event_count_metric("replies", "agent_message", lambda m: bool(m.text), lambda n: n >= 1),
    trajectory_match("calls_by_name", ["lookup", "lookup"], args="ignore"),
    trajectory_match("asked", [("ask_manager", {"question": "refund order C?"})], args="exact"),
    never_called("delete_account"),
    state_metric("n_even", "session", "n", lambda v: v % 2 == 0),
]
"""Metrics over calls, replies, arguments and state (the state one is not applicable on traces)."""
