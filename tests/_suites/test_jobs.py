"""Jobs: case references, time limits, and one run counted as a suite counts it."""

from __future__ import annotations

import dataclasses

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, TerminateWhen, ToolMock
from adk_eval._suites._jobs import CaseRef, case_refs, run_job, with_max_duration
from adk_eval.models._gateway._gate import Gateway
from adk_eval.testing import ScriptedLlm

CASE = EvalCase(
    name="bound", agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])), first_message="hi"
)


def test_a_case_is_found_by_the_module_that_binds_it():
    assert case_refs([CASE]) == [CaseRef(__name__, "bound")]


def test_max_duration_caps_only_longer_limits():
    capped = with_max_duration(CASE, 5)
    assert capped.terminate_when.max_duration == 5
    short = dataclasses.replace(CASE, terminate_when=TerminateWhen(max_duration=2))
    assert with_max_duration(short, 5) is short
    assert with_max_duration(CASE, None) is CASE


async def test_a_setup_mistake_is_an_error_result_with_the_cases_description():
    broken = dataclasses.replace(
        CASE, name="broken", description="why", tool_mocks={"nope": ToolMock.returning({})}
    )
    result = await run_job(broken, 2, 7, Gateway.alone())
    assert (result.status, result.error.phase, result.attempt) == ("error", "setup", 2)
    assert result.description == "why"
    assert "`nope`" in result.error.message


async def test_a_run_gets_the_seed_derived_from_the_suites_and_keeps_its_attempt():
    first = await run_job(CASE, 0, 7, Gateway.alone())
    again = await run_job(CASE, 0, 7, Gateway.alone())
    other = await run_job(CASE, 1, 7, Gateway.alone())
    assert first.seed == again.seed != other.seed
    assert (first.attempt, other.attempt) == (0, 1)
