"""Recording -> replay: a simulated tool's answers from one run become a deterministic mock."""

from __future__ import annotations

import json
import os

import pytest

from adk_eval import EvalCase, EvalSetupError, ToolMock, run_eval
from adk_eval.testing import tool_call

from .test_simulated import Simulator, agent


def case(mock: ToolMock, *calls) -> EvalCase:
    return EvalCase(
        name="orders",
        agent=agent(*calls),
        first_message="Where are my orders?",
        tool_mocks={"get_order": mock},
    )


CALLS = [
    tool_call("get_order", {"order_id": 7}),
    tool_call("get_order", {"order_id": 8}),
    tool_call("get_order", {"order_id": 7}),
]


async def recorded_run():
    simulator = Simulator(
        '{"id": 7, "item": "lamp"}',
        '{"id": 8, "item": "desk"}',
        '{"id": 7, "item": "lamp (shipped)"}',
    )
    result = await run_eval(case(ToolMock.simulated(model=simulator.model), *CALLS))
    assert result.ok, result.explain()
    return result


async def test_a_recording_replays_the_same_answers_without_a_model(tmp_path):
    recorded = await recorded_run()
    path = tmp_path / "run.json"
    path.write_text(json.dumps(recorded.to_data()))
    for source in (recorded, recorded.to_data(), path, str(path)):
        replay = await run_eval(case(ToolMock.from_recording(source, "get_order"), *CALLS))
        assert replay.ok, replay.explain()
        responses = [c.response for c in replay.trace.select("tool_call")]
        assert responses == [c.response for c in recorded.trace.select("tool_call")]
        assert responses[2] == {
            "id": 7,
            "item": "lamp (shipped)",
        }  # the 2nd answer to the same call
        calls = replay.trace.select("tool_call")
        assert {replay.trace.source_of(c) for c in calls} == {"mock"}


async def test_a_call_the_recording_never_made_stops_the_run_naming_what_it_has():
    recorded = await recorded_run()
    replay = await run_eval(
        case(
            ToolMock.from_recording(recorded, "get_order"), tool_call("get_order", {"order_id": 9})
        )
    )
    assert replay.status == "error"
    message = replay.error.message
    assert 'no call of `get_order` with {"order_id": 9}' in message
    assert '{"order_id": 7}' in message
    assert '{"order_id": 8}' in message


async def test_a_tool_the_run_never_answered_or_a_bad_file_is_a_clear_setup_error(tmp_path):
    recorded = await recorded_run()
    with pytest.raises(
        EvalSetupError, match="no answered call of `cancel_order`; it called: get_order"
    ):
        ToolMock.from_recording(recorded, "cancel_order")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(EvalSetupError, match="cannot read"):
        ToolMock.from_recording(bad, "get_order")
    with pytest.raises(EvalSetupError, match="not the data of an EvalResult"):
        ToolMock.from_recording({"name": "x"}, "get_order")


async def test_a_replayed_call_matches_a_recorded_one_by_value_7_is_7_0():
    recorded = await recorded_run()
    as_floats = [tool_call("get_order", {"order_id": float(n)}) for n in (7, 8, 7)]
    replay = await run_eval(case(ToolMock.from_recording(recorded, "get_order"), *as_floats))
    assert replay.ok, replay.explain()
    assert [c.response for c in replay.trace.select("tool_call")] == [
        c.response for c in recorded.trace.select("tool_call")
    ]


def test_a_recording_that_is_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    with pytest.raises(EvalSetupError, match="not a regular file"):
        ToolMock.from_recording(fifo, "get_order")
