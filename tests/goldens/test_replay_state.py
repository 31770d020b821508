"""Replays keep what the simulated users changed, and compare the golden's final state."""

from __future__ import annotations

import json

import pytest
from google.adk.agents import LlmAgent
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
from google.adk.models.llm_request import LlmRequest
from google.adk.tools import LongRunningFunctionTool
from google.adk.tools.tool_context import ToolContext

from adk_eval import EvalCase, UserAgents, run_eval, with_state_change
from adk_eval.goldens import append_golden, eval_case_from_golden, load_goldens, to_golden
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call

WHEN = "2025-06-15 05:30"


def ask(question: str) -> None:
    """Asks the traveller and waits for the answer (long-running)."""


def read_state(key: str, tool_context: ToolContext) -> dict:
    """Reads one state key (a harmless real tool: it runs as itself)."""
    return {"value": tool_context.state.get(key)}


MOCKS = {"read_state": read_state}  # harmless: the real tool runs as itself


def concierge() -> LlmAgent:
    return LlmAgent(
        name="concierge",
        model=ScriptedLlm(
            [
                tool_call("ask", {"question": "When do you leave?"}),
                tool_call("read_state", {"key": "user:itinerary_datetime"}),
                "Booked.",
                tool_call("read_state", {"key": "visits"}),
                "Enjoy the Louvre.",
            ]
        ),
        tools=[LongRunningFunctionTool(ask), read_state],
    )


def set_time(when: str) -> dict:
    """Sets the trip's departure time."""
    return with_state_change({"ok": True}, {"user": {"itinerary_datetime": when}})


def log_visit(place: str) -> dict:
    """Notes a place the traveller wants to visit."""
    return with_state_change({"ok": True}, {"session": {"visits": [place]}})


def user_model(steps: list) -> ScriptedLlm:
    def respond(request: LlmRequest):
        index = model_turn_index(request)
        return steps[index] if index < len(steps) else "</finished>"

    return ScriptedLlm(responder=respond)


def original_case() -> EvalCase:
    traveller = LlmAgent(
        name="traveller",
        model=user_model([tool_call("set_time", {"when": WHEN}), "June 15th, early."]),
        tools=[set_time],
    )
    tourist = LlmAgent(
        name="tourist",
        model=user_model([tool_call("log_visit", {"place": "louvre"}), "The Louvre, please."]),
        tools=[log_visit],
    )
    return EvalCase(
        name="trip",
        agent=concierge(),
        first_message="Plan my trip.",
        tool_mocks=MOCKS,
        user_agents=UserAgents(loop=tourist, tools={"ask": traveller}),
    )


def read_values(result) -> list:
    return [c.response["value"] for c in result.trace.tool_calls if c.name == "read_state"]


async def test_a_replay_changes_the_state_where_the_users_did_and_matches_the_final_state(
    tmp_path,
):
    original = await run_eval(original_case())
    assert original.status == "passed", original.explain()
    assert read_values(original) == [WHEN, ["louvre"]]

    path = tmp_path / "trip.evalset.json"
    append_golden(path, to_golden(original, eval_id="trip"), "trips")
    stored = json.loads(path.read_text())["eval_cases"][0]["adk_eval_state_changes"]
    ask_call = next(c for c in original.trace.tool_calls if c.name == "ask")
    assert stored == [
        {
            "response_to": ask_call.call_id,
            "source": "traveller",
            "state_delta": {"user:itinerary_datetime": WHEN},
        },
        {"before_invocation": 1, "source": "tourist", "state_delta": {"visits": ["louvre"]}},
    ]
    # ADK's own loader reads the file, and keeps the field
    adk_loaded = load_eval_set_from_file(str(path), "trips")
    assert adk_loaded.eval_cases[0].model_extra["adk_eval_state_changes"] == stored

    golden = load_goldens(path)["trip"]
    replay = await run_eval(eval_case_from_golden(golden, concierge(), tool_mocks=MOCKS))

    assert replay.status == "passed", replay.explain()
    assert read_values(replay) == [WHEN, ["louvre"]]  # the agent saw what it saw then
    assert replay.final_state["user"]["itinerary_datetime"] == WHEN
    final = replay.metrics["golden_final_state"]
    assert final.passed
    assert final.evidence == [f"the final state matches ({len(golden.final_session_state)} keys)"]


async def test_without_the_recorded_changes_the_replay_fails_on_the_final_state():
    original = await run_eval(original_case())
    golden = to_golden(original, eval_id="trip")
    stripped = golden.model_copy()
    del stripped.__pydantic_extra__["adk_eval_state_changes"]

    replay = await run_eval(eval_case_from_golden(stripped, concierge(), tool_mocks=MOCKS))

    assert read_values(replay) == [None, None]
    final = replay.metrics["golden_final_state"]
    assert not final.passed
    assert replay.status == "failed"
    assert f'`user:itinerary_datetime` is not set; expected "{WHEN}"' in final.evidence
    assert '`visits` is not set; expected ["louvre"]' in final.evidence

    ignoring = await run_eval(
        eval_case_from_golden(
            stripped, concierge(), tool_mocks=MOCKS, ignore_state=["user:*", "visits"]
        )
    )
    final = ignoring.metrics["golden_final_state"]
    assert final.passed
    assert final.evidence[-1] == "ignored, and different: `user:itinerary_datetime`, `visits`"

    unchecked = await run_eval(
        eval_case_from_golden(stripped, concierge(), tool_mocks=MOCKS, final_state=False)
    )
    assert "golden_final_state" not in unchecked.metrics


async def test_a_malformed_state_changes_field_is_one_clear_error():
    original = await run_eval(original_case())
    golden = to_golden(original, eval_id="trip")
    golden.__pydantic_extra__["adk_eval_state_changes"] = [{"state_delta": {"a": 1}}]
    with pytest.raises(ValueError, match="each `adk_eval_state_changes` item needs a `state_d"):
        eval_case_from_golden(golden, concierge(), tool_mocks=MOCKS)
