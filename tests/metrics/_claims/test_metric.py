"""claimed_actions in runs: live, by sub-agents and inside AgentTools, and on a stored session."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval import EvalCase, EvalSetupError, ScriptedUserAgent, ToolMock, UserAgents, run_eval
from adk_eval.metrics import claimed_actions, score_session
from adk_eval.testing import ScriptedLlm, tool_call

from .builders import CLAIM, REFUND, billing, support


def test_bad_options_and_the_metric_declares_it_reads_content_and_the_tool_calls():
    with pytest.raises(EvalSetupError, match="is not a verb"):
        claimed_actions(verbs={"sign up": ["register"]})
    with pytest.raises(EvalSetupError, match=r"verbs=\) maps a verb .*, got \['refund'\]$"):
        claimed_actions(verbs=["refund"])  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match=r"write ignore=\['audit_log'\]$"):
        claimed_actions(ignore="audit_log")
    with pytest.raises(EvalSetupError, match=r"write ignore_verbs=\['charge'\]$"):
        claimed_actions(ignore_verbs="charge")
    with pytest.raises(EvalSetupError, match="got the name 'refund_order'; to say which tools"):
        claimed_actions(tools=["refund_order"])
    rule = claimed_actions(name="no_false_claims", on_breach="record")
    assert (rule.name, rule.on_breach, rule.needs) == (
        "no_false_claims",
        "record",
        frozenset({"content", "tools"}),
    )


async def test_a_run_whose_refund_call_succeeded_passes_and_one_without_it_fails():
    mocks = {"refund_order": ToolMock.returning({"refunded": "A1"})}
    backed = EvalCase(
        name="backed",
        agent=support([REFUND, CLAIM]),
        first_message="refund A1",
        tool_mocks=mocks,
        metrics=[claimed_actions()],
    )
    unbacked = EvalCase(
        name="unbacked",
        agent=support([CLAIM]),
        first_message="refund A1",
        tool_mocks=mocks,
        metrics=[claimed_actions()],
    )

    passed, failed = await run_eval(backed), await run_eval(unbacked)

    assert passed.status == "passed", passed.metrics["claimed_actions"].evidence
    assert failed.status == "failed"
    assert f'claimed "{CLAIM}" (refund)' in failed.metrics["claimed_actions"].value["event"]


async def test_a_tool_that_answers_an_error_is_named_in_the_result():
    case = EvalCase(
        name="declined",
        agent=support([REFUND, CLAIM]),
        first_message="refund A1",
        tool_mocks={"refund_order": ToolMock.returning({"error": "card expired"})},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    assert result.status == "failed"
    verdict = result.metrics["claimed_actions"]
    assert "the call `refund_order` failed: card expired" in verdict.value["event"]
    assert "checked live: the run stopped at this step" in verdict.evidence


@pytest.mark.parametrize(
    ("answer", "status"), [({"status": "error"}, "failed"), ({"status": "cancelled"}, "passed")]
)
async def test_a_run_whose_tool_answers_status_error_fails_the_claim_after_it(answer, status):
    def cancel_appointment(day: str) -> dict:
        """Cancels the user's appointment on a day."""
        raise AssertionError("mocked")

    claim = "Your appointment has been cancelled."
    agent = LlmAgent(
        name="clinic",
        model=ScriptedLlm([tool_call("cancel_appointment", {"day": "Friday"}), claim]),
        tools=[cancel_appointment],
    )
    case = EvalCase(
        name="cancel",
        agent=agent,
        first_message="cancel my Friday appointment",
        tool_mocks={"cancel_appointment": ToolMock.returning(answer)},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    verdict = result.metrics["claimed_actions"]
    assert result.status == status, verdict.evidence
    if status == "failed":
        assert verdict.value["event"] == (
            f'`clinic` claimed "{claim}" (cancel), but the call `cancel_appointment` failed: '
            "status 'error'; calls before it: `cancel_appointment` failed"
        )


async def test_a_tool_that_raises_is_named_in_the_result():
    def as_error(tool, args, tool_context, error):  # the agent answers the model with the error
        return {"error": f"{type(error).__name__}: {error}"}

    case = EvalCase(
        name="raised",
        agent=support([REFUND, CLAIM], on_tool_error_callback=as_error),
        first_message="refund A1",
        tool_mocks={"refund_order": ToolMock.raising(RuntimeError("payment gateway down"))},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    event = result.metrics["claimed_actions"].value["event"]
    assert "the call `refund_order` failed: RuntimeError: payment gateway down" in event


async def test_live_the_run_stops_at_the_breaking_agent_turn():
    sent: list = []
    agent = support(
        [
            "Let me look into it.",
            [CLAIM, tool_call("send_email", {"to": "ann@example.com", "body": "refunded"})],
            "Anything else?",
        ]
    )
    case = EvalCase(
        name="stops",
        agent=agent,
        first_message="refund A1",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="ann", script=["ok", "thanks"])),
        tool_mocks={"send_email": ToolMock(lambda args, ctx: sent.append(args) or {"ok": True})},
        invariants=[claimed_actions()],
    )

    result = await run_eval(case)

    assert result.status == "failed"
    said = [m.text for m in result.trace.messages]
    assert said == ["refund A1", "Let me look into it.", "ok", CLAIM]  # no "thanks", no more
    assert sent == []  # the call in the breaking turn never reached its mock
    assert (
        result.metrics["claimed_actions"].value["event"].startswith(f'`support` claimed "{CLAIM}"')
    )


async def test_live_a_claim_sent_with_its_call_passes_when_the_call_succeeds():
    case = EvalCase(
        name="same-response",
        agent=support([[CLAIM, REFUND], "Anything else?"]),
        first_message="refund A1",
        tool_mocks={"refund_order": ToolMock.returning({"refunded": "A1"})},
        invariants=[claimed_actions()],
    )
    result = await run_eval(case)
    assert result.status == "passed", result.metrics["claimed_actions"].evidence
    assert [m.text for m in result.trace.messages][-1] == "Anything else?"


async def test_live_a_claim_sent_with_a_call_that_fails_stops_the_run_at_its_answer():
    sent: list = []
    case = EvalCase(
        name="same-response-failed",
        agent=support([[CLAIM, REFUND], tool_call("send_email", {"to": "a", "body": "b"}), "Bye"]),
        first_message="refund A1",
        tool_mocks={
            "refund_order": ToolMock.returning({"error": "card expired"}),
            "send_email": ToolMock(lambda args, ctx: sent.append(args) or {"ok": True}),
        },
        invariants=[claimed_actions()],
    )

    result = await run_eval(case)

    assert result.status == "failed"
    verdict = result.metrics["claimed_actions"]
    assert verdict.value["event"] == (
        f'`support` claimed "{CLAIM}" (refund), but the call `refund_order` failed: card expired; '
        "calls before it: `refund_order` failed"
    )
    assert "checked live: the run stopped at this step" in verdict.evidence
    assert sent == []  # the next turn's call never ran
    assert [m.text for m in result.trace.messages] == ["refund A1", CLAIM]


async def test_a_sub_agent_claims_after_a_transfer():
    mocks = {"refund_order": ToolMock.returning({"refunded": "A1"})}
    transfer = tool_call("transfer_to_agent", {"agent_name": "billing"})

    def case(steps: list) -> EvalCase:
        root = LlmAgent(name="front", model=ScriptedLlm([transfer]), sub_agents=[billing(steps)])
        return EvalCase(
            name="transfer",
            agent=root,
            first_message="refund A1",
            tool_mocks=mocks,
            invariants=[claimed_actions()],
        )

    lied, did = await run_eval(case([CLAIM])), await run_eval(case([REFUND, CLAIM]))

    assert lied.status == "failed"
    event = lied.metrics["claimed_actions"].value["event"]
    assert event.startswith(f'`billing` claimed "{CLAIM}" (refund), but no call')
    assert "`transfer_to_agent` ok" in event
    assert did.status == "passed", did.metrics["claimed_actions"].evidence


async def test_the_agent_inside_an_agent_tool_claims():
    mocks = {"refund_order": ToolMock.returning({"refunded": "A1"})}

    def case(steps: list) -> EvalCase:
        front = LlmAgent(
            name="front",
            model=ScriptedLlm([tool_call("billing", {"request": "refund A1"}), "All done."]),
            tools=[AgentTool(billing(steps))],
        )
        return EvalCase(
            name="agent-tool",
            agent=front,
            first_message="refund A1",
            tool_mocks=mocks,
            invariants=[claimed_actions()],
        )

    lied, did = await run_eval(case([CLAIM])), await run_eval(case([REFUND, CLAIM]))

    assert lied.status == "failed"
    assert lied.metrics["claimed_actions"].value["event"].startswith(f'`billing` claimed "{CLAIM}"')
    assert did.status == "passed", did.metrics["claimed_actions"].evidence


async def test_the_same_rule_scores_a_stored_adk_session():
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(agent=support([CLAIM]), app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="refund A1")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    stored = await runner.session_service.get_session(
        app_name="shop", user_id="u", session_id=session.id
    )

    scored = await score_session(stored, [claimed_actions()])

    assert not scored["claimed_actions"].passed
    assert "no tool call before it" in scored["claimed_actions"].value["event"]
