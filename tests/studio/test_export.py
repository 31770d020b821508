"""A studio export's eval id is one `adk eval` can select on its command line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest
from google.adk.cli.cli_eval import parse_and_get_evals_to_run

from adk_eval.goldens import append_golden, load_eval_set

from ..goldens.test_adk_eval_cli import adk_cli
from .conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]


async def export_a_session(engine, question: str, a: int, b: int) -> dict:
    """Plays the Toolbox agent through one add and a final answer, then exports it."""
    session_id = await engine.create_session("Toolbox", question)
    _, request = await wait_for(engine, session_id, kind="model")
    await engine.answer(
        request["id"], {"type": "tool_calls", "calls": [{"name": "add", "args": {"a": a, "b": b}}]}
    )
    _, request = await wait_for(engine, session_id, kind="model")
    await engine.answer(request["id"], {"type": "text", "text": f"The answer is {a + b}."})
    await wait_for(engine, session_id, phase="idle")
    return await engine.export(session_id)


async def test_the_default_eval_id_is_selected_by_adk_evals_own_parser(engine, tmp_path):
    record = await export_a_session(engine, "What is 5+3?", 5, 3)
    selector = f"{record['path']}:{record['eval_id']}"
    assert parse_and_get_evals_to_run([selector]) == {record["path"]: [record["eval_id"]]}


@pytest.mark.adk_cli
async def test_adk_eval_runs_an_exported_golden_picked_by_its_id(engine, tmp_path):
    cli = adk_cli()
    eval_set = tmp_path / "toolbox.evalset.json"
    first = await export_a_session(engine, "What is 5+3?", 5, 3)
    # a case from before, under an id of the old shape: kept as it is, never rewritten
    old = (
        load_eval_set(eval_set)
        .eval_cases[0]
        .model_copy(update={"eval_id": "toolbox_2025-01-02T03:04:05"})
    )
    append_golden(eval_set, old, "toolbox")
    second = await export_a_session(engine, "What is 2+2?", 2, 2)
    assert [c.eval_id for c in load_eval_set(eval_set).eval_cases] == [
        first["eval_id"],
        "toolbox_2025-01-02T03:04:05",
        second["eval_id"],
    ]

    agent_dir = tmp_path / "toolbox"
    shutil.copytree(ROOT / "examples" / "toolbox", agent_dir)
    completed = await anyio.run_process(
        [str(cli), "eval", str(agent_dir), f"{eval_set}:{second['eval_id']}"],
        cwd=tmp_path,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)},
        check=False,
    )
    output = completed.stdout.decode() + completed.stderr.decode()
    assert completed.returncode == 0, output
    assert "Tests passed: 1" in output, output  # that case, and only that one
    assert "Tests failed: 0" in output, output
