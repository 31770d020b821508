"""adk_eval: evaluate Google ADK agents by simulation.

Real models, mocked effects, safe by default: every tool call of the agent under
test is intercepted, simulated users answer when the agent yields, and metrics
score the event trace.

    result = await run_eval(EvalCase(name="...", agent=root_agent, ...))
    assert result.passed, result.explain()

Names are imported on first use, so ``import adk_eval`` (and the pytest plugin)
stays cheap until something is actually used. Importing it sets
``LITELLM_LOCAL_MODEL_COST_MAP=True`` unless already set, so litellm never
fetches its cost map from the network.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# litellm fetches its model cost map from the internet on import unless told not to;
# an eval run must not depend on the network for that (set it to "False" to opt out).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from .bridge import Bridge, YieldInfo, with_state_change
    from .case import EvalCase, TerminateWhen, UserAgents
    from .errors import (
        AdkEvalError,
        EvalRunError,
        EvalSetupError,
        EvalToolError,
        EvalUserAgentError,
    )
    from .metrics.scoring import score_session
    from .mocks import MockToolContext, ToolMock
    from .result import EvalErrorInfo, EvalResult, TokenUsage
    from .runner import EvalRunner
    from .simulation import run_eval
    from .state import replace_value
    from .suite import CaseStats, EvalSuiteResult, run_eval_suite
    from .termination import Termination
    from .trace import EvalTrace
    from .user_agents import STOP, STOP_SIGNAL, HumanUserAgent, ScriptContext, ScriptedUserAgent

__version__ = "0.1.0"

_EXPORTS = {
    # the case
    "EvalCase": "case",
    "UserAgents": "case",
    "TerminateWhen": "case",
    "Bridge": "bridge",
    "YieldInfo": "bridge",
    # tools
    "ToolMock": "mocks",
    "MockToolContext": "mocks",
    # user agents
    "ScriptedUserAgent": "user_agents",
    "HumanUserAgent": "user_agents",
    "ScriptContext": "user_agents",
    "STOP": "user_agents",
    "STOP_SIGNAL": "user_agents",
    "with_state_change": "bridge",
    "replace_value": "state",
    # running
    "EvalRunner": "runner",
    "run_eval": "simulation",
    "run_eval_suite": "suite",
    "score_session": "metrics.scoring",
    # results
    "EvalResult": "result",
    "EvalSuiteResult": "suite",
    "CaseStats": "suite",
    "EvalErrorInfo": "result",
    "EvalTrace": "trace",
    "Termination": "termination",
    "TokenUsage": "result",
    # errors
    "AdkEvalError": "errors",
    "EvalSetupError": "errors",
    "EvalRunError": "errors",
    "EvalToolError": "errors",
    "EvalUserAgentError": "errors",
}

__all__ = [
    # the case
    "EvalCase",
    "UserAgents",
    "TerminateWhen",
    "Bridge",
    "YieldInfo",
    # tools
    "ToolMock",
    "MockToolContext",
    # user agents
    "ScriptedUserAgent",
    "HumanUserAgent",
    "ScriptContext",
    "STOP",
    "STOP_SIGNAL",
    "with_state_change",
    "replace_value",
    # running
    "EvalRunner",
    "run_eval",
    "run_eval_suite",
    "score_session",
    # results
    "EvalResult",
    "EvalSuiteResult",
    "CaseStats",
    "EvalErrorInfo",
    "EvalTrace",
    "Termination",
    "TokenUsage",
    # errors
    "AdkEvalError",
    "EvalSetupError",
    "EvalRunError",
    "EvalToolError",
    "EvalUserAgentError",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'adk_eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
