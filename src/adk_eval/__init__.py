"""adk_eval: evaluate Google ADK agents by simulation.

Real models, mocked effects, safe by default: every tool call of the agent under
test is intercepted, simulated users answer when the agent yields, and metrics
score the event trace.

    result = await run_eval(EvalCase(name="...", agent=root_agent, ...))
    assert result.passed, result.explain()
"""

from .bridge import Bridge, YieldInfo, with_state_change
from .case import EvalCase, TerminateWhen, UserAgents
from .errors import (
    AdkEvalError,
    EvalRunError,
    EvalSetupError,
    EvalToolError,
    EvalUserAgentError,
)
from .mocks import MockToolContext, ToolMock
from .result import EvalErrorInfo, EvalResult, TokenUsage
from .runner import EvalRunner
from .simulation import run_eval
from .state import replace_value
from .termination import Termination
from .trace import EvalTrace
from .user_agents import STOP, STOP_SIGNAL, ScriptContext, ScriptedUserAgent

__version__ = "0.1.0"

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
    "ScriptContext",
    "STOP",
    "STOP_SIGNAL",
    "with_state_change",
    "replace_value",
    # running
    "EvalRunner",
    "run_eval",
    # results
    "EvalResult",
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
