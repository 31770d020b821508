"""Shadow replay: a candidate agent against a conversation a production store recorded."""

from __future__ import annotations

import asyncio

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService

from adk_eval import STOP_SIGNAL
from adk_eval.metrics import event_count_metric
from adk_eval.production import SessionFilter, ShadowDivergenceError, open_sessions, shadow_session
from adk_eval.testing import ScriptedLlm, tool_call

from . import stores

RAN: list[str] = []


def lookup(order: str) -> dict:
    """Looks an order up (a real call to the order service)."""
    RAN.append(f"lookup {order}")
    return {"order": order, "status": "shipped"}


def refund(order: str) -> dict:
    """Refunds an order (moves money)."""
    RAN.append(f"refund {order}")
    return {"refunded": order}


def said(text: str):
    return event_count_metric(
        f"said_{text.split()[0].lower()}",
        "agent_message",
        lambda m: text in m.text,
        lambda n: n >= 1,
    )


METRICS = [
    event_count_metric("looked_up", "tool_call", lambda c: c.name == "lookup", lambda n: n >= 1),
    said("Shipped"),
]


def production_agent(model: ScriptedLlm) -> LlmAgent:
    return LlmAgent(name="support", model=model, tools=[lookup, refund])


def original() -> ScriptedLlm:
    """What ran in production: look the order up, say it shipped; then thank the user."""
    return ScriptedLlm(
        [
            tool_call("lookup", {"order": "A1"}),
            "Shipped: your order A1 is on its way.",
            "You're welcome!",
        ]
    )


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """One production conversation of two user turns, stored by ADK's DatabaseSessionService."""
    path = tmp_path_factory.mktemp("prod") / "sessions.db"

    async def record():
        service = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")
        runner = Runner(
            agent=production_agent(original()), app_name="support", session_service=service
        )
        session = await service.create_session(
            app_name="support", user_id="ann", state={"user:tier": "gold"}
        )
        for text in ("Where is my order A1?", "Thanks!"):
            async for _ in runner.run_async(
                user_id="ann", session_id=session.id, new_message=stores.message(text)
            ):
                pass
        await stores.close(service)
        (found,) = [s async for s in open_sessions(f"sqlite:///{path}").sessions(SessionFilter())]
        return found

    session = asyncio.run(record())
    RAN.clear()
    return session


@pytest.fixture(autouse=True)
def _nothing_ran():
    RAN.clear()
    yield
    assert RAN == []  # no tool body of the candidate ever runs: recorded answers or refusals


async def test_the_same_agent_gets_the_same_verdicts(stored):
    result = await shadow_session(stored, production_agent(original()), metrics=METRICS)

    assert result.outcome == "same", result.explain()
    assert result.new_calls == result.recorded_calls == [['lookup{"order": "A1"}'], []]
    assert result.new_replies == result.recorded_replies
    assert result.state_changes == {}
    assert result.new.initial_state == {"user": {"tier": "gold"}}  # what the events did not set
    assert {n: m.passed for n, m in result.new.metrics.items()} == {
        "looked_up": True,
        "said_shipped": True,
    }


async def test_a_tool_the_recording_never_answered_stops_the_run_and_never_runs(stored):
    candidate = ScriptedLlm(
        [tool_call("lookup", {"order": "A1"}), tool_call("refund", {"order": "A1"}), "Refunded."]
    )
    result = await shadow_session(stored, production_agent(candidate), metrics=METRICS)

    assert result.outcome == "error", result.explain()
    assert result.new.error.type == "EvalToolError"
    assert "`refund` was called by agent `support` during eval but no mock was provided" in (
        result.new.error.message
    )
    assert "refund" in result.explain()


async def test_a_different_answer_is_shown_beside_the_recorded_one(stored):
    candidate = ScriptedLlm(
        [tool_call("lookup", {"order": "A1"}), "It left the warehouse.", "You're welcome!"]
    )
    result = await shadow_session(stored, production_agent(candidate), metrics=METRICS)

    assert result.outcome == "worse", result.explain()  # it no longer says "Shipped"
    explained = result.explain()
    assert "[pass -> FAIL] said_shipped" in explained
    assert "recorded reply: Shipped: your order A1 is on its way." in explained
    assert "new reply:      It left the warehouse." in explained


async def test_a_call_the_recording_never_answered_stops_there_by_default(stored):
    candidate = ScriptedLlm([tool_call("lookup", {"order": "B7"}), "Shipped: B7.", "Bye."])
    result = await shadow_session(stored, production_agent(candidate), metrics=METRICS)

    assert result.outcome == "diverged", result.explain()
    assert ShadowDivergenceError.__name__ in result.new.error.message, result.explain()
    assert "the conversation left the recording" in result.new.error.message
    assert 'called with {"order": "B7"}' in result.divergence
    assert 'only for {"order": "A1"}' in result.divergence


async def test_a_divergence_continues_with_a_model_playing_the_recorded_user(stored):
    candidate = ScriptedLlm(
        [tool_call("lookup", {"order": "B7"}), "Shipped: B7 is on its way.", "Glad to help."]
    )

    def user(request):  # the LLM user, offline: one question, then done
        last = request.contents[-1].parts[0].text
        return STOP_SIGNAL if "Glad" in last else "And when will it arrive?"

    stand_in = ScriptedLlm(responder=user)

    result = await shadow_session(
        stored, production_agent(candidate), metrics=METRICS, continue_with=stand_in
    )

    assert result.outcome != "diverged", result.explain()
    assert result.new.status != "error", result.explain()
    assert 'called with {"order": "B7"}' in result.divergence
    users = [e for e in result.new.events if e.author == "user" and e.content and e.content.parts]
    texts = [p.text for e in users for p in e.content.parts if p.text]
    assert "And when will it arrive?" in texts  # the model played the user after the split
    assert "Thanks!" not in texts  # the recorded turn no longer fit
