"""The tool rules on a remote agent's name: a transfer to it, its AgentTool or its answers count."""

from __future__ import annotations

from google.adk.workflow import START, Workflow

from adk_eval import EvalCase, EvalTrace, run_eval
from adk_eval.metrics import at_most, never, never_called
from adk_eval.testing import (
    function_response_event,
    text_event,
    tool_call_event,
    user_event,
)
from tests._tools.test_remote import asking_root
from tests.shapes_support import remote_agent, remote_case

NOWHERE = "http://127.0.0.1:1/.well-known/agent-card.json"  # nothing listens: nothing may be sent


def transfer(to: str, n: int = 1) -> list:
    args = {"agent_name": to}
    return [
        tool_call_event("desk", "transfer_to_agent", args, call_id=f"t{n}"),
        function_response_event("desk", "transfer_to_agent", {"result": None}, call_id=f"t{n}"),
    ]


def answer(author: str, text: str, request: str = "r1", *, remote: bool = True):
    """`author`'s answer; a remote agent's carries ADK's A2A metadata (the request it answers)."""
    event = text_event(author, text)
    if remote:
        message = {"message": {"messageId": request, "parts": [{"text": "refund #7"}]}}
        event.custom_metadata = {"a2a:request": message, "a2a:response": {"state": "completed"}}
    return event


def trace(*events) -> EvalTrace:
    return EvalTrace(events=(user_event("refund #7"), *events))


def reason(rule, *events) -> str | None:
    return rule.evaluate(trace(*events)).value["event"]


def test_a_transfer_to_a_remote_agent_breaks_never_called_on_its_name():
    said = reason(never_called("billing"), *transfer("billing"), answer("billing", "Refunded."))

    assert said == "remote agent `billing` reached by `desk` (transfer_to_agent)"


def test_a_remote_agents_answer_without_a_transfer_breaks_it_a_workflow_node():
    said = reason(never_called("billing"), answer("billing", "Refunded."))

    assert said == 'remote agent `billing` answered: "Refunded."'


def test_a_local_agent_of_that_name_is_no_call_the_meaning_for_other_names_is_unchanged():
    events = (*transfer("billing"), answer("billing", "Refunded.", remote=False))

    assert reason(never_called("billing"), *events) is None
    assert reason(at_most("billing", 0), *events) is None


def test_a_tool_named_like_the_remote_agent_is_read_as_the_tool_call_it_is():
    events = [
        tool_call_event("desk", "billing", {"request": "refund"}, call_id="c1"),
        function_response_event("desk", "billing", {"ok": True}, call_id="c1"),
        answer("billing", "Refunded."),
    ]

    said = reason(never_called("billing"), *events)

    assert said == '`billing` called by `desk` with {"request": "refund"}'
    assert reason(at_most("billing", 1), *events) is None  # the call and its answer: one


def test_args_restrict_never_called_to_tool_calls():
    rule = never_called("billing", args={"request": "refund"})

    assert reason(rule, *transfer("billing"), answer("billing", "Refunded.")) is None


def test_at_most_counts_each_exchange_once():
    one = (*transfer("billing"), answer("billing", "Refunded."), answer("billing", "Also done."))
    two = (*one, *transfer("billing", 2), answer("billing", "Again.", "r2"))
    nodes = (answer("billing", "Once."), answer("billing", "Twice.", "r2"))

    assert reason(at_most("billing", 1), *one) is None  # one request, two events
    assert reason(at_most("billing", 1), *two) == (
        "exchange 2 with remote agent `billing` (at most 1): reached by `desk` (transfer_to_agent)"
    )
    assert reason(at_most("billing", 1), *nodes) == (
        'exchange 2 with remote agent `billing` (at most 1): answered: "Twice."'
    )


def test_never_before_reads_an_exchange_with_a_remote_agent_as_its_call():
    rule = never("refund", before="billing")
    refund = [
        tool_call_event("desk", "refund", {"order": 7}, call_id="c9"),
        function_response_event("desk", "refund", {"ok": True}, call_id="c9"),
    ]

    assert reason(rule, answer("billing", "Approved."), *refund) is None
    assert reason(rule, *refund) is not None


async def test_live_never_called_on_a_remote_agents_name_stops_before_its_mock_answers():
    rule = never_called("helper")
    mocks = {"helper": ["never sent"]}
    result = await run_eval(remote_case(NOWHERE, remote_mocks=mocks, invariants=[rule]))

    assert result.status == "failed", result.explain()
    assert result.metrics[rule.name].value["event"] == (
        "remote agent `helper` reached by `root` (transfer_to_agent)"
    )
    assert [m.author for m in result.trace.messages] == ["user"]  # stopped before it answered
    assert result.attribution.party == "agent"


async def test_live_never_called_stops_a_remote_workflow_node_at_its_answer():
    rule = never_called("helper")
    flow = Workflow(name="flow", edges=[(START, remote_agent(NOWHERE))])
    mocks = {"helper": ["Answered."]}
    case = EvalCase(
        name="node", agent=flow, first_message="hi", remote_mocks=mocks, invariants=[rule]
    )
    result = await run_eval(case)

    assert result.status == "failed", result.explain()
    assert result.metrics[rule.name].value["event"] == 'remote agent `helper` answered: "Answered."'
    assert result.attribution.party == "agent"
    assert rule.evaluate(result.trace).value["event"] == result.metrics[rule.name].value["event"]


async def test_live_never_called_stops_an_agent_tool_of_the_remote_agent_before_it_runs():
    rule = never_called("helper")
    case = EvalCase(
        name="tool",
        agent=asking_root(remote_agent(NOWHERE)),
        first_message="hi",
        remote_mocks={"helper": ["never sent"]},
        invariants=[rule],
    )
    result = await run_eval(case)

    assert result.status == "failed", result.explain()
    assert result.metrics[rule.name].value["event"] == (
        '`helper` called by `root` with {"request": "hi"}'
    )
    assert "never sent" not in str([e.content for e in result.trace.events])
