"""score_session: the same metrics give the same results on a stored ADK session."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.sessions import InMemorySessionService
from google.adk.tools import ToolContext

from adk_eval import EvalCase, run_eval, score_session
from adk_eval.metrics import event_count_metric, state_metric, state_query, trajectory_match
from adk_eval.testing import ScriptedLlm, tool_call


def escalate(level: str, tool_context: ToolContext) -> dict:
    """Escalates (safe: state only)."""
    tool_context.state["escalation"] = {"level": level}
    return {"ok": True}


async def test_scores_of_a_stored_session_equal_the_scores_of_the_run():
    metrics = [
        state_metric("escalated", "session", "escalation", lambda v: v["level"] == "999"),
        event_count_metric("one_call", "tool_call", assertion=lambda n: n == 1),
        state_query("matches", {"session.escalation.level": "999"}),
        trajectory_match("trajectory", [("escalate", {"level": "999"})]),
    ]
    agent = LlmAgent(
        name="a",
        model=ScriptedLlm([tool_call("escalate", {"level": "999"}), "done"]),
        tools=[escalate],
    )
    result = await run_eval(
        EvalCase(
            name="stored",
            agent=agent,
            first_message="help",
            tool_mocks={"escalate": escalate},
            metrics=metrics,
        )
    )
    assert result.passed, result.explain()

    # store the run's events in a "production" session service, as a server would
    service = InMemorySessionService()
    stored = await service.create_session(app_name="prod", user_id="u")
    for event in result.events:
        await service.append_event(stored, event.model_copy(deep=True))
    session = await service.get_session(app_name="prod", user_id="u", session_id=stored.id)

    assert await score_session(session, metrics) == result.metrics
