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
    agent = LlmAgent(name="a", model=ScriptedLlm(["hi", "hi"]))
    golden = to_golden(await run_eval(EvalCase(name="g", agent=agent, first_message="yo")))
    replay = await run_eval(eval_case_from_golden(golden, agent))
    responses = replay.metrics["golden_responses"]
    assert responses.verdict == "n/a"
    assert responses.evidence == [MISSING_EXTRA]
    assert replay.status == "passed"  # the metrics that apply decide
