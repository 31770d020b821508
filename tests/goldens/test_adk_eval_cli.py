"""A golden exported by this project passes the real `adk eval` CLI (and a wrong one fails).

`adk eval` needs ``google-adk[eval]``, whose dependencies pull an older litellm,
so it lives in its own virtual environment: ``make test`` builds
``.venv-adkeval`` and points ``ADK_EVAL_ADK_CLI`` at its ``adk``. Without it the
test is skipped locally; under ``make test`` (``ADK_EVAL_REQUIRE_ADK_CLI=1``) a
missing CLI is a failure, never a skip.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import anyio
import pytest

from adk_eval import EvalCase, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.goldens import append_golden, to_golden
from examples.calculator.agent import add, multiply, root_agent

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.adk_cli


def adk_cli() -> Path:
    configured = os.environ.get("ADK_EVAL_ADK_CLI")
    path = Path(configured) if configured else ROOT / ".venv-adkeval" / "bin" / "adk"
    if path.exists():
        return path
    message = f"the `adk` CLI with google-adk[eval] is not at {path} (make test builds it)"
    if os.environ.get("ADK_EVAL_REQUIRE_ADK_CLI") == "1":
        pytest.fail(message)
    pytest.skip(message)


async def test_exported_golden_passes_adk_eval_and_a_tampered_one_fails(tmp_path):
    cli = adk_cli()
    result = await run_eval(
        EvalCase(
            name="calc",
            agent=root_agent,
            first_message="What is 2+3?",
            tool_mocks={"add": add, "multiply": multiply},
            user_agents=UserAgents(loop=ScriptedUserAgent(name="asker", script=["And 4*5?"])),
        )
    )
    assert result.passed, result.explain()
    agent_dir = tmp_path / "calculator"
    shutil.copytree(ROOT / "examples" / "calculator", agent_dir)
    eval_set = agent_dir / "goldens.evalset.json"
    append_golden(eval_set, to_golden(result, eval_id="exported"), "calculator")

    tampered = to_golden(result, eval_id="tampered")
    tampered.conversation[0].intermediate_data.tool_uses[0].args = {"a": 2, "b": 4}
    append_golden(eval_set, tampered, "calculator")
    assert [c["eval_id"] for c in json.loads(eval_set.read_text())["eval_cases"]] == [
        "exported",
        "tampered",
    ]

    completed = await anyio.run_process(
        [str(cli), "eval", str(agent_dir), str(eval_set), "--print_detailed_results"],
        cwd=tmp_path,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)},
        check=False,
    )
    output = completed.stdout.decode() + completed.stderr.decode()
    assert "Tests passed: 1" in output, output
    assert "Tests failed: 1" in output, output
    assert completed.returncode == 1  # adk eval fails the run because of the tampered case
    assert "Metric: tool_trajectory_avg_score, Status: PASSED, Score: 1.0" in output
    # the average over the two invocations: the tampered first one scores 0, the second 1
    assert "Metric: tool_trajectory_avg_score, Status: FAILED, Score: 0.5" in output
