"""adk_metric: ADK's own evaluators scoring simulated runs.

ADK's evaluators need google-adk[eval] (ROUGE, pandas, ...), which `make test` installs
in .venv-adkeval: the runs that use them are scripts run with that venv's Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, run_eval
from adk_eval.metrics import adk_metric, adk_metrics_from_config
from adk_eval.testing import ScriptedLlm

from ..goldens.test_adk_eval_cli import adk_cli

SCRIPT = textwrap.dedent(
    """
    import asyncio, json
    from google.adk.agents import LlmAgent
    from google.adk.models.registry import LLMRegistry
    from adk_eval import EvalCase, run_eval
    from adk_eval.goldens import eval_case_from_golden, to_golden
    from adk_eval.metrics import adk_metric, adk_metrics_from_config, trajectory_match
    from adk_eval.testing import ScriptedLlm, tool_call

    def add(a: int, b: int) -> dict:
        \"\"\"Adds.\"\"\"
        return {"result": a + b}

    def agent(steps):
        return LlmAgent(name="calc", model=ScriptedLlm(steps), tools=[add])

    def judge(request):  # ADK's final_response_match_v2 judge, played offline
        text = "".join(p.text or "" for c in request.contents for p in (c.parts or []))
        verdict = "invalid" if "sunny" in text else "valid"
        return json.dumps({"reasoning": "scripted", "is_the_agent_response_valid": verdict})

    class ScriptedJudge(ScriptedLlm):
        def __init__(self, model="scripted-judge", **kwargs):
            super().__init__(responder=judge, model=model)

        @classmethod
        def supported_models(cls):
            return [r"scripted-judge"]

    LLMRegistry.register(ScriptedJudge)  # ADK finds judges by model name
    JUDGE = {"judge_model_options": {"judge_model": "scripted-judge", "num_samples": 1}}

    SAME = [tool_call("add", {"a": 2, "b": 3}), "2 + 3 = 5."]
    RUNS = {
        "same": SAME,
        "other_words": [tool_call("add", {"a": 2, "b": 3}), "The weather is sunny today."],
        "other_args": [tool_call("add", {"a": 3, "b": 2}), "2 + 3 = 5."],
    }
    CONFIG = {"criteria": {"tool_trajectory_avg_score": 1.0,
                           "response_match_score": {"threshold": 0.8}}}

    async def main():
        def case(name, steps, metrics):
            return EvalCase(name=name, agent=agent(steps), first_message="2+3?",
                            tool_mocks={"add": add}, metrics=metrics)

        golden = to_golden(await run_eval(case("golden", SAME, [])))
        out = {}
        for name, steps in RUNS.items():
            metrics = [
                *adk_metrics_from_config(CONFIG, golden=golden),
                adk_metric("tool_trajectory_avg_score", 1.0, name="adk_in_order", golden=golden,
                           criterion={"match_type": "IN_ORDER"}),
                trajectory_match("native", golden, threshold=1.0),
                trajectory_match("native_in_order", golden, mode="in_order", threshold=1.0),
                adk_metric("final_response_match_v2", 0.5, golden=golden, criterion=JUDGE),
            ]
            result = await run_eval(case(name, steps, metrics))
            out[name] = {k: [v.passed, v.score, v.evidence[0]] for k, v in result.metrics.items()}
            replay = await run_eval(
                eval_case_from_golden(golden, agent(steps), tool_mocks={"add": add})
            )
            out[name]["replay"] = {k: [v.passed, v.score] for k, v in replay.metrics.items()}
        print(json.dumps(out))

    asyncio.run(main())
    """
)


@pytest.mark.adk_cli
def test_adks_evaluators_score_simulated_runs_and_agree_with_the_native_trajectory(tmp_path):
    python = adk_cli().parent / "python"
    script = tmp_path / "score.py"
    script.write_text(SCRIPT)
    completed = subprocess.run(
        [str(python), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    scores = json.loads(completed.stdout)

    same, words, args = scores["same"], scores["other_words"], scores["other_args"]
    assert same["response_match_score"][:2] == [True, 1.0]
    assert same["response_match_score"][2] == (
        "ADK response_match_score: passed, score 1.00 (threshold 0.80)"
    )
    assert words["response_match_score"][:2] == [False, 0.0]  # ROUGE-1: no word in common
    for run in (same, words, args):  # ADK's trajectory and ours: the same verdict and score
        assert run["tool_trajectory_avg_score"][:2] == run["native"][:2]
        assert run["adk_in_order"][:2] == run["native_in_order"][:2]
    assert args["tool_trajectory_avg_score"][:2] == [False, 0.0]
    assert same["tool_trajectory_avg_score"][:2] == [True, 1.0]
    assert same["final_response_match_v2"][:2] == [True, 1.0]  # ADK's judge, scripted
    assert words["final_response_match_v2"][:2] == [False, 0.0]
    # a replay scores the golden's responses with ADK's ROUGE, by default
    assert same["replay"]["golden_responses"] == [True, 1.0]
    assert words["replay"]["golden_responses"] == [False, 0.0]
    assert words["replay"]["golden_trajectory"] == [True, 1.0]


async def test_without_googles_eval_extra_the_metric_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.adk.evaluation.metric_evaluator_registry", None)
    monkeypatch.setitem(sys.modules, "google.adk.evaluation.final_response_match_v1", None)
    result = await run_eval(
        EvalCase(
            name="no-extra",
            agent=LlmAgent(name="a", model=ScriptedLlm(["hi"])),
            first_message="hi",
            metrics=[adk_metric("response_match_score", 0.8)],
        )
    )
    metric = result.metrics["response_match_score"]
    assert not metric.passed
    assert metric.error is not None
    assert metric.error.startswith("ADK's evaluators need google-adk[eval]: pip install")


def test_a_test_config_becomes_one_metric_per_criterion(tmp_path):
    path = tmp_path / "test_config.json"
    path.write_text(
        json.dumps(
            {
                "criteria": {
                    "tool_trajectory_avg_score": 1.0,
                    "response_match_score": {"threshold": 0.7},
                    "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {}},
                }
            }
        )
    )
    metrics = adk_metrics_from_config(path)
    assert [(m.name, m.threshold, m.criterion) for m in metrics] == [
        ("tool_trajectory_avg_score", 1.0, None),
        ("response_match_score", 0.7, {}),
        ("final_response_match_v2", 0.5, {"judge_model_options": {}}),
    ]
    with pytest.raises(ValueError, match="needs a `criteria` object"):
        adk_metrics_from_config({"metrics": {}})
    with pytest.raises(ValueError, match="criterion `x` needs a threshold"):
        adk_metrics_from_config({"criteria": {"x": "high"}})


async def test_a_replay_without_googles_eval_extra_leaves_responses_not_applicable(monkeypatch):
    from adk_eval.goldens import eval_case_from_golden, to_golden
    from adk_eval.metrics._adk import MISSING_EXTRA

    monkeypatch.setitem(sys.modules, "google.adk.evaluation.metric_evaluator_registry", None)
    monkeypatch.setitem(sys.modules, "google.adk.evaluation.final_response_match_v1", None)
    agent = LlmAgent(name="a", model=ScriptedLlm(["hi", "hi"]))
    golden = to_golden(await run_eval(EvalCase(name="g", agent=agent, first_message="yo")))
    replay = await run_eval(eval_case_from_golden(golden, agent))
    responses = replay.metrics["golden_responses"]
    assert responses.verdict == "n/a"
    assert responses.evidence == [MISSING_EXTRA]
    assert replay.status == "passed"  # the metrics that apply decide


AGREEMENT_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, warnings
    from google.adk.agents import LlmAgent
    from google.adk.models.registry import LLMRegistry
    from adk_eval import EvalCase, run_eval
    from adk_eval.goldens import to_golden
    from adk_eval.metrics import adk_metric
    from adk_eval.metrics._invocations import invocations
    from adk_eval.testing import ScriptedLlm, tool_call

    def add(a: int, b: int) -> dict:
        \"\"\"Adds.\"\"\"
        return {"result": a + b}

    def judge(request):
        text = "".join(p.text or "" for c in request.contents for p in (c.parts or []))
        verdict = "invalid" if "rain" in text else "valid"
        return json.dumps({"reasoning": "scripted", "is_the_agent_response_valid": verdict})

    class ScriptedJudge(ScriptedLlm):
        def __init__(self, model="scripted-judge", **kwargs):
            super().__init__(responder=judge, model=model)

        @classmethod
        def supported_models(cls):
            return [r"scripted-judge"]

    LLMRegistry.register(ScriptedJudge)
    JUDGE = {"judge_model_options": {"judge_model": "scripted-judge", "num_samples": 1}}
    CRITERIA = {  # name -> (ADK metric, threshold, criterion)
        "rouge": ("response_match_score", 0.5, None),
        "rouge_config": ("response_match_score", 0.9, {}),
        "exact": ("tool_trajectory_avg_score", 1.0, None),
        "in_order": ("tool_trajectory_avg_score", 1.0, {"match_type": "IN_ORDER"}),
        "any_order": ("tool_trajectory_avg_score", 0.5, {"match_type": "ANY_ORDER"}),
        "judge": ("final_response_match_v2", 0.5, JUDGE),
    }
    GOLDEN = [tool_call("add", {"a": 2, "b": 3}), tool_call("add", {"a": 1, "b": 1}),
              "Two plus three makes five, and one plus one makes two."]
    RUNS = {
        "same": GOLDEN,
        "some_words": [tool_call("add", {"a": 1, "b": 1}), tool_call("add", {"a": 2, "b": 3}),
                       "Two plus three is five; one and one make two, it seems."],
        "rain": [tool_call("add", {"a": 2, "b": 3}), "Expect rain in the afternoon."],
    }

    def case(name, steps, metrics):
        agent = LlmAgent(name="calc", model=ScriptedLlm(steps), tools=[add])
        return EvalCase(name=name, agent=agent, first_message="2+3 and 1+1?",
                        tool_mocks={"add": add}, metrics=metrics)

    async def main():
        golden = to_golden(await run_eval(case("golden", GOLDEN, [])))
        expected = list(golden.conversation)
        ours, actuals = {}, {}
        for run, steps in RUNS.items():
            metrics = [adk_metric(m, t, name=n, criterion=c, golden=golden)
                       for n, (m, t, c) in CRITERIA.items()]
            result = await run_eval(case(run, steps, metrics))
            ours[run] = {n: [r.passed, r.score] for n, r in result.metrics.items()}
            actuals[run] = invocations(result.events)
        loaded = {m: m in sys.modules for m in (
            "google.adk.evaluation.metric_evaluator_registry", "vertexai",
            "google.adk.evaluation.response_evaluator", "rouge_score")}
        # ADK's own path, as `adk eval` takes it: the registry's evaluator on the same invocations.
        from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
        from google.adk.evaluation.metric_evaluator_registry import (
            DEFAULT_METRIC_EVALUATOR_REGISTRY as REGISTRY,
        )
        adks = {}
        for run in RUNS:
            adks[run] = {}
            for n, (m, t, c) in CRITERIA.items():
                entry = t if c is None else {"threshold": t, **c}
                config = EvalConfig(criteria={m: entry})
                (metric,) = [x for x in get_eval_metrics_from_config(config) if x.metric_name == m]
                evaluation = REGISTRY.get_evaluator(metric).evaluate_invocations(
                    actuals[run], expected, None)
                if asyncio.iscoroutine(evaluation):
                    evaluation = await evaluation
                adks[run][n] = [evaluation.overall_eval_status.name == "PASSED",
                                evaluation.overall_score]
        print(json.dumps({"ours": ours, "adk": adks, "loaded": loaded}))

    warnings.simplefilter("ignore")
    asyncio.run(main())
    """
)


@pytest.fixture(scope="module")
def agreement(tmp_path_factory):
    """Our scores of three runs, then ADK's registry path on the same invocations."""
    python = adk_cli().parent / "python"
    script = tmp_path_factory.mktemp("agreement") / "agree.py"
    script.write_text(AGREEMENT_SCRIPT)
    completed = subprocess.run(
        [str(python), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.mark.adk_cli
def test_prebuilt_evaluators_built_directly_score_what_adks_registry_scores(agreement):
    assert agreement["ours"] == agreement["adk"]
    scores = {run: {n: s for n, (_, s) in m.items()} for run, m in agreement["ours"].items()}
    assert scores["same"] == dict.fromkeys(scores["same"], 1.0)
    assert 0.3 < scores["some_words"]["rouge"] < 0.9  # ROUGE-1 with part of the words
    assert scores["some_words"]["exact"] == 0.0
    assert scores["some_words"]["any_order"] == 1.0
    assert scores["rain"]["judge"] == 0.0


@pytest.mark.adk_cli
def test_a_rouge_case_imports_neither_adks_registry_nor_vertex_ai(agreement):
    assert agreement["loaded"] == {
        "google.adk.evaluation.metric_evaluator_registry": False,
        "vertexai": False,
        "google.adk.evaluation.response_evaluator": False,
        "rouge_score": True,  # ADK's ROUGE did run
    }


def test_an_evaluator_holding_only_its_configuration_is_built_once_per_configuration():
    from adk_eval.metrics._adk import _evaluator

    in_order = _evaluator("tool_trajectory_avg_score", 1.0, {"match_type": "IN_ORDER"})
    assert type(in_order).__name__ == "TrajectoryEvaluator"
    assert _evaluator("tool_trajectory_avg_score", 1.0, {"match_type": "IN_ORDER"}) is in_order
    assert _evaluator("tool_trajectory_avg_score", 0.5, {"match_type": "IN_ORDER"}) is not in_order
    assert _evaluator("tool_trajectory_avg_score", 1.0, None) is not in_order
