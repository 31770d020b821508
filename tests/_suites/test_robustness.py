"""Robustness under faults: suite-wide seeded faults, and pass rates compared without and with."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval import EvalCase, EvalSetupError, InProcess, SuitePlan, ToolMock, run_eval_suite
from adk_eval._cli._robustness import _row
from adk_eval._suites._faulted import with_default_faults
from adk_eval._suites._results import EvalSuiteResult
from adk_eval._suites._robustness import PassRates, Robustness, change_words, robustness
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call


def book(flight: str) -> dict:
    """Books a flight (a real side effect: the cases mock it)."""
    raise AssertionError("the real booking ran")


def booked_mock() -> ToolMock:
    """Books by setting ``session.booked``: a call that fails never sets it."""
    return ToolMock(lambda args, ctx: ctx.state.set("booked", True) or {"booked": True})


BOOKED = state_metric("booked", "session", "booked", lambda value: value is True)


def booking_case(name: str = "books", **mocks) -> EvalCase:
    """A desk agent that books through an `AgentTool` whose agent calls the mocked `book`."""
    booker = LlmAgent(
        name="booker",
        description="Books flights.",
        model=ScriptedLlm([tool_call("book", {"flight": "BA1"}), "Booked."]),
        tools=[book],
    )
    desk = LlmAgent(
        name="desk",
        model=ScriptedLlm([tool_call("booker", {"request": "BA1"}), "Done."]),
        tools=[AgentTool(booker)],
    )
    tool_mocks = mocks or {"book": booked_mock()}
    return EvalCase(
        name=name, agent=desk, first_message="book BA1", tool_mocks=tool_mocks, metrics=[BOOKED]
    )


def greeting_case() -> EvalCase:
    """An agent that uses no tool: faults cannot touch it."""
    agent = LlmAgent(name="greeter", model=ScriptedLlm(["Hello."]))
    replied = event_count_metric("replied", "agent_message", assertion=lambda n: n == 1)
    return EvalCase(name="greets", agent=agent, first_message="hi", metrics=[replied])


async def test_faults_drop_the_pass_rate_of_a_case_that_needs_its_tool_and_no_other():
    found = await robustness([booking_case(), greeting_case()], rate=0.5, repeat=10, seed=7)
    books, greets = found.cases["books"], found.cases["greets"]
    assert (books.passes, books.runs) == (10, 10)
    assert books.faulted_passes < 10
    assert books.drop is not None
    assert books.drop.low > 0
    assert books.drops
    assert (greets.passes, greets.faulted_passes) == (10, 10)
    assert greets.drop is not None
    assert greets.drop.estimate == 0
    assert not greets.drops
    assert found.lower == ["books"]
    assert found.overall.runs == found.overall.faulted_runs == 20
    assert found.clean.seed == found.faulted.seed == found.seed == 7


async def test_the_same_seed_injects_the_same_faults():
    cases = [booking_case(), greeting_case()]
    first = await robustness(cases, rate=0.5, repeat=6, seed=11)
    again = await robustness(cases, rate=0.5, repeat=6, seed=11)
    assert first.to_dict() == again.to_dict()
    assert [r.passed for r in first.faulted.results] == [r.passed for r in again.faulted.results]
    other = await robustness(cases, rate=0.5, repeat=6, seed=12)
    assert [r.passed for r in other.faulted.results] != [r.passed for r in first.faulted.results]


async def test_the_faulted_pass_never_changes_the_users_case():
    case = booking_case()
    mock = case.tool_mocks["book"]
    suite = await run_eval_suite([case], faults=1.0, seed=3)
    assert suite.results[0].passed is False
    assert case.tool_mocks["book"] is mock
    assert mock.faults is None
    assert (await run_eval_suite([case], seed=3)).results[0].passed


def test_a_mock_with_its_own_faults_keeps_them_and_real_tools_get_none():
    own = booked_mock().with_faults(error_rate=0.1)
    real = ToolMock.real(book)
    case = booking_case(book=own)
    assert with_default_faults(case, 0.5) is case  # nothing to add: the case itself
    assert with_default_faults(booking_case(book=real), 0.5).tool_mocks["book"] is real
    assert with_default_faults(booking_case(book=book), 0.5).tool_mocks["book"] is book
    faulted = with_default_faults(booking_case(), 0.5).tool_mocks["book"]
    assert faulted.faults is not None
    assert faulted.faults.error_rate == 0.5


def test_simulated_tools_get_the_faults_too():
    simulated = ToolMock.simulated("A flight booking service.")
    case = booking_case(book=simulated)
    assert with_default_faults(case, 0.3).tool_mocks["book"].faults.error_rate == 0.3
    unmocked = EvalCase(
        name="u",
        agent=LlmAgent(name="a", model=ScriptedLlm(["Hi."])),
        first_message="hi",
        simulate_unmocked=True,
    )
    stand_in = with_default_faults(unmocked, 0.3).simulate_unmocked
    assert isinstance(stand_in, ToolMock)
    assert stand_in.simulator is not None
    assert stand_in.faults.error_rate == 0.3
    assert unmocked.simulate_unmocked is True


async def test_one_case_instead_of_a_list_is_refused_in_one_line():
    with pytest.raises(EvalSetupError, match=r"^robustness takes a list of cases, got the one"):
        await robustness(greeting_case(), rate=0.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("rate", [0, -0.1, 1.5, "0.2", True])
async def test_a_fault_rate_outside_0_to_1_is_refused(rate):
    with pytest.raises(EvalSetupError, match=r"^faults must be .* above 0 and at most 1"):
        await run_eval_suite([greeting_case()], faults=rate)
    with pytest.raises(EvalSetupError, match=r"^rate must be .* above 0 and at most 1"):
        await robustness([greeting_case()], rate=rate)


def test_the_sentence_says_which_cases_dropped_and_the_suites_drop_in_points():
    rates = {"a": PassRates(10, 10, 2, 10), "b": PassRates(10, 10, 10, 10)}
    overall = PassRates(20, 20, 12, 20)
    found = Robustness(0.2, 1, rates, overall, clean=None, faulted=None)  # type: ignore[arg-type]
    assert found.summary() == (
        "under 20% tool faults, 1 of 2 cases passes less often (1 beyond noise); overall "
        "100% [84%, 100%] -> 60% [39%, 78%], a drop of 40 points [16, 61]"
    )
    assert change_words(PassRates(5, 10, 7, 10).drop).startswith("a gain of 20 points [")
    assert PassRates(0, 0, 3, 5).drop is None


def test_a_drop_from_10_of_10_to_4_of_10_matches_newcombes_interval_worked_by_hand():
    # Wilson, 95 % (z = 1.959964, z^2 = 3.841459), n = 10:
    #   10/10: centre (1 + 0.192073) / 1.384146 = 0.861233, half-width
    #          1.959964 * sqrt(0 + 0.009604) / 1.384146 = 0.138766 -> [0.7225, 1.0000]
    #   4/10:  centre 0.592073 / 1.384146 = 0.427753, half-width
    #          1.959964 * sqrt(0.024 + 0.009604) / 1.384146 = 0.259573 -> [0.1682, 0.6873]
    # Newcombe's hybrid score interval (method 10) for the drop 1.0 - 0.4 = 0.6:
    #   low  = 0.6 - sqrt((1.0 - 0.7225)^2 + (0.6873 - 0.4)^2) = 0.6 - 0.3995 = 0.2005
    #   high = 0.6 + sqrt((1.0 - 1.0)^2 + (0.4 - 0.1682)^2)   = 0.6 + 0.2318 = 0.8318
    rates = PassRates(passes=10, runs=10, faulted_passes=4, faulted_runs=10)
    assert (rates.clean.low, rates.clean.high) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert (rates.faulted.low, rates.faulted.high) == pytest.approx((0.1682, 0.6873), abs=1e-4)
    drop = rates.drop
    assert drop is not None
    assert (drop.estimate, drop.low, drop.high) == pytest.approx((0.6, 0.2005, 0.8318), abs=1e-4)
    assert drop.confidence == 0.95
    assert rates.drops  # 0.2005 > 0: beyond noise
    # the terminal's row of the same case
    assert _row(rates) == ("10/10 72%-100%", "4/10 17%-69%", "60 [20, 83]", "beyond noise")


class PassesThePlanOn:
    """An executor of the user's own: it hands the plan to `InProcess` and says nothing else."""

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        return await InProcess().run(plan)


class SaysItAppliesFaults(PassesThePlanOn):
    """The same, declaring that the plan's faults are applied (`InProcess` does apply them)."""

    applies_faults = True


async def test_an_executor_that_does_not_say_it_applies_faults_is_refused_before_any_run():
    started: list[int] = []
    with pytest.raises(EvalSetupError) as refused:
        await robustness(
            [booking_case()],
            rate=1.0,
            repeat=1,
            executor=PassesThePlanOn(),
            on_start=lambda case, attempt: started.append(attempt),
        )
    assert str(refused.value) == (
        "faults need an executor that applies them, and executor `PassesThePlanOn` does not "
        "say it does: its cases would run without faults; pass the plan on to InProcess(), "
        "Workers(n) or Ray(...), which apply `plan.faults`, and set `applies_faults = True` "
        "on `PassesThePlanOn`"
    )
    assert started == []  # refused up front: not after a whole pass without faults
    with pytest.raises(EvalSetupError, match="`PassesThePlanOn` does not say it does"):
        await run_eval_suite([booking_case()], faults=0.5, executor=PassesThePlanOn())
    assert (await run_eval_suite([booking_case()], executor=PassesThePlanOn())).ok  # no faults


async def test_an_executor_that_applies_faults_runs_the_faulted_pass_with_them():
    found = await robustness(
        [booking_case()], rate=1.0, repeat=2, seed=1, executor=SaysItAppliesFaults()
    )
    books = found.cases["books"]
    assert (books.passes, books.faulted_passes) == (2, 0)  # every booking call failed
