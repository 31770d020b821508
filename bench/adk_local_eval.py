"""Scores an EvalSet with ADK's `LocalEvalService` at a chosen parallelism.

`adk eval` has no option for its parallelism (its `InferenceConfig` and
`EvaluateConfig` keep ADK's default of 4). This driver does what `adk eval`
does for an EvalSet file (same service, same default criteria: tool
trajectory and response match) with both parallelisms set. It runs in the
``google-adk[eval]`` environment (``.venv-adkeval``), not in adk-eval's:

    .venv-adkeval/bin/python bench/adk_local_eval.py bench/adk_agent SET.evalset.json \
        --parallelism 32

Prints how many cases passed and failed; exits 1 if any case failed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path

from google.adk.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
)
from google.adk.evaluation.eval_config import (
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from google.adk.evaluation.evaluator import EvalStatus
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_service import LocalEvalService
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file


async def score(agent_dir: Path, eval_set_path: Path, parallelism: int) -> tuple[int, int]:
    """Runs inference and evaluation of every case; returns (passed, failed)."""
    sys.path.insert(0, str(agent_dir.parent))
    root_agent = importlib.import_module(f"{agent_dir.name}.agent").root_agent
    app_name = agent_dir.name
    eval_set = load_eval_set_from_file(str(eval_set_path), str(eval_set_path))
    manager = InMemoryEvalSetsManager()
    manager.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
    for case in eval_set.eval_cases:
        manager.add_eval_case(app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case)
    service = LocalEvalService(root_agent=root_agent, eval_sets_manager=manager)
    inference = InferenceRequest(
        app_name=app_name,
        eval_set_id=eval_set.eval_set_id,
        inference_config=InferenceConfig(parallelism=parallelism),
    )
    inferences = [result async for result in service.perform_inference(inference)]
    metrics = get_eval_metrics_from_config(get_evaluation_criteria_or_default(None))
    evaluate = EvaluateRequest(
        inference_results=inferences,
        evaluate_config=EvaluateConfig(eval_metrics=metrics, parallelism=parallelism),
    )
    results = [result async for result in service.evaluate(evaluate)]
    passed = sum(1 for result in results if result.final_eval_status == EvalStatus.PASSED)
    return passed, len(results) - passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agent_dir", type=Path)
    parser.add_argument("eval_set", type=Path)
    parser.add_argument("--parallelism", type=int, default=4)
    args = parser.parse_args()
    passed, failed = asyncio.run(score(args.agent_dir.resolve(), args.eval_set, args.parallelism))
    print(f"LocalEvalService parallelism {args.parallelism}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
