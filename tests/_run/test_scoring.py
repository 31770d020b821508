"""Scoring a run: metrics that raise or fail, and a case that expects an error.

A metric that raises is the run's error (the others still scored), a failing metric fails
it, and `EvalCase.expect_error` turns the expected error into a passed metric.
"""

from __future__ import annotations

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, run_eval
from adk_eval.metrics import MetricResult, event_count_metric
from adk_eval.testing import ScriptedLlm


async def test_a_metric_that_raises_is_reported_and_the_others_still_run():
    class Boom:
        name = "boom"

        def evaluate(self, trace):
            raise KeyError("missing")

    class Good:
        name = "good"

        async def evaluate(self, trace):
            return MetricResult(passed=True, score=1.0)

    system = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(name="metric-error", agent=system, first_message="hi", metrics=[Boom(), Good()])
    )

    assert result.status == "error"
    assert result.error.phase == "metric"
    assert "metric `boom` raised KeyError" in result.error.message
    assert result.metrics["good"].passed
    assert not result.metrics["boom"].passed
    assert result.metrics["boom"].error.startswith("KeyError")


async def test_failing_metric_makes_the_status_failed():
    system = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(
            name="fails",
            agent=system,
            first_message="hi",
            metrics=[event_count_metric("no_tools", "tool_call", assertion=lambda n: n > 0)],
        )
    )

    assert result.status == "failed"
    assert result.failed_metrics.keys() == {"no_tools"}


def _forbidden_agent():
    from google.adk.agents import LlmAgent

    from adk_eval.testing import ScriptedLlm, tool_call

    def delete_account(user: str) -> dict:
        """Deletes an account (never mocked: the case expects the run to stop here)."""
        raise AssertionError("never runs")

    return LlmAgent(
        name="admin",
        model=ScriptedLlm([tool_call("delete_account", {"user": "1"}), "Deleted."]),
        tools=[delete_account],
    )


async def test_a_case_expecting_an_unmocked_tool_passes_when_the_run_stops_there():
    from adk_eval import EvalCase, EvalToolError, run_eval

    by_class = await run_eval(
        EvalCase(name="c", agent=_forbidden_agent(), first_message="go", expect_error=EvalToolError)
    )
    by_pattern = await run_eval(
        EvalCase(name="p", agent=_forbidden_agent(), first_message="go", expect_error="delete_acc")
    )

    for result in (by_class, by_pattern):
        assert result.status == "passed", result.explain()
        assert result.error is None
        assert result.metrics["expect_error"].evidence[0].startswith("ended as expected")
        assert "EvalToolError: " in result.metrics["expect_error"].evidence[0]


async def test_a_case_expecting_an_error_fails_without_it_and_keeps_another_error():
    from adk_eval import EvalCase, ToolMock, run_eval

    mocked = EvalCase(
        name="m",
        agent=_forbidden_agent(),
        first_message="go",
        tool_mocks={"delete_account": ToolMock.returning({"ok": True})},
        expect_error="EvalToolError",
    )
    other = EvalCase(
        name="o", agent=_forbidden_agent(), first_message="go", expect_error=TimeoutError
    )

    no_error, wrong_error = await run_eval(mocked), await run_eval(other)

    assert no_error.status == "failed"
    assert no_error.metrics["expect_error"].evidence == [
        "expected the run to end in an error matching 'EvalToolError'; it ended without an error"
    ]
    assert wrong_error.status == "error"
    assert (
        wrong_error.metrics["expect_error"]
        .evidence[0]
        .startswith("expected `TimeoutError`; the run ended in EvalToolError")
    )


def test_expect_error_must_be_an_exception_class_or_a_pattern():
    import pytest

    from adk_eval import EvalCase, EvalSetupError

    with pytest.raises(EvalSetupError, match="`expect_error` must be an exception class"):
        EvalCase(name="x", agent=_forbidden_agent(), first_message="go", expect_error=42)
