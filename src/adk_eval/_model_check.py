"""Models where agents run: the check at each agent's first model call, and models at run time.

`ModelCheck` is an ADK plugin. At an agent's model call it does two things:

* it chooses the case's model (`EvalCase.models`, by the agent's name or
  ``"*"``) for an agent that does not run on it yet: an agent a tool builds and
  runs while the case runs (``AgentTool(agent).run_async(...)`` in a function
  tool, a common pattern), which no walk of the tree before the run can see.
  The gateway calls that model for the agent (`model_for`, given to
  `GatewayPlugin`); the agent object, its callbacks and its tools stay as they
  are;
* it ends the run, before the call, at an agent whose model cannot run here (a
  key is missing), naming it, where it sits, and for an agent built at run time
  the tool that built it. The run ends with an error response
  (`MODEL_NOT_READY_CODE`), not an exception, so ADK logs no traceback.

Which tool call the current code runs inside is `CALLING_TOOL`, which the
interception sets for every call.
"""

from __future__ import annotations

import contextvars
import difflib
from collections.abc import Mapping
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import Workflow
from google.genai import types

from ._agent_tree import DEFAULT_MODEL_KEY, model_problem, walk
from ._errors import EvalSetupError
from ._sandbox._scope import set_model_call
from .models import ModelSpec
from .models._gateway._gate import current_gate
from .models._gateway._usage import usage_role
from .models._roles._consult import advisor_problem, is_consult_tool

__all__ = ["CALLING_TOOL", "MODEL_NOT_READY_CODE", "ModelCheck"]

MODEL_NOT_READY_CODE = "ADK_EVAL_MODEL_NOT_READY"
"""The error code of the model response that ends a run at an agent that cannot run."""

CALLING_TOOL: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "adk_eval_calling_tool", default=None
)
"""The tool call (tool name, calling agent) the current code runs inside, if any.

ADK runs each tool call in a task of its own with a copy of the context, so a
value set in ``before_tool_callback`` reaches exactly what that call runs: an
agent the tool's body builds and runs sees it at its model calls.
"""


class ModelCheck(BasePlugin):
    """Chooses the case's models for agents built at run time; ends a run at one that cannot run.

    Args:
        root: The tree whose agents it checks (where each sits comes from it).
        case: The case's name, for the message (None: a runner used by hand).
        models: The case's models by agent name (``"*"``: every other agent).
    """

    def __init__(
        self,
        root: BaseAgent | Workflow,
        *,
        case: str | None,
        models: Mapping[str, ModelSpec] | None = None,
    ) -> None:
        super().__init__(name="adk_eval_model_check")
        self._where: dict[str, str] = {}  # by name: ADK runs clones of some agents
        for agent, where in walk(root):
            self._where.setdefault(agent.name, where)
        self._case = case
        self._models = dict(models or {})
        self._ready: set[int] = set()
        self._chosen: dict[int, tuple[LlmAgent, BaseLlm]] = {}  # id -> (agent, the case's model)
        self.problem: EvalSetupError | None = None
        """The first agent that could not run (every later model call ends too)."""
        self.called: set[str] = set()
        """The names of the agents that reached a model call."""
        self.built: dict[str, str] = {}
        """Agents built at run time, by name -> the tool call that built it."""

    @property
    def tree_names(self) -> frozenset[str]:
        """The names of the agents of the tree the run started with."""
        return frozenset(self._where)

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Notes the agent; ends the run, before the call, if its model cannot run here."""
        set_model_call(True)  # its connections are model traffic (the sandbox lets them be)
        agent = callback_context.get_invocation_context().agent
        if not isinstance(agent, BaseAgent):
            return None
        self.called.add(agent.name)
        if agent.name not in self._where and agent.name not in self.built:
            tool = CALLING_TOOL.get()
            self.built[agent.name] = (
                f"tool `{tool[0]}` of agent `{tool[1]}`" if tool else "code outside any tool"
            )
        if self.problem is None and id(agent) not in self._ready:
            model = self._case_model(agent)
            running = agent.model_copy(update={"model": model}) if model is not None else agent
            message = model_problem(running, self._where_of(agent.name), case=self._case)
            if message is None:
                self._ready.add(id(agent))
            else:
                misspelt = difflib.get_close_matches(agent.name, self.unused_model_keys(), n=1)
                if misspelt:
                    message += f" (models names `{misspelt[0]}`: did you mean `{agent.name}`?)"
                self.problem = EvalSetupError(message)
        if self.problem is None:
            return None
        return LlmResponse(
            error_code=MODEL_NOT_READY_CODE, error_message=str(self.problem), turn_complete=True
        )

    def model_for(self, agent: LlmAgent) -> BaseLlm | None:
        """The case's model for `agent`, when it does not run on it already (else None)."""
        model = self._case_model(agent)
        if model is None:
            return None
        chosen = self._chosen.get(id(agent))
        if chosen is None:  # (the agent is kept, so that its id stays its own)
            llm = agent.model_copy(update={"model": model}).canonical_model
            chosen = self._chosen[id(agent)] = (agent, llm)
        return chosen[1]

    def _case_model(self, agent: BaseAgent) -> ModelSpec | None:
        """The case's model for `agent` when it is an `LlmAgent` on another one (else None)."""
        model = self._models.get(agent.name, self._models.get(DEFAULT_MODEL_KEY))
        if not isinstance(agent, LlmAgent) or model is None or agent.model is model:
            return None
        return model

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """The model call is over: what follows is no longer model traffic."""
        set_model_call(False)
        return None

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """The model call failed: what follows is no longer model traffic."""
        set_model_call(False)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Ends the run at a model-consult tool whose advisor cannot run here."""
        if not is_consult_tool(tool):
            return None
        problem = None if id(tool) in self._ready else advisor_problem(tool, case=self._case)
        if problem is None:
            self._ready.add(id(tool))
            set_model_call(True)  # its body is the advisor's model call: model traffic
            return None
        if self.problem is None:
            self.problem = EvalSetupError(problem)
        tool_context.actions.skip_summarization = True
        return {"error": f"adk_eval stopped the run: {problem}"}

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Records what a model-consult tool's advisor spent (it calls its model itself)."""
        if not is_consult_tool(tool):
            return None
        set_model_call(False)
        usage = result.get("usage") if isinstance(result, dict) else None
        if isinstance(usage, dict):
            spent = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=usage.get("prompt_tokens"),
                candidates_token_count=usage.get("output_tokens"),
                cached_content_token_count=usage.get("cached_tokens"),
            )
            with usage_role(f"tool:{tool.name}"):
                current_gate().record_usage(str(result.get("advisor_model") or "advisor"), spent)
        return None

    def unused_model_keys(self) -> list[str]:
        """`models` keys that name no agent of the tree and no agent that ran."""
        known = set(self._where) | self.called | {DEFAULT_MODEL_KEY}
        return sorted(key for key in self._models if key not in known)

    def _where_of(self, name: str) -> str:
        if name in self._where:
            return self._where[name]
        return f"agent `{name}` (built at run time by {self.built[name]})"
