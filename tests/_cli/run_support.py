"""What the tests of ``adk-eval run`` share: two small eval files and two ways to run one.

`invoke` runs the command in this process (click's runner); `run_process` runs
``python -m adk_eval run`` as a process of its own, for what only a real process shows
(its exit, its stderr, its signals).
"""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner

from adk_eval._cli import main

__all__ = ["MIXED", "ONLY_GOOD", "invoke", "run_process"]

MIXED = """
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
replied = event_count_metric("replied", "agent_message", assertion=lambda n: n == 1)
never = state_metric("escalated", "session", "escalation", lambda v: v == "999")
good = EvalCase(name="greets", agent=agent, first_message="hi", metrics=[replied])
bad = EvalCase(name="escalates", agent=agent, first_message="help", metrics=[never],
               description="should escalate")
"""


ONLY_GOOD = """
agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]))
good = EvalCase(name="greets", agent=agent, first_message="hi")
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_process(folder, *args: str, env: dict[str, str] | None = None):
    """``python -m adk_eval run ARGS --no-store`` as a process of its own, in `folder`."""
    return subprocess.run(
        [sys.executable, "-m", "adk_eval", "run", *args, "--no-store"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )
