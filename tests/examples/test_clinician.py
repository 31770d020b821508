"""The clinician example runs offline end to end and is a valid ADK agent folder."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from google.adk.agents import LlmAgent

from adk_eval import run_eval
from examples.clinician import evals

ROOT = Path(__file__).resolve().parents[2]


def test_agent_folder_follows_adk_convention():
    package = importlib.import_module("examples.clinician")
    assert isinstance(package.agent.root_agent, LlmAgent)
    assert {
        t.name if hasattr(t, "name") else t.__name__ for t in package.agent.root_agent.tools
    } >= {"read", "record_answer", "update_belief", "escalate", "handover", "ask"}


async def test_chest_pain_case_escalates_to_999():
    result = await run_eval(evals.chest_pain)

    assert result.status == "passed", result.explain()
    assert result.termination_reason == "state_matches"
    assert result.final_state["session"]["escalation"]["urgencyLevel"] == "emergency_999"
    # revealed by the patient's reveal_condition tool through with_state_change
    assert result.final_state["patient"]["revealedConditions"] == [
        "hypertension",
        "high cholesterol",
    ]
    # the custom bridge showed the patient the clinician's beliefs at the time of asking
    prompts = [
        e.content.parts[0].text
        for e in result.user_agent_events
        if e.author == "user" and e.content and e.content.parts[0].text
    ]
    assert prompts[1].endswith(
        '[For consistency - current beliefs recorded: {"acute_coronary_syndrome": "medium"}]'
    )


def test_example_runs_as_a_module():
    completed = subprocess.run(
        [sys.executable, "-m", "examples.clinician"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "EvalCase `chest-pain-escalation`: PASSED" in completed.stdout
    assert "1 passed, 0 not passed" in completed.stdout
