"""Every CI gate decides alone and any that fails fails the command, through the real CLI.

One suite of three steady cases and a subject case, whose run fails a metric (the
agent's failure), calls an unmocked tool or a mock that raises (errors, the set-up's),
fails as expected (xfailed) or passes although marked xfail (xpassed). Every pair of
gates of `adk-eval run` (`--fail-under`, `--fail-on`, `--max-cost`/`--max-tokens`,
`--allow-errors`), and each with `adk-eval compare --fail-on-regression`, must give the
exit code of the gates that fail, and name them.
"""

from __future__ import annotations

import itertools
import shutil
import sys
from typing import NamedTuple

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

COMMON = '''
from google.adk.agents import LlmAgent
from adk_eval import EvalCase, ToolMock
from adk_eval.metrics import state_metric
from adk_eval.testing import ScriptedLlm, tool_call

PRICED = "gemini-2.5-flash"  # priced in litellm's table, so --max-cost can be spent


def refund(order: str) -> dict:
    """Refunds an order (a real side effect)."""
    raise AssertionError("the real refund ran")


def lookup(key: str) -> dict:
    """Looks an order up."""
    return {}


def crash(args, ctx):
    raise RuntimeError("CRM down")


escalated = state_metric("escalated", "session", "escalation", lambda v: v == "999")


def says(name, *script):
    return LlmAgent(name=name, model=ScriptedLlm(list(script), model=PRICED))


def calls(name, tool, args):
    script = ScriptedLlm([tool_call(tool.__name__, args), "ok"])
    return LlmAgent(name=name, tools=[tool], model=script)


def subject(kind):
    """The case named `subject` whose run ends the way `kind` says."""
    if kind == "metricfail":
        return EvalCase(name="subject", agent=says("a", "Hi."), first_message="help",
                        metrics=[escalated])
    if kind == "unmocked":
        return EvalCase(name="subject", agent=calls("r", refund, {"order": "A1"}),
                        first_message="refund A1")
    if kind == "mockraises":
        return EvalCase(name="subject", agent=calls("l", lookup, {"key": "A1"}),
                        first_message="look", tool_mocks={"lookup": ToolMock(crash)})
    if kind == "knowngap":
        return EvalCase(name="subject", agent=says("a", "Hi."), first_message="help",
                        metrics=[escalated], xfail="no escalation yet")
    if kind == "fixedgap":
        return EvalCase(name="subject", agent=says("a", "Hi."), first_message="hi",
                        xfail="was broken")
    return EvalCase(name="subject", agent=says("a", "Hi."), first_message="hi")


def cases(kind):
    steady = [EvalCase(name=f"steady{i}", agent=says("s", "Hi."), first_message="hi")
              for i in (1, 2, 3)]
    return [*steady, subject(kind)]
'''

KINDS = ("metricfail", "unmocked", "mockraises", "knowngap")
"""The subject's run: a failed run (the agent's), two errors (the set-up's), an xfailed run."""

ERRORS = {"unmocked", "mockraises"}
NOT_OK = {"metricfail", *ERRORS}


class Gate(NamedTuple):
    """A gate option and what the model of the gates says of it."""

    args: tuple[str, ...]
    name: str | None = None  # as the gate lines name it (None: no gate line of its own)
    fails: frozenset[str] = frozenset()  # the subject kinds it fails on
    verdict: bool = False  # replaces the default gate (every run ok)
    spends: bool = False  # a budget that stops the suite after its first run


GATES = {
    "rate-0.7": Gate(("--fail-under", "0.7"), "--fail-under 0.7", verdict=True),  # 3/4 = 75%
    "rate-0.8": Gate(("--fail-under", "0.8"), "--fail-under 0.8", frozenset(NOT_OK), True),
    "on-agent": Gate(("--fail-on", "agent"), "--fail-on agent", frozenset({"metricfail"}), True),
    "on-setup": Gate(("--fail-on", "setup"), "--fail-on setup", frozenset(ERRORS), True),
    "tokens-kept": Gate(("--max-tokens", "1000000")),
    "cost-spent": Gate(("--max-cost", "0.0000001", "--concurrency", "1"), spends=True),
    "allow-errors": Gate(("--allow-errors",)),
}
FAMILIES = {
    "rate-0.7": "rate",
    "rate-0.8": "rate",
    "on-agent": "party",
    "on-setup": "party",
    "tokens-kept": "budget",
    "cost-spent": "budget",
    "allow-errors": "errors",
}
PAIRS = [
    pair for pair in itertools.combinations(GATES, 2) if FAMILIES[pair[0]] != FAMILIES[pair[1]]
]


def failed_gates(chosen: list[Gate], kind: str) -> set[str]:
    """What the gate rules (docs/cli.md) say fails: each gate alone, none excusing another."""
    if any(gate.spends for gate in chosen):
        return {"finished"}  # only a steady case ran: no other gate sees a failure
    failed = {"errors"} if kind in ERRORS and GATES["allow-errors"] not in chosen else set()
    verdicts = [gate for gate in chosen if gate.verdict]
    if not verdicts and kind in NOT_OK:
        failed.add("every run")
    return failed | {gate.name for gate in verdicts if kind in gate.fails and gate.name}


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    """A folder of eval files, one per subject kind (and a passing baseline), shared."""
    folder = tmp_path_factory.mktemp("gates")
    (folder / "gate_cases.py").write_text(COMMON)
    for kind in (*KINDS, "fixedgap", "baseline"):
        (folder / f"gates_{kind}_eval.py").write_text(
            f"from gate_cases import cases\n\nCASES = cases({kind!r})\n"
        )
    path = list(sys.path)
    yield folder
    sys.path[:] = path
    for name in [n for n in sys.modules if n == "gate_cases" or n.startswith("gates_")]:
        del sys.modules[name]


def run(suites, kind: str, *args: str, db=None):
    storing = ["--db", str(db)] if db else ["--no-store"]
    return CliRunner().invoke(
        main,
        ["run", str(suites / f"gates_{kind}_eval.py"), *storing, *args],
        catch_exceptions=False,
    )


def check(result, chosen: list[Gate], kind: str) -> None:
    failed = failed_gates(chosen, kind)
    assert result.exit_code == (1 if failed else 0), result.output
    if any(gate.verdict or gate.args == ("--allow-errors",) for gate in chosen):
        said = "exit 1: failed gate(s) " if failed else "exit 0: every gate passed"
        last = result.output.rstrip().splitlines()[-1]
        assert last.startswith(said), result.output
        assert set(filter(None, last.removeprefix(said).split(", "))) == failed, result.output
        for name in failed:
            assert f"gate {name}: FAILED: " in result.output


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_every_pair_of_gates_fails_when_either_fails(suites, pair, kind):
    chosen = [GATES[name] for name in pair]
    result = run(suites, kind, *itertools.chain.from_iterable(gate.args for gate in chosen))
    check(result, chosen, kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [None, *GATES])
def test_each_gate_alone(suites, name, kind):
    chosen = [GATES[name]] if name else []
    check(run(suites, kind, *(chosen[0].args if chosen else ())), chosen, kind)


@pytest.mark.parametrize("name", [None, "rate-0.7", "on-agent", "allow-errors"])
def test_a_run_of_an_xfail_case_that_passes_fails_every_gate(suites, name):
    chosen = [GATES[name]] if name else []
    result = run(suites, "fixedgap", *(chosen[0].args if chosen else ()))

    assert result.exit_code == 1, result.output
    if chosen:
        assert "gate xfail: FAILED: 1 run(s) of cases marked xfail passed" in result.output
        assert "remove the xfail marker of subject" in result.output
        assert result.output.rstrip().splitlines()[-1] == "exit 1: failed gate(s) xfail"


@pytest.fixture(scope="module")
def baseline(suites, tmp_path_factory):
    """A runs database holding one run of the passing suite, 5 runs a case."""
    db = tmp_path_factory.mktemp("baseline") / "runs.db"
    assert run(suites, "baseline", "--repeat", "5", db=db).exit_code == 0
    return db


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["rate-0.7", "on-setup", "tokens-kept"])
def test_fail_on_regression_decides_alone_beside_each_run_gate(
    suites, baseline, tmp_path, name, kind
):
    db = tmp_path / "runs.db"
    shutil.copy(baseline, db)
    gate = GATES[name]

    after = run(suites, kind, "--repeat", "5", *gate.args, db=db)
    compared = CliRunner().invoke(main, ["compare", "--db", str(db), "--fail-on-regression"])

    assert after.exit_code == (1 if failed_gates([gate], kind) else 0), after.output
    if kind == "knowngap":  # expected failures are left out: nothing to test, nothing fails
        assert compared.exit_code == 0, compared.output
        assert "not tested (xfail)" in compared.output
        assert "5/5 -> 0/0 +5 xfailed" in compared.output
    else:  # 5/5 -> 0/5 among 4 cases: decided, whatever the run's own gates said
        assert compared.exit_code == 1, compared.output
        assert "regressed" in compared.output
        assert "5/5 -> 0/5" in compared.output
