"""``adk-eval run``'s gates one at a time: ``--fail-under``, ``--fail-on``, ``--max-tokens``.

An error never passes a gate unless ``--allow-errors`` says so; a suite budget spent stops
the suite, which is then not ok. (How the gates combine is pinned in test_gates.py.)
"""

from __future__ import annotations

from .run_support import MIXED, ONLY_GOOD, invoke


def test_fail_under_accepts_a_pass_rate(write_evals):
    root = write_evals({"mixed_eval.py": MIXED})
    assert invoke("run", str(root), "--fail-under", "0.5", "--no-store").exit_code == 0
    low = invoke("run", str(root), "--fail-under", "0.9", "--no-store")
    assert low.exit_code == 1
    assert "pass rate 50% (required 90%)" in low.output


BROKEN = """
def refund(order: str) -> dict:
    '''Refunds an order (a real side effect).'''
    raise AssertionError("the real refund ran")

def lookup(key: str) -> dict:
    '''Looks an order up.'''
    return {}

def crash(args, ctx):
    raise RuntimeError("mock bug")

agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
greets = [EvalCase(name=f"greets-{i}", agent=agent, first_message="hi") for i in range(4)]
unmocked = EvalCase(name="unmocked", first_message="refund A1", agent=LlmAgent(
    name="r", tools=[refund], model=ScriptedLlm([tool_call("refund", {"order": "A1"}), "ok"])))
crashed = EvalCase(name="crashed", first_message="look", tool_mocks={"lookup": ToolMock(crash)},
    agent=LlmAgent(name="l", tools=[lookup],
                   model=ScriptedLlm([tool_call("lookup", {"key": "A1"}), "ok"])))
"""


def test_fail_under_never_lets_an_error_through_unless_told(write_evals):
    root = write_evals({"broken_eval.py": "from adk_eval import ToolMock\n" + BROKEN})
    gated = invoke("run", str(root), "--fail-under", "0.3", "--no-store")
    assert gated.exit_code == 1, gated.output
    assert "pass rate 67% (required 30%)" in gated.output
    assert "2 run(s) ended in error" in gated.output
    allowed = invoke("run", str(root), "--fail-under", "0.3", "--allow-errors", "--no-store")
    assert allowed.exit_code == 0, allowed.output


def test_max_tokens_stops_the_suite_and_says_what_did_not_run(write_evals):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    result = invoke(
        "run", str(root), "--repeat", "5", "--concurrency", "1", "--max-tokens", "1", "--no-store"
    )
    assert result.exit_code == 1, result.output  # runs not run: the suite is not ok
    assert "stopped: the suite's budget was spent (max_tokens: " in result.output
    assert "not run: greets" in result.output
    assert "tokens, cost unknown (no price for gemini-scripted)" in result.output


UNMOCKED = """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm, tool_call


def refund(order: str) -> dict:
    \"\"\"Refunds an order.\"\"\"
    return {"refunded": order}


broken = EvalCase(
    name="refunds",
    agent=LlmAgent(name="a", model=ScriptedLlm([tool_call("refund", {"order": "A1"})]),
                   tools=[refund]),
    first_message="refund A1",
)
"""


def test_fail_on_agent_still_fails_on_an_error_unless_errors_are_allowed(write_evals):
    root = write_evals({"broken_eval.py": UNMOCKED})

    everything = invoke("run", str(root), "--no-store")
    assert everything.exit_code == 1
    assert "failures by party: setup 1" in everything.output
    only_agent = invoke("run", str(root), "--no-store", "--fail-on", "agent")
    assert only_agent.exit_code == 1, only_agent.output  # a broken suite never passes silently
    assert "gate errors: FAILED: 1 run(s) ended in error" in only_agent.output
    assert "gate --fail-on agent: passed: 0 failure(s) count, 1 other(s)" in only_agent.output
    assert "attributed to: setup (confidence 0.95)" in only_agent.output
    allowed = invoke("run", str(root), "--no-store", "--fail-on", "agent", "--allow-errors")
    assert allowed.exit_code == 0, allowed.output
    on_setup = invoke("run", str(root), "--no-store", "--fail-on", "setup", "--allow-errors")
    assert on_setup.exit_code == 1
