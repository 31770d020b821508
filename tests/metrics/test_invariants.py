"""Invariants post hoc, on traces built from ADK events, and live in a run (record and stop)."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, EvalSetupError, EvalTrace, ToolMock, run_eval
from adk_eval.metrics import (
    at_most,
    never,
    never_called,
    never_in_arguments,
    never_said,
    no_tool_error_twice,
    state_matches,
)
from adk_eval.metrics._invariants import error_of
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    state_event,
    text_event,
    tool_call,
    tool_call_event,
    user_event,
)


def call(name: str, args: dict, answer: dict, n: int) -> list:
    return [
        tool_call_event("agent", name, args, call_id=f"c{n}"),
        function_response_event("agent", name, answer, call_id=f"c{n}"),
    ]


def trace(*events, **fields) -> EvalTrace:
    return EvalTrace(events=(user_event("hi"), *events), **fields)


SUPPORT = trace(
    *call("search", {"q": "a"}, {"hits": 1}, 1),
    *call("charge", {"card": "4111"}, {"error": "declined"}, 2),
    *call("charge", {"card": "4111"}, {"error": "declined"}, 3),
    *call("refund", {"order": "A1"}, {"ok": True}, 4),
    *call("verify_identity", {"name": "Ann"}, {"ok": True}, 5),
    state_event({"refunded": True}, author="agent"),
    text_event("agent", "Refunded; your code is 7431."),
)


@pytest.mark.parametrize(
    ("rule", "event"),
    [
        (never_called("refund"), '`refund` called by `agent` with {"order": "A1"}'),
        (
            never("refund", before="verify_identity"),
            '`refund` called by `agent` with {"order": "A1"} before any `verify_identity`',
        ),
        (at_most("charge", 1), 'call 2 of `charge` (at most 1), args {"card": "4111"}'),
        (no_tool_error_twice(), '`charge` {"card": "4111"} failed again: declined'),
        (
            never(state_matches({"session.refunded": True})),
            'the state matched {"session.refunded": true}',
        ),
        (never_said("7431"), '`agent` said "Refunded; your code is 7431."'),
        (
            never_in_arguments("4111"),
            '`charge` called by `agent` with \'4111\' in {"card": "4111"}',
        ),
        (
            never(lambda seen: seen.called("search") + seen.called("charge") > 2, name="calls"),
            "seen.called('search') + seen.called('charge') > 2 held after call `charge`",
        ),
    ],
)
def test_each_rule_finds_its_first_breach_in_a_trace(rule, event):
    result = rule.evaluate(SUPPORT)
    assert not result.passed
    assert result.value == {"breached": True, "event": event}
    assert result.evidence == [f"broken: {event}"]


@pytest.mark.parametrize(
    "rule",
    [
        never_called("delete_account"),
        never("verify_identity", before="search"),
        at_most("charge", 2),
        never(state_matches({"session.refunded": False})),
        never_said("password"),
        never_in_arguments("secret"),
    ],
)
def test_a_rule_the_trace_keeps_passes(rule):
    result = rule.evaluate(SUPPORT)
    assert result.passed, result.evidence
    assert result.value == {"breached": False, "event": None}


def test_a_call_a_callback_answered_never_happened():
    answered = trace(*call("refund", {"order": "A1"}, {"error": "refused"}, 1))
    assert not never_called("refund").evaluate(answered).passed
    guarded = trace(
        *call("refund", {"order": "A1"}, {"error": "refused"}, 1), tool_sources={"c1": "callback"}
    )
    assert never_called("refund").evaluate(guarded).passed


def test_the_state_starts_from_the_initial_state():
    rule = never(state_matches({"session.tier": "gold", "session.refunded": True}))
    events = (state_event({"refunded": True}, author="agent"),)
    assert rule.evaluate(trace(*events)).passed
    assert not rule.evaluate(trace(*events, initial_state={"session": {"tier": "gold"}})).passed


def test_bad_rules_say_what_to_write_instead():
    with pytest.raises(EvalSetupError, match=r"use never_called\('refund'\)"):
        never("refund")
    with pytest.raises(EvalSetupError, match="times must be an int"):
        at_most("search", -1)
    with pytest.raises(EvalSetupError, match="on_breach must be 'stop' or 'record'"):
        never_called("x", on_breach="warn")
    with pytest.raises(EvalSetupError, match="invariants must be rules"):
        EvalCase(name="c", agent=LlmAgent(name="a"), first_message="hi", invariants=[len])


def charge(card: str) -> dict:
    """Charges a card."""
    raise AssertionError("mocked")


def retries(times: int) -> LlmAgent:
    steps = [tool_call("charge", {"card": "4111"})] * times + ["Sorry, it failed."]
    return LlmAgent(name="shop", model=ScriptedLlm(steps), tools=[charge])


@pytest.mark.parametrize(("on_breach", "calls"), [("stop", 2), ("record", 3)])
async def test_stop_ends_the_run_at_the_breach_and_record_lets_it_finish(on_breach, calls):
    answered: list = []
    case = EvalCase(
        name="retry",
        agent=retries(3),
        first_message="buy",
        tool_mocks={"charge": ToolMock(lambda a, c: answered.append(a) or {"error": "declined"})},
        invariants=[no_tool_error_twice(on_breach=on_breach)],
    )

    result = await run_eval(case)

    assert result.status == "failed"
    assert len(answered) == calls  # stop: the third call never reached the mock
    verdict = result.metrics["no_tool_error_twice"]
    assert verdict.value["event"] == '`charge` {"card": "4111"} failed again: declined'
    said = [m.text for m in result.trace.messages if m.role == "agent"]
    assert said == ([] if on_breach == "stop" else ["Sorry, it failed."])


async def test_other_metrics_are_not_applicable_after_a_stop():
    from adk_eval.metrics import event_count_metric

    case = EvalCase(
        name="retry",
        agent=retries(3),
        first_message="buy",
        tool_mocks={"charge": ToolMock.returning({"error": "declined"})},
        invariants=[at_most("charge", 1)],
        metrics=[event_count_metric("apologised", "agent_message", assertion=lambda n: n == 1)],
    )
    result = await run_eval(case)
    assert result.metrics["apologised"].verdict == "n/a"
    assert (
        "stopped at a broken invariant (at_most(charge, 1))"
        in result.metrics["apologised"].evidence[0]
    )
    assert result.status == "failed"


async def test_the_same_rule_scores_a_stored_adk_session_post_hoc():
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from adk_eval.metrics import score_session

    def refund(order: str) -> dict:
        """Refunds an order (harmless here: it only answers)."""
        return {"refunded": order}

    agent = LlmAgent(
        name="support",
        model=ScriptedLlm([tool_call("refund", {"order": "A1"}), "Done."]),
        tools=[refund],
    )
    runner = InMemoryRunner(agent=agent, app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="refund A1")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    stored = await runner.session_service.get_session(
        app_name="shop", user_id="u", session_id=session.id
    )

    scored = await score_session(
        stored, [never("refund", before="verify_identity"), at_most("refund", 1)]
    )

    assert scored["never(refund before verify_identity)"].value["event"] == (
        '`refund` called by `support` with {"order": "A1"} before any `verify_identity`'
    )
    assert scored["at_most(refund, 1)"].passed


async def test_a_rule_that_raises_makes_one_clean_metric_error(capfd):
    case = EvalCase(
        name="broken-rule",
        agent=retries(1),
        first_message="buy",
        tool_mocks={"charge": ToolMock.returning({"ok": True})},
        invariants=[never(lambda seen: seen.state["missing"], name="reads_a_missing_key")],
    )
    result = await run_eval(case)

    assert result.status == "error"
    assert result.error.phase == "metric"
    assert "reads_a_missing_key" in result.error.message
    assert "KeyError" in result.error.message
    assert "Traceback" not in capfd.readouterr().err


MCP_FAILED = {"content": [{"type": "text", "text": "no such order"}], "isError": True}


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"error": "card expired"}, "card expired"),
        ({"error_code": 503, "error_message": "down"}, "503: down"),
        ({"status": "error", "error_message": "no such order"}, "status 'error': no such order"),
        ({"status": " FAILURE "}, "status 'FAILURE'"),
        ({"success": False, "reason": "card expired"}, "success false: card expired"),
        ({"ok": False}, "ok false"),
        ({"status_code": 502}, "status_code 502"),
        ({"status": 404, "detail": "gone"}, "status 404: gone"),
        (MCP_FAILED, "isError: no such order"),
        ({"is_error": True}, "isError"),
        ({"result": "Error: not enough seats"}, "Error: not enough seats"),
        ("error: user not found", "error: user not found"),
    ],
)
def test_one_definition_of_a_failed_answer(answer, why):
    assert error_of(answer) == why


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "cancelled"},
        {"status": "refunded", "error": None, "errors": [], "failed": []},
        {"success": "false", "ok": 0, "isError": False},
        {"status": 200, "success": True},
        {"items": [{"status": "error"}]},
        {"result": "Errors in your order were fixed"},
        {"result": "No error: all good", "note": "x"},
        {"content": [{"type": "text", "text": "Error: quoted"}]},
    ],
)
def test_what_is_not_a_failed_answer(answer):
    assert error_of(answer) is None


@pytest.mark.parametrize(
    "answer",
    [
        {"status": "error", "error_message": "declined"},
        {"success": False, "message": "declined"},
        MCP_FAILED,
        {"result": "Error: declined"},
    ],
)
def test_a_retry_failing_again_by_its_own_markers_breaks_no_tool_error_twice(answer):
    twice = trace(
        *call("charge", {"card": "4111"}, answer, 1), *call("charge", {"card": "4111"}, answer, 2)
    )
    result = no_tool_error_twice().evaluate(twice)
    assert not result.passed
    assert result.value["event"].startswith('`charge` {"card": "4111"} failed again: ')


async def test_the_live_watch_reads_the_same_failure_markers():
    answered: list = []
    failing = {"status": "error", "error_message": "declined"}
    case = EvalCase(
        name="retry",
        agent=retries(3),
        first_message="buy",
        tool_mocks={"charge": ToolMock(lambda a, c: answered.append(a) or failing)},
        invariants=[no_tool_error_twice()],
    )

    result = await run_eval(case)

    assert result.status == "failed"
    assert len(answered) == 2  # the second failure stopped the run before the third call
    assert result.metrics["no_tool_error_twice"].value["event"] == (
        '`charge` {"card": "4111"} failed again: status \'error\': declined'
    )
