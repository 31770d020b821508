"""Studio targets: ``adk-eval studio examples/toolbox/studio.py``."""

from __future__ import annotations

from adk_eval.studio import SimulatedAgentConfig

from .agent import root_agent, structured_agent

AGENTS = [
    SimulatedAgentConfig(
        name="Toolbox", agent=root_agent, eval_set_path="goldens/toolbox.evalset.json"
    ),
    SimulatedAgentConfig(
        name="Structured", agent=structured_agent, eval_set_path="goldens/structured.evalset.json"
    ),
]
