"""EvalResult: status helpers, token sums, a readable explanation, and how one is built."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.genai import types

from adk_eval import (
    EvalCase,
    EvalResult,
    ScriptedUserAgent,
    TerminateWhen,
    TokenUsage,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval.metrics import event_count_metric, llm_judge, state_metric
from adk_eval.testing import ScriptedLlm, tool_call


def test_token_usage_sums_usage_metadata():
    events = [
        Event(
            author="a",
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=10, candidates_token_count=2, total_token_count=12
            ),
        ),
        Event(author="a"),
        Event(
            author="a",
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=5, candidates_token_count=1
            ),
        ),
    ]
    assert TokenUsage.from_events(events) == TokenUsage(15, 3, 18)


async def test_explain_shows_status_failed_metrics_reason_and_last_turns():
    agent = LlmAgent(
        name="clinician", model=ScriptedLlm(responder=lambda r: "Please rest at home.")
    )
    result = await run_eval(
        EvalCase(
            name="should-escalate",
            agent=agent,
            first_message="crushing chest pain",
            user_agents=UserAgents(
                loop=ScriptedUserAgent(name="patient", step=lambda c: "still hurts")
            ),
            terminate_when=TerminateWhen(max_turns=2),
            metrics=[
                state_metric("escalated", "session", "escalation", lambda v: v["level"] == "999"),
                event_count_metric("replied", "agent_message", assertion=lambda n: n > 0),
            ],
        )
    )

    text = result.explain()
    assert result.status == "terminated"
    first = text.splitlines()[0]
    assert first.startswith("EvalCase `should-escalate`: TERMINATED after 2 user replies")
    assert "stopped by max_turns: 2 turns reached the limit of 2" in text
    assert "[FAIL] escalated" in text
    assert "`session.escalation` is not set in the final state" in text
    assert "[PASS] replied" in text
    assert "clinician: Please rest at home." in text
    assert "user: still hurts" in text


async def test_explain_keeps_failing_evidence_whole_and_passing_evidence_short():
    profile = {f"field_{i}": "x" * 30 for i in range(60)}
    agent = LlmAgent(name="cs", model=ScriptedLlm(["Here you go"]))
    result = await run_eval(
        EvalCase(
            name="profile",
            agent=agent,
            first_message="hi",
            initial_state={"session": {"profile": profile}},
            metrics=[
                event_count_metric("replied", "agent_message", assertion=lambda n: n == 1),
                state_metric("long", "session", "profile", lambda v: False),
            ],
        )
    )
    text = result.explain()
    passing = text.splitlines()[text.splitlines().index("[PASS] replied score=1") + 1]
    assert passing == "    - 1 agent_message; expected: n == 1"
    failing = [line for line in text.splitlines() if "field_59" in line]
    assert failing  # the failing metric's evidence names the whole value
    assert "user: hi" in text
    assert "cs: Here you go" in text


async def test_metrics_of_a_run_that_errored_are_not_applicable_and_judges_are_not_called():
    def pay(amount: int) -> dict:
        """Pays (never mocked here, so the run errors before paying)."""
        raise AssertionError("never runs")

    asked = []
    verdict = '{"passed": true, "score": 1, "reasoning": "fine"}'
    judge_model = ScriptedLlm(responder=lambda request: asked.append(request) or verdict)
    agent = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("lookup_price", {}), tool_call("pay", {"amount": 5}), "ok"]),
        tools=[pay, lookup_price],
    )
    result = await run_eval(
        EvalCase(
            name="never-paid",
            agent=agent,
            tool_mocks={"lookup_price": ToolMock.returning({"price": 5})},
            first_message="buy",
            metrics=[
                event_count_metric(
                    "no_double_payment",
                    "tool_call",
                    lambda c: c.name == "pay" and c.response is not None,
                    lambda n: n <= 1,
                ),
                llm_judge("polite", "Was the agent polite?", model=judge_model),
            ],
        )
    )
    assert result.status == "error"
    paid = result.metrics["no_double_payment"]
    assert (paid.passed, paid.applicable, paid.verdict, paid.score) == (False, False, "n/a", None)
    assert paid.evidence[0].startswith("not applicable: the run stopped with an error (system)")
    assert paid.evidence[1].startswith("on the partial trace: ")
    assert result.metrics["polite"].verdict == "n/a"
    assert asked == []  # the judge was never asked
    assert result.failed_metrics == {}
    text = result.explain()
    assert "[N/A] no_double_payment" in text
    assert "[PASS]" not in text


def lookup_price() -> dict:
    """Looks up a price (mocked)."""
    raise AssertionError("never runs")


def test_a_results_repr_is_short_however_many_events_it_holds():
    from adk_eval import EvalSuiteResult
    from adk_eval._suites._results import suite_from_results
    from adk_eval.metrics import MetricResult

    events = [
        Event(author="user", content=types.Content(role="user", parts=[types.Part(text="x" * 500)]))
        for _ in range(1_000)
    ]
    result = EvalResult.from_fields(
        name="long",
        status="failed",
        events=events,
        turns=500,
        metrics={"tone": MetricResult(passed=False)},
    )
    text = repr(result)
    assert len(text) < 200, text
    assert "name='long'" in text
    assert "events=1000" in text
    assert "'tone': 'failed'" in text
    suite = suite_from_results([result], case_names=["long"], repeat=1, duration_ms=5.0)
    assert isinstance(suite, EvalSuiteResult)
    assert len(repr(suite)) < 300
    assert "'failed': 1" in repr(suite)
    assert "label='stable-fail'" in repr(suite.cases[0])


def test_the_dataclass_writes_its_init_and_the_flat_form_is_a_classmethod():
    import dataclasses
    import inspect

    from adk_eval._trace import EvalTrace

    fields = [field.name for field in dataclasses.fields(EvalResult)]
    assert list(inspect.signature(EvalResult).parameters) == fields  # one keyword a field
    plain = EvalResult(name="plain", status="passed")
    assert plain.trace == EvalTrace(events=(), case_name="plain")
    assert plain == EvalResult(name="plain", status="passed")
    with pytest.raises(TypeError, match="events"):
        EvalResult(name="flat", status="passed", events=())  # type: ignore[call-arg]

    event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")]))
    flat = EvalResult.from_fields(name="flat", status="passed", turns=1, events=[event])
    assert flat.events == [event]
    assert (flat.turns, flat.trace.case_name) == (1, "flat")
    base = EvalTrace(events=(event,), case_name="base", final_state={"session": {"a": 1}})
    kept = EvalResult.from_fields("over", "failed", trace=base, final_state={"session": {}})
    assert kept.events == (event,)  # the given trace's, its final state replaced
    assert kept.final_state == {"session": {}}
    assert dataclasses.replace(kept, turns=2).trace == kept.trace
    with pytest.raises(TypeError, match="colour"):
        EvalResult.from_fields(name="odd", status="passed", colour="red")
