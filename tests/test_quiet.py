"""ADK's log of the harness's expected stops is left out; its log of any other error is kept."""

from __future__ import annotations

import logging

import pytest
from google.adk.agents import LlmAgent
from google.adk.workflow._errors import DynamicNodeFailError

from adk_eval import EvalCase, run_eval
from adk_eval._errors import (
    CassetteMissError,
    EvalSandboxError,
    EvalToolError,
    ProviderWaitError,
    ScriptExhaustedError,
)
from adk_eval._quiet import quiet_adk_logs
from adk_eval.testing import ScriptedLlm

NODE_RUNNER = "google_adk.google.adk.workflow._node_runner"
RUNNERS = "google_adk.google.adk.runners"

STOPS = [
    CassetteMissError("cassette miss: case `adds`, role agent, call 1: ..."),
    EvalToolError("refund", {"order": "A1"}),
    ProviderWaitError("model m: waited 5.0 s for the provider's quota and gave up"),
    EvalSandboxError("sandbox: process `true` started (refused: strict sandbox)"),
    ScriptExhaustedError("the script has no step #2"),
]


def raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:
        return caught


def wrapped(error: BaseException) -> BaseException:
    """`error` as ADK's root node reports it: a DynamicNodeFailError raised while handling it."""
    inner = raised(error)
    try:
        try:
            raise inner
        except BaseException:
            raise DynamicNodeFailError(  # noqa: B904 (ADK raises it so: during, not from)
                message="Dynamic node a failed", error=inner, error_node_path="a"
            )
    except DynamicNodeFailError as outer:
        return outer


def logged(caplog: pytest.LogCaptureFixture, error: BaseException) -> list[str]:
    """What ADK's node runner and runner log of `error` (as they do: with its traceback)."""
    quiet_adk_logs()
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        logging.getLogger(NODE_RUNNER).error("Node execution failed", exc_info=raised(error))
        logging.getLogger(RUNNERS).error("Root node a failed.", exc_info=wrapped(error))
    return [record.getMessage() for record in caplog.records]


@pytest.mark.parametrize("stop", STOPS, ids=lambda stop: type(stop).__name__)
def test_adk_logs_no_expected_stop_of_the_harness_even_unmarked(caplog, stop):
    assert logged(caplog, stop) == []


@pytest.mark.parametrize(
    "error", [ValueError("a bug"), RuntimeError("CRM down"), KeyError("k")], ids=repr
)
def test_adk_still_logs_every_other_error_with_its_traceback(caplog, error):
    assert logged(caplog, error) == ["Node execution failed", "Root node a failed."]


def test_an_error_the_users_code_raises_while_handling_a_stop_is_still_logged(caplog):
    def handler() -> None:
        try:
            raise EvalToolError("refund", {"order": "A1"})
        except EvalToolError:
            raise RuntimeError("my handler broke")  # noqa: B904

    with pytest.raises(RuntimeError) as broke:
        handler()
    assert logged(caplog, broke.value) == ["Node execution failed", "Root node a failed."]


async def test_a_real_run_keeps_adks_log_of_a_bug_in_the_agents_own_callback(caplog):
    def broken(callback_context, llm_request):
        raise ValueError("a bug in the callback")

    agent = LlmAgent(name="a", model=ScriptedLlm(["hi"]), before_model_callback=broken)
    with caplog.at_level(logging.WARNING):
        result = await run_eval(EvalCase(name="cb", agent=agent, first_message="hi"))
    assert (result.status, result.error.type) == ("error", "ValueError")
    kept = [r for r in caplog.records if r.name.startswith("google_adk") and r.exc_info]
    assert kept, "ADK's traceback of a bug in the user's code is what they need to fix it"
