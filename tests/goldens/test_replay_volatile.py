"""A replay of an unchanged agent passes its own golden when the agent writes the time or random
ids into state (callbacks and tools): such values match by kind, everything else exactly."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, date, datetime

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.tool_context import ToolContext

from adk_eval import EvalCase, run_eval
from adk_eval.goldens import append_golden, eval_case_from_golden, load_goldens, to_golden
from adk_eval.metrics._volatile import kind_of, same_or_volatile
from adk_eval.testing import ScriptedLlm, tool_call


def book(city: str, tool_context: ToolContext) -> dict:
    """Books a trip (a harmless real tool: it only writes state)."""
    tool_context.state["booking_id"] = str(uuid.uuid4())
    tool_context.state["_time"] = str(datetime.now())  # like travel-concierge
    tool_context.state["status"] = tool_context.state.get("outcome", "booked")
    return {"booked": city}


def start_timer(callback_context) -> None:
    """Like customer-service's callback."""
    callback_context.state["timer_start"] = time.time()


def audit(tool, args, tool_context, tool_response):
    """An audit callback that stamps every tool call."""
    log = list(tool_context.state.get("audit", []))
    log.append({"at": datetime.now(UTC).isoformat(), "tool": tool.name, "id": uuid.uuid4().hex})
    tool_context.state["audit"] = log


def agent() -> LlmAgent:
    return LlmAgent(
        name="concierge",
        model=ScriptedLlm([tool_call("book", {"city": "Paris"}), "Booked."]),
        tools=[book],
        before_agent_callback=start_timer,
        after_tool_callback=audit,
    )


async def golden_of(tmp_path):
    original = await run_eval(
        EvalCase(
            name="trip",
            agent=agent(),
            tool_mocks={"book": book},
            first_message="Paris please",
            initial_state={"session": {"day": "2026-12-01"}},
        )
    )
    assert original.status == "passed", original.explain()
    path = tmp_path / "trips.evalset.json"
    append_golden(path, to_golden(original, eval_id="trip"), "concierge")
    return load_goldens(path)["trip"]


async def test_an_unchanged_agent_passes_its_own_golden_by_default(tmp_path):
    golden = await golden_of(tmp_path)
    await asyncio.sleep(0.01)  # another clock reading, other ids
    replay = await run_eval(eval_case_from_golden(golden, agent(), tool_mocks={"book": book}))
    final = replay.metrics["golden_final_state"]
    assert replay.status == "passed", replay.explain()
    assert sorted(final.value["by_kind"]) == ["_time", "audit", "booking_id", "timer_start"]
    assert final.value["differing"] == []

    exact = await run_eval(
        eval_case_from_golden(golden, agent(), tool_mocks={"book": book}, volatile_state="exact")
    )
    assert exact.status == "failed"
    assert sorted(exact.metrics["golden_final_state"].value["differing"]) == [
        "_time",
        "audit",
        "booking_id",
        "timer_start",
    ]


async def test_a_real_change_still_fails_beside_the_volatile_values(tmp_path):
    golden = await golden_of(tmp_path)
    case = eval_case_from_golden(golden, agent(), tool_mocks={"book": book})
    changed = EvalCase(
        name=case.name,
        agent=case.agent,
        tool_mocks=case.tool_mocks,
        first_message=case.first_message,
        initial_state={"session": {"day": "2026-12-01", "outcome": "cancelled"}},
        metrics=case.metrics,
    )
    replay = await run_eval(changed)
    final = replay.metrics["golden_final_state"]
    assert replay.status == "failed"
    assert sorted(final.value["differing"]) == ["outcome", "status"]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (time.time(), "clock"),
        (int(time.time() * 1000), "clock"),
        (datetime.now(), "clock"),
        ("2026-11-25T10:00:00Z", "clock"),
        ("2026-11-25 10:00:00.123456", "clock"),
        ("2026-11-25T10:00:00+01:00", "clock"),
        (str(uuid.uuid4()), "id"),
        (uuid.uuid4().hex, "id"),
        (uuid.uuid4(), "id"),
        ("2026-12-01", None),  # a date alone is meaningful (a booking date)
        (date(2026, 12, 1), None),
        (42, None),
        (3.5, None),
        (True, None),
        ("booked", None),
        ("deadbeef", None),
    ],
    ids=[  # fixed ids: the values differ in every process (pytest-xdist compares them)
        "epoch-seconds",
        "epoch-millis",
        "datetime",
        "iso-z",
        "iso-space",
        "iso-offset",
        "uuid-str",
        "uuid-hex",
        "uuid",
        "date-str",
        "date",
        "int",
        "float",
        "bool",
        "word",
        "hex-word",
    ],
)
def test_what_counts_as_a_clock_reading_or_a_random_id(value, kind):
    assert kind_of(value) == kind


def test_values_match_by_kind_only_item_by_item():
    stamped = {"at": "2026-11-25T10:00:00", "tool": "book"}
    assert same_or_volatile(stamped, {"at": "2026-11-26T11:00:00", "tool": "book"})
    assert not same_or_volatile(stamped, {"at": "2026-11-26T11:00:00", "tool": "cancel"})
    assert not same_or_volatile([stamped], [stamped, stamped])
    assert not same_or_volatile("2026-11-25T10:00:00", str(uuid.uuid4()))


async def test_a_replay_takes_models_for_this_run_only(tmp_path, monkeypatch):
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)
    golden = await golden_of(tmp_path)
    production = agent()
    production.model = "gemini-2.5-flash"  # as deployed: no key in the tests
    scripted = ScriptedLlm([tool_call("book", {"city": "Paris"}), "Booked."])
    replay = await run_eval(
        eval_case_from_golden(
            golden, production, tool_mocks={"book": book}, models={"concierge": scripted}
        )
    )
    assert replay.status == "passed", replay.explain()
    assert production.model == "gemini-2.5-flash"


async def test_a_replay_of_an_agent_evaluator_test_file_has_no_final_state_to_compare(tmp_path):
    """data-science's `simple.test.json` shape: AgentEvaluator's turns, no final state."""
    import json

    from adk_eval.goldens import load_eval_set

    turns = [
        {
            "query": "Paris please",
            "expected_tool_use": [{"tool_name": "book", "tool_input": {"city": "Paris"}}],
            "reference": "Booked.",
        }
    ]
    path = tmp_path / "simple.test.json"
    path.write_text(json.dumps(turns))
    (golden,) = load_eval_set(path).eval_cases
    replay = await run_eval(eval_case_from_golden(golden, agent(), tool_mocks={"book": book}))
    assert "golden_final_state" not in replay.metrics  # the agent's state is not compared to {}
    assert replay.status == "passed", replay.explain()
    assert replay.final_state["session"]["status"] == "booked"  # a stateful agent
