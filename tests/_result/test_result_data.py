"""EvalResult.to_data / from_data: every status, nested and user-agent events, back equal."""

from __future__ import annotations

import json
import logging

import anyio
import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import AgentTool, LongRunningFunctionTool

from adk_eval import (
    EvalCase,
    EvalResult,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call


def ask(question: str) -> None:
    """Asks the user (long-running)."""


def lookup(key: str) -> dict:
    """Looks a key up."""


def cases() -> dict[str, EvalCase]:
    finder = LlmAgent(
        name="finder",
        model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "found"]),
        tools=[lookup],
    )
    agent = LlmAgent(
        name="desk",
        model=ScriptedLlm(
            [tool_call("finder", {"request": "k"}), tool_call("ask", {"question": "ok?"}), "Done."]
        ),
        tools=[AgentTool(finder), LongRunningFunctionTool(ask)],
    )
    base = {
        "agent": agent,
        "first_message": "hi",
        "tool_mocks": {"lookup": ToolMock.returning({"value": 1})},
        "user_agents": UserAgents(tools={"ask": ScriptedUserAgent(name="u", script=["yes"])}),
        "initial_state": {"session": {"n": 1}},
    }
    counted = event_count_metric("one_call", "tool_call", assertion=lambda n: n == 2)

    async def hang(request):
        await anyio.sleep_forever()

    return {
        "passed": EvalCase(name="passed", metrics=[counted], **base),
        "failed": EvalCase(
            name="failed",
            metrics=[state_metric("never", "session", "x", bool)],
            xfail="known gap",
            **base,
        ),
        "error": EvalCase(name="error", **{**base, "tool_mocks": {}}),
        "terminated": EvalCase(
            name="terminated",
            agent=LlmAgent(name="slow", model=ScriptedLlm(responder=hang)),
            first_message="hi",
            terminate_when=TerminateWhen(max_duration=0.2),
        ),
    }


@pytest.mark.parametrize("status", ["passed", "failed", "error", "terminated"])
async def test_a_result_survives_json_both_ways(status):
    result = await run_eval(cases()[status])
    assert result.status == status, result.explain()

    data = json.loads(json.dumps(result.to_data()))
    back = EvalResult.from_data(data)

    assert back == result
    assert back.explain() == result.explain()
    if status == "passed":
        assert back.nested_events  # events from inside the AgentTool came along
        assert back.user_agent_events  # and the user agents'


def test_another_version_is_refused():
    with pytest.raises(ValueError, match="this adk-eval reads version 1"):
        EvalResult.from_data({"version": 99})


async def test_event_values_json_cannot_carry_are_written_as_their_repr_and_adk_logs_nothing(
    caplog,
):
    from tests.shapes_support import workflow_case

    result = await run_eval(workflow_case())
    with caplog.at_level(logging.DEBUG):
        data = json.loads(json.dumps(result.to_data()))

    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    (output,) = [e["output"] for e in data["events"] if isinstance(e.get("output"), dict)]
    assert output["text"] == "owls hunt at night"
    assert output["guard"].startswith("<unlocked _thread.lock object")
    (delta,) = [
        e["actions"]["stateDelta"] for e in data["events"] if e["actions"].get("stateDelta")
    ]
    assert delta["formatter"].startswith("<function open_ledger.")
    back = EvalResult.from_data(data).trace.messages
    assert [m.text for m in back] == [m.text for m in result.trace.messages]
