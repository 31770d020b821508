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

import os
from typing import TYPE_CHECKING

from ._lazy import lazy_names

# litellm fetches its model cost map from the internet on import unless told not to;
# an eval run must not depend on the network for that (set it to "False" to opt out).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if TYPE_CHECKING:
    from ._bridge import Bridge as Bridge
    from ._bridge import YieldInfo as YieldInfo
    from ._bridge import default_format_prompt as default_format_prompt
    from ._bridge import default_format_response as default_format_response
    from ._bridge import with_state_change as with_state_change
    from ._case import EvalCase as EvalCase
    from ._case import TerminateWhen as TerminateWhen
    from ._case import UserAgents as UserAgents
    from ._errors import AdkEvalError as AdkEvalError
    from ._errors import EvalRunError as EvalRunError
    from ._errors import EvalSetupError as EvalSetupError
    from ._errors import EvalToolError as EvalToolError
    from ._errors import EvalUserAgentError as EvalUserAgentError
    from ._errors import SharedModelWarning as SharedModelWarning
    from ._result import EvalErrorInfo as EvalErrorInfo
    from ._result import EvalResult as EvalResult
    from ._result._attribution import Attribution as Attribution
    from ._run.loop import run_eval as run_eval
    from ._run.runner import EvalRunner as EvalRunner
    from ._session_service import EvalSessionService as EvalSessionService
    from ._state import replace_value as replace_value
    from ._suites._counterfactuals import explain_failure as explain_failure
    from ._suites._local import InProcess as InProcess
    from ._suites._plan import Adaptive as Adaptive
    from ._suites._plan import SuitePlan as SuitePlan
    from ._suites._ray._executor import Ray as Ray
    from ._suites._results import CaseStats as CaseStats
    from ._suites._results import EvalSuiteResult as EvalSuiteResult
    from ._suites._robustness import Robustness as Robustness
    from ._suites._robustness import robustness as robustness
    from ._suites._run import Executor as Executor
    from ._suites._run import run_eval_suite as run_eval_suite
    from ._suites._workers._executor import Workers as Workers
    from ._termination import Termination as Termination
    from ._tools._a2a._replies import RemoteMock as RemoteMock
    from ._tools._a2a._replies import RemoteReply as RemoteReply
    from ._tools._context import MockToolContext as MockToolContext
    from ._tools._mocks import ToolMock as ToolMock
    from ._tools._toolsets import ToolsetMock as ToolsetMock
    from ._trace import EvalTrace as EvalTrace
    from ._trace import NestedEvent as NestedEvent
    from ._trace import TokenUsage as TokenUsage
    from ._user_agents import STOP as STOP
    from ._user_agents import STOP_SIGNAL as STOP_SIGNAL
    from ._user_agents import CaseSession as CaseSession
    from ._user_agents import HumanUserAgent as HumanUserAgent
    from ._user_agents import ScriptContext as ScriptContext
    from ._user_agents import ScriptedUserAgent as ScriptedUserAgent
    from .metrics._contract import UserContract as UserContract
    from .metrics._scoring import score_session as score_session

__version__ = "0.1.0"

_EXPORTS = {
    # the case
    "EvalCase": "._case",
    "UserAgents": "._case",
    "CaseSession": "._user_agents",
    "TerminateWhen": "._case",
    "Bridge": "._bridge",
    "YieldInfo": "._bridge",
    "default_format_prompt": "._bridge",
    "default_format_response": "._bridge",
    # tools
    "ToolMock": "._tools._mocks",
    "ToolsetMock": "._tools._toolsets",
    "MockToolContext": "._tools._context",
    "RemoteMock": "._tools._a2a._replies",
    "RemoteReply": "._tools._a2a._replies",
    # user agents
    "ScriptedUserAgent": "._user_agents",
    "HumanUserAgent": "._user_agents",
    "ScriptContext": "._user_agents",
    "UserContract": ".metrics._contract",
    "STOP": "._user_agents",
    "STOP_SIGNAL": "._user_agents",
    "with_state_change": "._bridge",
    "replace_value": "._state",
    # running
    "EvalRunner": "._run.runner",
    "EvalSessionService": "._session_service",
    "run_eval": "._run.loop",
    "run_eval_suite": "._suites._run",
    "InProcess": "._suites._local",
    "Workers": "._suites._workers._executor",
    "Ray": "._suites._ray._executor",
    "Executor": "._suites._run",
    "SuitePlan": "._suites._plan",
    "Adaptive": "._suites._plan",
    "robustness": "._suites._robustness",
    "score_session": ".metrics._scoring",
    # results
    "EvalResult": "._result",
    "EvalSuiteResult": "._suites._results",
    "CaseStats": "._suites._results",
    "Robustness": "._suites._robustness",
    "EvalErrorInfo": "._result",
    "Attribution": "._result._attribution",
    "explain_failure": "._suites._counterfactuals",
    "EvalTrace": "._trace",
    "NestedEvent": "._trace",
    "Termination": "._termination",
    "TokenUsage": "._trace",
    # errors
    "AdkEvalError": "._errors",
    "EvalSetupError": "._errors",
    "EvalRunError": "._errors",
    "EvalToolError": "._errors",
    "EvalUserAgentError": "._errors",
    # warnings
    "SharedModelWarning": "._errors",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS, extra=["__version__"])
