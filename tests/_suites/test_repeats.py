"""A failure whose repeats parted from a passing one at a real tool's answer is the set-up's."""

from __future__ import annotations

import itertools

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, run_eval_suite
from adk_eval.metrics import state_metric
from adk_eval.testing import ScriptedLlm, tool_call


def case_with_a_coin(flips) -> EvalCase:
    def flip_coin(tool_context) -> dict:
        """Flips a coin (runs for real; its answer varies)."""
        side = next(flips)
        tool_context.state["side"] = side
        return {"side": side}

    return EvalCase(
        name="coin",
        agent=LlmAgent(
            name="gambler",
            model=ScriptedLlm([tool_call("flip_coin", {}), "flipped"]),
            tools=[flip_coin],
        ),
        first_message="flip",
        tool_mocks={"flip_coin": flip_coin},
        metrics=[state_metric("heads", "session", "side", lambda side: side == "heads")],
    )


async def test_a_failure_caused_by_a_real_tools_randomness_is_not_the_agents():
    suite = await run_eval_suite(
        [case_with_a_coin(itertools.cycle(["heads", "tails"]))], repeat=2, max_concurrency=1
    )

    failed = next(r for r in suite.results if not r.passed)
    assert failed.attribution.party == "setup", failed.attribution
    assert "parted at a tool that runs for real" in failed.attribution.evidence
    assert "`flip_coin` {} answered" in failed.attribution.evidence


async def test_a_failure_the_agent_chose_stays_the_agents():
    openings = itertools.count()

    def choose(request) -> object:  # calls the tool in its first run, not in its second
        if request.contents[-1].parts[0].function_response is not None:
            return "flipped"
        return tool_call("flip_coin", {}) if next(openings) == 0 else "no need to flip"

    case = case_with_a_coin(itertools.repeat("heads"))
    case.agent.model = ScriptedLlm(responder=choose)
    suite = await run_eval_suite([case], repeat=2, max_concurrency=1)

    assert [r.passed for r in suite.results] == [True, False]
    assert suite.results[1].attribution.party == "agent", suite.results[1].attribution
