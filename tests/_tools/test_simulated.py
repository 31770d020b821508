"""Simulated tools: a scripted model stands in for the simulator, so every prompt is seen."""

from __future__ import annotations

import json

import pytest
from google.adk.agents import LlmAgent
from pydantic import BaseModel

from adk_eval import EvalCase, EvalSetupError, ToolMock, run_eval
from adk_eval.goldens import to_golden
from adk_eval.testing import ScriptedLlm, tool_call


class Order(BaseModel):
    id: int
    item: str


def get_order(order_id: int) -> Order:
    """Looks an order up by its id."""
    raise AssertionError("the real tool must never run")


def cancel_order(order_id: int):
    """Cancels an order."""
    raise AssertionError("the real tool must never run")


def prompt_of(request) -> str:
    return "\n".join(p.text or "" for c in request.contents for p in c.parts or [])


class Simulator:
    """A scripted simulator: answers from `answers` in turn and keeps every prompt."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.model = ScriptedLlm(responder=self.respond)

    def respond(self, request) -> str:
        self.prompts.append(prompt_of(request))
        return self.answers.pop(0)


def agent(*steps) -> LlmAgent:
    return LlmAgent(
        name="shop",
        model=ScriptedLlm([*steps, "Done."]),
        instruction="Help with orders.",
        tools=[get_order, cancel_order],
    )


def order_case(simulator: Simulator, *calls, **kwargs) -> EvalCase:
    return EvalCase(
        name="orders",
        agent=agent(*calls),
        first_message="Where is my order?",
        initial_state={"session": {"customer": "ada"}},
        tool_mocks={"get_order": ToolMock.simulated("Orders 1-9 exist.", model=simulator.model)},
        **kwargs,
    )


async def test_the_simulator_sees_the_declaration_args_state_and_earlier_answers():
    simulator = Simulator('{"id": 7, "item": "lamp"}', '```json\n{"id": 7, "item": "lamp"}\n```')
    call = tool_call("get_order", {"order_id": 7})
    result = await run_eval(order_case(simulator, call, call))
    assert result.ok, result.explain()
    first, second = simulator.prompts
    for prompt in (first, second):
        assert "Looks an order up by its id." in prompt  # the declaration
        assert '"order_id": {' in prompt  # its parameters
        assert '"integer"' in prompt
        assert '"item"' in prompt  # the response schema, from the return annotation
        assert "Orders 1-9 exist." in prompt  # the case's instructions
        assert '"customer": "ada"' in prompt  # the session state
        assert '"order_id": 7' in prompt  # the call
    assert "earlier answers" not in first
    assert 'called with {"order_id": 7} -> {"id": 7, "item": "lamp"}' in second
    answers = [c.response for c in result.trace.select("tool_call")]
    assert answers == [{"id": 7, "item": "lamp"}] * 2
    calls = result.trace.select("tool_call")
    assert [result.trace.source_of(c) for c in calls] == ["simulated", "simulated"]


async def test_an_invalid_answer_is_sent_back_once_then_accepted():
    simulator = Simulator('{"id": "seven"}', '{"id": 7, "item": "lamp"}')
    result = await run_eval(order_case(simulator, tool_call("get_order", {"order_id": 7})))
    assert result.ok, result.explain()
    assert len(simulator.prompts) == 2
    assert "That answer is not valid" in simulator.prompts[1]
    assert result.trace.select("tool_call")[0].response == {"id": 7, "item": "lamp"}


async def test_two_invalid_answers_stop_the_run_with_the_answer_shown():
    simulator = Simulator("I think the order is a lamp.", '{"id": 7}')
    result = await run_eval(order_case(simulator, tool_call("get_order", {"order_id": 7})))
    assert result.status == "error"
    assert result.error.phase == "system"
    assert "gave no valid answer in 2 tries" in result.error.message
    assert "'item' is a required property" in result.error.message
    assert '{"id": 7}' in result.error.message  # the last answer, shown
    assert "Done." not in [m.text for m in result.trace.select("agent_message")]
    (call,) = result.trace.select("tool_call")
    assert result.trace.source_of(call) == "simulated"  # never "real": no real body ran


async def test_a_tool_without_a_schema_takes_any_json_or_text():
    simulator = Simulator("Cancelled.", '{"cancelled": true}')
    case = EvalCase(
        name="cancel",
        agent=agent(
            tool_call("cancel_order", {"order_id": 1}), tool_call("cancel_order", {"order_id": 2})
        ),
        first_message="Cancel both",
        tool_mocks={"cancel_order": ToolMock.simulated(model=simulator.model)},
    )
    result = await run_eval(case)
    assert result.ok, result.explain()
    assert [c.response for c in result.trace.select("tool_call")] == [
        {"result": "Cancelled."},
        {"cancelled": True},
    ]


async def test_unmocked_tools_still_stop_the_run_unless_the_case_opts_in():
    call = tool_call("cancel_order", {"order_id": 3})
    refused = await run_eval(EvalCase(name="strict", agent=agent(call), first_message="Cancel it"))
    assert refused.status == "error"
    assert "no mock was provided" in refused.error.message
    assert refused.trace.source_of(refused.trace.select("tool_call")[0]) == "refused"

    simulator = Simulator('{"cancelled": true}')
    allowed = await run_eval(
        EvalCase(
            name="opted-in",
            agent=agent(call),
            first_message="Cancel it",
            simulate_unmocked=ToolMock.simulated(model=simulator.model),
        )
    )
    assert allowed.ok, allowed.explain()
    (answered,) = allowed.trace.select("tool_call")
    assert answered.response == {"cancelled": True}
    assert allowed.trace.source_of(answered) == "simulated"


async def test_simulate_unmocked_true_uses_the_judge_model_and_its_key_is_checked_first(
    monkeypatch,
):
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "ADK_EVAL_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ADK_EVAL_JUDGE_MODEL", "gemini-2.5-flash")
    case = EvalCase(
        name="no-key",
        agent=agent(tool_call("cancel_order", {"order_id": 3})),
        first_message="Cancel it",
        simulate_unmocked=True,
    )
    with pytest.raises(EvalSetupError, match="GOOGLE_API_KEY"):
        await run_eval(case)


def test_simulate_unmocked_takes_only_a_simulated_mock():
    with pytest.raises(EvalSetupError, match="simulate_unmocked"):
        EvalCase(
            name="bad",
            agent=agent(),
            first_message="hi",
            simulate_unmocked=ToolMock.returning({"ok": True}),
        )


async def test_a_golden_keeps_simulated_answers_like_any_tool_response():
    simulator = Simulator('{"id": 7, "item": "lamp"}')
    result = await run_eval(order_case(simulator, tool_call("get_order", {"order_id": 7})))
    golden = to_golden(result, "simulated")
    assert '"item": "lamp"' in json.dumps(golden.model_dump(mode="json"), sort_keys=True)


@pytest.mark.local_model
async def test_the_embedded_local_model_simulates_a_tool_under_its_schema(local_model):
    result = await run_eval(
        EvalCase(
            name="local",
            agent=agent(tool_call("get_order", {"order_id": 7})),
            first_message="Where is order 7?",
            tool_mocks={"get_order": ToolMock.simulated("Order 7 is a desk lamp.", model="local")},
        )
    )
    assert result.ok, result.explain()
    (call,) = result.trace.select("tool_call")
    assert result.trace.source_of(call) == "simulated"
    # the structure held (what the 135M model says is not checked)
    Order.model_validate(call.response)


async def test_a_guardrail_callback_still_answers_first_and_sub_agents_are_simulated_too():
    def guard(tool, args, tool_context):
        if tool.name == "cancel_order":
            return {"error": "cancelling needs a human"}
        return None

    simulator = Simulator('{"id": 1, "item": "pen"}')
    billing = LlmAgent(
        name="billing",
        model=ScriptedLlm(
            [
                tool_call("cancel_order", {"order_id": 1}),
                tool_call("get_order", {"order_id": 1}),
                "ok",
            ]
        ),
        tools=[get_order, cancel_order],
        before_tool_callback=guard,
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "billing"})]),
        sub_agents=[billing],
    )
    result = await run_eval(
        EvalCase(
            name="guarded",
            agent=root,
            first_message="cancel order 1",
            simulate_unmocked=ToolMock.simulated(model=simulator.model),
        )
    )
    assert result.ok, result.explain()
    calls = {c.name: c for c in result.trace.select("tool_call")}
    assert calls["cancel_order"].response == {"error": "cancelling needs a human"}
    assert calls["get_order"].response == {"id": 1, "item": "pen"}
    assert len(simulator.prompts) == 1  # only get_order reached the simulator
    assert '"name": "get_order"' in simulator.prompts[0]
    sources = {name: result.trace.source_of(call) for name, call in calls.items()}
    assert sources == {
        "transfer_to_agent": "real",
        "cancel_order": "callback",
        "get_order": "simulated",
    }
