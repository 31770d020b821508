"""Advisory judges: a judge declared advisory_until_calibrated cannot fail a run until people
have calibrated it (enough labels, enough agreement), read from the runs database by `run`."""

from __future__ import annotations

import json

from click.testing import CliRunner
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, run_eval
from adk_eval._cli._main import main
from adk_eval.metrics import MetricResult, llm_judge
from adk_eval.metrics._judge import CALIBRATION_ENV
from adk_eval.reporting._reviews import add_review
from adk_eval.reporting._store import RunStore
from adk_eval.testing import ScriptedLlm

FAIL = json.dumps({"passed": False, "score": 0.0, "reasoning": "curt"})


def judged_case(**kwargs) -> EvalCase:
    judge = llm_judge(
        "polite", "Was it polite?", model=ScriptedLlm([FAIL], model="judge-1"), **kwargs
    )
    return EvalCase(
        name="greets",
        agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
        first_message="hi",
        metrics=[judge],
    )


async def test_an_uncalibrated_advisory_judge_is_shown_but_cannot_fail_the_run(monkeypatch):
    monkeypatch.delenv(CALIBRATION_ENV, raising=False)

    result = await run_eval(judged_case(advisory_until_calibrated=True))

    assert result.status == "passed", result.explain()
    polite = result.metrics["polite"]
    assert not polite.passed
    assert polite.advisory
    assert "[FAIL (advisory)] polite" in result.explain()
    assert (
        "is not calibrated (no labels; it needs kappa >= 0.6 on >= 20 labels)"
        in (polite.evidence[-1])
    )
    plain = await run_eval(judged_case())
    assert plain.status == "failed"  # a judge not declared advisory fails as before


async def test_a_calibrated_judge_counts(monkeypatch):
    identity = judged_case().metrics[0].identity()
    row = ["polite", identity["model"], identity["prompt_hash"], 25, 0.8]
    monkeypatch.setenv(CALIBRATION_ENV, json.dumps([row]))

    result = await run_eval(judged_case(advisory_until_calibrated=True))

    assert result.status == "failed"
    assert not result.metrics["polite"].advisory
    row[3] = 5  # too few labels, however good
    monkeypatch.setenv(CALIBRATION_ENV, json.dumps([row]))
    assert (await run_eval(judged_case(advisory_until_calibrated=True))).status == "passed"


EVAL_FILE = """
import itertools, json
from google.adk.agents import LlmAgent
from adk_eval import EvalCase
from adk_eval.metrics import llm_judge
from adk_eval.testing import ScriptedLlm

_flip = itertools.count()


def _verdict(request):  # the judge alternates: pass, fail, pass, ...
    passed = next(_flip) % 2 == 0
    return json.dumps({"passed": passed, "score": float(passed), "reasoning": "r"})


greets = EvalCase(
    name="greets",
    agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
    first_message="hi",
    metrics=[llm_judge("polite", "Was it polite?", model=ScriptedLlm(responder=_verdict,
             model="judge-1"), advisory_until_calibrated=True, min_labels=4)],
)
"""


def test_run_reads_the_labels_in_its_runs_database(tmp_path, monkeypatch, isolated_imports):
    monkeypatch.setenv(CALIBRATION_ENV, "[]")  # restored after: the command sets it
    evals = tmp_path / "judged_eval.py"
    evals.write_text(EVAL_FILE)
    db = tmp_path / "runs.db"
    args = ["run", str(evals), "--repeat", "4", "--concurrency", "1", "--db", str(db)]

    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output  # advisory: its two failures do not count
    for attempt in range(4):  # people agree with every verdict: kappa 1 on 4 labels
        add_review(RunStore(db), 1, "greets", attempt, "polite", "agree")

    second = CliRunner().invoke(main, args)
    assert second.exit_code == 1, second.output  # calibrated now: its failures count
    assert "advisory" not in second.output


def flipping(*passed: bool) -> ScriptedLlm:
    replies = iter([json.dumps({"passed": p, "score": float(p), "reasoning": "r"}) for p in passed])
    return ScriptedLlm(responder=lambda request: next(replies), model="judge-1")


async def test_labels_calibrate_each_configuration_of_a_judge_apart(tmp_path, monkeypatch):
    """One metric name and model, two `sees`: two judges in the labels and in the advisory check."""
    from adk_eval import run_eval_suite
    from adk_eval._cli._finish import Reports
    from adk_eval._cli._running import _share_calibration
    from adk_eval.reporting import suite_report
    from adk_eval.reporting._reviews import judge_calibration, reviews

    monkeypatch.setenv(CALIBRATION_ENV, "[]")  # restored after: _share_calibration sets it
    store = RunStore(tmp_path / "runs.db")
    settings = [{}, {"sees": ("state", "tool_calls")}]
    for run_id, sees in enumerate(settings, start=1):
        judge = llm_judge("polite", "Was it polite?", model=flipping(True, False), **sees)
        cases = [
            EvalCase(
                name=f"case-{i}",
                agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
                first_message="hi",
                metrics=[judge],
            )
            for i in range(2)
        ]
        store.append(suite_report(await run_eval_suite(cases, max_concurrency=1)), command="run")
        for case in ("case-0", "case-1"):  # people agree with the first, not with the second
            add_review(store, run_id, case, 0, "polite", "agree" if run_id == 1 else "disagree")

    found = {j.prompt_hash: j for j in judge_calibration(reviews(store))}
    default, seeing = (
        llm_judge(
            "polite",
            "Was it polite?",
            model=flipping(),
            advisory_until_calibrated=True,
            min_labels=2,
            **sees,
        )
        for sees in settings
    )
    assert set(found) == {default.identity()["prompt_hash"], seeing.identity()["prompt_hash"]}
    assert (
        found[default.identity()["prompt_hash"]].raw,
        found[default.identity()["prompt_hash"]].labels,
    ) == (1.0, 2)
    assert found[seeing.identity()["prompt_hash"]].raw == 0.0

    _share_calibration(Reports(db=tmp_path / "runs.db"))
    assert default._advise(MetricResult(passed=False)).advisory is False  # kappa 1 on 2 labels
    assert seeing._advise(MetricResult(passed=False)).advisory is True  # kappa -1: not its labels
