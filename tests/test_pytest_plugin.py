"""The pytest plugin, through pytester: opt-in fixture, readable failures, JUnit XML."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

CASES = """
import itertools
import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext
from adk_eval import EvalCase
from adk_eval.metrics import state_metric
from adk_eval.testing import ScriptedLlm, tool_call

def escalate(tool_context: ToolContext) -> dict:
    '''Escalates (safe: state only).'''
    tool_context.state["escalation"] = "999"
    return {}

escalated = state_metric("escalated", "session", "escalation", lambda v: v == "999")

def case(name, model):
    agent = LlmAgent(name="clinician", model=model, tools=[escalate])
    return EvalCase(name=name, agent=agent, first_message="chest pain",
                    tool_mocks={"escalate": escalate}, metrics=[escalated])

good = case("escalates", ScriptedLlm([tool_call("escalate"), "Call 999."]))
bad = case("needs-escalation", ScriptedLlm(["Take a paracetamol."]))
_count = itertools.count()
flaky = case("flaky", ScriptedLlm(responder=lambda r: (
    ("Rest." if next(_count) % 2 else tool_call("escalate"))
    if not any(c.role == "model" for c in r.contents) else "ok")))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(eval_cases_for_plugin=CASES)
    pytester.syspathinsert()
    return pytester


@pytest.mark.slow
def test_pass_fail_and_junit_xml(project):
    project.makepyfile(
        test_checks="""
from eval_cases_for_plugin import bad, good

async def test_good(adk_eval):
    suite = await adk_eval.check(good)
    assert suite.results[0].status == "passed"

async def test_bad(adk_eval):
    await adk_eval.check(bad)
"""
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=report.xml")
    result.assert_outcomes(passed=1, failed=1)

    # a failing eval explains itself: status, failed metric with evidence, last turns
    result.stdout.fnmatch_lines(
        [
            "*EvalCase `needs-escalation`: FAILED after first message only*",
            "*[[]FAIL[]] escalated*",
            "*`session.escalation` is not set in the final state*",
            "*user: chest pain*",
            "*clinician: Take a paracetamol.*",
        ]
    )
    # ... without a traceback through the test's code
    assert "await adk_eval.check(bad)" not in result.stdout.str()

    # results land in pytest's own JUnit XML
    root = ET.parse(project.path / "report.xml").getroot()
    cases = {case.get("name"): case for case in root.iter("testcase")}
    good = {p.get("name"): p.get("value") for p in cases["test_good"].iter("property")}
    assert good["adk_eval.status"] == "passed"
    assert good["adk_eval.metric.escalated"] == "pass"
    assert good["adk_eval.pass_rate"] == "1.000"
    bad = cases["test_bad"]
    assert {p.get("name"): p.get("value") for p in bad.iter("property")}[
        "adk_eval.status"
    ] == "failed"
    assert "[FAIL] escalated" in bad.find("failure").get("message")


@pytest.mark.slow  # a pytest process of its own: make test runs it
def test_repeat_option_and_marker(project):
    project.makepyfile(
        test_repeat="""
import pytest
from eval_cases_for_plugin import flaky, good

async def test_stable(adk_eval):
    suite = await adk_eval.check(good)
    assert len(suite.results) == 3

@pytest.mark.adk_eval(repeat=4)
async def test_flaky(adk_eval):
    await adk_eval.check(flaky)

@pytest.mark.adk_eval(repeat=4, min_pass_rate=0.5)
async def test_flaky_tolerated(adk_eval):
    await adk_eval.check(flaky)
"""
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--adk-eval-repeat=3")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*EvalCase `flaky`: 2/4 runs passed (pass rate 50%, required 100%); flaky*"]
    )


def test_the_plugin_is_inert_without_the_fixture(pytester):
    pytester.makepyfile(
        test_plain="""
import pytest

@pytest.mark.adk_eval(repeat=2)
def test_plain():
    assert True
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers", "--help")
    assert "--adk-eval-repeat" in result.stdout.str()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(passed=1)


@pytest.mark.slow  # a few seconds of processes: make test runs it
def test_the_plugin_works_under_pytest_xdist(project):
    project.makepyfile(
        test_parallel="""
import pytest
from eval_cases_for_plugin import bad, good

@pytest.mark.parametrize("n", range(4))
async def test_good(adk_eval, n):
    await adk_eval.check(good)

async def test_bad(adk_eval):
    await adk_eval.check(bad)
"""
    )
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "xdist", "-n", "2", "--junitxml=report.xml"
    )
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*2 workers*", "*[[]FAIL[]] escalated*"])
    root = ET.parse(project.path / "report.xml").getroot()
    statuses = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}[
            "adk_eval.status"
        ]
        for case in root.iter("testcase")
    }
    assert statuses == {
        "test_good[0]": "passed",
        "test_good[1]": "passed",
        "test_good[2]": "passed",
        "test_good[3]": "passed",
        "test_bad": "failed",
    }


DOCS = Path(__file__).resolve().parents[1] / "docs" / "pytest.md"


def documented_properties() -> dict[str, re.Pattern[str]]:
    """The property names docs/pytest.md lists, as patterns (`<name>`, `[0]` stand for any)."""
    names = set(re.findall(r"`(adk_eval(?:\[\d\])?\.[a-z_.<>]+)`", DOCS.read_text()))
    patterns = {}
    for name in names:
        pattern = re.escape(name).replace(re.escape("<name>"), r"[\w-]+")
        pattern = re.sub(r"\\\[\d\\\]", lambda _: r"\[\d+\]", pattern)
        patterns[name] = re.compile(pattern + "$")
    return patterns


@pytest.mark.slow  # a pytest process of its own: make test runs it
def test_the_documented_set_up_warns_nothing_and_writes_the_documented_properties(pytester):
    """docs/pytest.md's configuration, under ``-W error``; JUnit names against its table."""
    [config] = re.findall(r"```toml\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    pytester.makefile(".toml", pyproject=config)
    pytester.makepyfile(eval_cases_for_plugin=CASES)
    pytester.syspathinsert()
    pytester.makepyfile(
        test_names="""
import pytest
from eval_cases_for_plugin import good

async def test_once(adk_eval):
    await adk_eval.check(good)

@pytest.mark.adk_eval(repeat=2)
async def test_twice(adk_eval):
    await adk_eval.check(good)
"""
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-W",
        "error::DeprecationWarning",
        "-W",
        "error::pytest.PytestWarning",
        "--junitxml=report.xml",
    )
    result.assert_outcomes(passed=2)
    assert "warnings summary" not in result.stdout.str()
    assert "Warning" not in result.stdout.str()

    root = ET.parse(pytester.path / "report.xml").getroot()
    patterns = documented_properties()
    per_run = {name: p for name, p in patterns.items() if "[" in name}
    once = {name: p for name, p in patterns.items() if "[" not in name}
    for case in root.iter("testcase"):
        written = [p.get("name") for p in case.iter("property")]
        assert [n for n in written if not any(p.match(n) for p in patterns.values())] == []
        if case.get("name") == "test_once":
            wanted = once
        else:
            wanted = {**per_run, **{k: once[k] for k in ("adk_eval.pass_rate", "adk_eval.runs")}}
            assert "adk_eval[1].metric.escalated" in written
        assert [name for name, p in wanted.items() if not any(p.match(n) for n in written)] == []


@pytest.mark.slow  # a pytest process of its own: make test runs it
def test_an_expected_failure_is_an_xfail_in_pytest_too_with_its_reason(project):
    project.makepyfile(
        test_known_gap="""
import dataclasses
from eval_cases_for_plugin import bad, good

async def test_known_gap(adk_eval):
    await adk_eval.check(dataclasses.replace(bad, xfail="no script for it yet"))

async def test_fixed_gap(adk_eval):  # marked but passes: xpassed fails, as in the CLI
    await adk_eval.check(dataclasses.replace(good, xfail="was broken"))
"""
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-rxX")

    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["*is expected to fail: no script for it yet*"])


@pytest.mark.slow  # a pytest process of its own: make test runs it
def test_an_expected_failure_passed_none_of_its_runs_and_a_repeated_xpass_fails(project):
    project.makepyfile(
        test_rates="""
import dataclasses
import pytest
from eval_cases_for_plugin import bad, good

async def test_known_gap(adk_eval):
    await adk_eval.check(dataclasses.replace(bad, xfail="no script for it yet"))

@pytest.mark.adk_eval(repeat=2, min_pass_rate=0.5)
async def test_fixed_gap_with_a_rate(adk_eval):  # strict whatever the rate, as in the CLI
    await adk_eval.check(dataclasses.replace(good, xfail="was broken"))
"""
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=report.xml")

    result.assert_outcomes(xfailed=1, failed=1)
    root = ET.parse(project.path / "report.xml").getroot()
    rates = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in root.iter("testcase")
    }
    assert rates["test_known_gap"]["adk_eval.pass_rate"] == "0.000"  # its runs all failed
    assert rates["test_fixed_gap_with_a_rate"]["adk_eval.pass_rate"] == "1.000"


# -- cassettes -------------------------------------------------------------------------------

TAPED = """
import os
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.testing import ScriptedLlm

def answer(request):
    if os.environ.get("NO_MODEL"):
        raise RuntimeError("the model was called")
    return "Call 999."

agent = LlmAgent(name="clinician", model=ScriptedLlm(responder=answer),
                 instruction=os.environ.get("INSTRUCTION", "Be helpful."))
case = EvalCase(name="Chest pain", agent=agent, first_message="chest pain")

async def test_case(adk_eval):
    await adk_eval.check(case)
"""


@pytest.mark.slow  # pytest processes of their own: make test runs it
def test_cassette_options_record_once_then_replay_without_the_model(pytester, monkeypatch):
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(test_taped=TAPED)
    run = ("-p", "no:cacheprovider")

    pytester.runpytest_subprocess(*run, "--adk-eval-record-models", "tapes").assert_outcomes(
        passed=1
    )
    [tape] = (pytester.path / "tapes").rglob("*.json")
    assert tape.name == "attempt-0.json"
    assert "Be helpful." in tape.read_text()

    monkeypatch.setenv("NO_MODEL", "1")
    replay = ("--adk-eval-replay-models", "tapes")
    pytester.runpytest_subprocess(*run, *replay).assert_outcomes(passed=1)

    monkeypatch.setenv("INSTRUCTION", "Be careful.")
    result = pytester.runpytest_subprocess(*run, *replay)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*cassette miss: case `Chest pain`, role agent, call 1: system instruction: *"]
    )
    said = result.stdout.str() + result.stderr.str()
    assert "(re-record with --adk-eval-record-models DIR, or --adk-eval-on-miss call)" in said
    assert "--record-models DIR" not in said.replace("--adk-eval-record-models DIR", "")
    assert "Traceback" not in said  # ADK's log of the miss is not among the captured logs

    monkeypatch.delenv("NO_MODEL")
    on_miss = ("--adk-eval-on-miss", "call")
    pytester.runpytest_subprocess(*run, *replay, *on_miss).assert_outcomes(passed=1)
    assert "Be careful." in tape.read_text()
    monkeypatch.setenv("NO_MODEL", "1")
    pytester.runpytest_subprocess(*run, *replay).assert_outcomes(passed=1)


def test_cassette_options_go_to_the_fixture_over_the_projects_settings_and_no_variable(
    pytester, monkeypatch
):
    monkeypatch.delenv("ADK_EVAL_MODEL_CALLS", raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makefile(".toml", pyproject='[tool.adk-eval.limits]\n"*" = { rpm = 7 }\n')
    (pytester.path / "tapes").mkdir()
    pytester.makepyfile(
        test_settings="""
import os

from adk_eval.models import RateLimit

def test_settings(adk_eval, request):
    settings = adk_eval.model_calls
    assert settings.replay == request.config.invocation_params.dir / "tapes"
    assert (settings.record, settings.on_miss, settings.given_by) == (None, "call", "pytest")
    assert settings.limits == {"*": RateLimit(rpm=7)}  # the project's, kept
    assert "ADK_EVAL_MODEL_CALLS" not in os.environ  # passed, not put in the environment
"""
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--adk-eval-replay-models", "tapes", "--adk-eval-on-miss=call"
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--adk-eval-record-models", "a", "--adk-eval-replay-models", "b"],
            "*record or replay, not both*",
        ),
        (["--adk-eval-on-miss", "call"], "*--adk-eval-on-miss applies to --adk-eval-replay*"),
        (["--adk-eval-replay-models", "none"], "*--adk-eval-replay-models none: no such folder*"),
    ],
)
def test_cassette_options_that_cannot_work_are_usage_errors(
    pytester, monkeypatch, options, message
):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (pytester.path / "b").mkdir()
    result = pytester.runpytest("-p", "no:cacheprovider", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "ADK_EVAL_MODEL_CALLS" not in os.environ


def test_a_module_naming_a_keyed_model_at_import_collects_under_replay_without_a_key(
    pytester, monkeypatch
):
    """Collection under --adk-eval-replay-models follows the replay, as `adk-eval run` imports."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_ENTERPRISE", raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (pytester.path / "tapes").mkdir()
    pytester.makepyfile(
        test_named="""
from adk_eval.models import resolve_model

MODEL = resolve_model("gemini-2.5-flash")  # at import, as an eval module names its model

def test_named():
    assert MODEL.model == "gemini-2.5-flash"
"""
    )
    replayed = pytester.runpytest("-p", "no:cacheprovider", "--adk-eval-replay-models", "tapes")
    replayed.assert_outcomes(passed=1)

    live = pytester.runpytest("-p", "no:cacheprovider")  # no cassette: the key is asked for
    live.assert_outcomes(errors=1)
    live.stdout.fnmatch_lines(["*model 'gemini-2.5-flash' needs a Gemini API key*"])
