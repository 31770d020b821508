"""The agent tree of a case: its agents, a copy with per-case models, and a model check.

`walk` visits every agent a run can reach without running it: sub-agents and
the agents inside `AgentTool`s, each with where it sits. `with_models` copies
the tree with other models (ADK's `clone`, sub-agents and `AgentTool` agents
included) and never changes the user's objects, so module-level agents shared
by many eval files can each get their own scripted model. `check_model` names a
root whose model cannot run before anything runs; `ModelCheck` names any other
agent that cannot run at its first model call, so a case need not give models to
agents it never reaches.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow import START, BaseNode, Edge, Workflow

from ._errors import EvalSetupError
from .models import ModelSpec, missing_credentials

__all__ = [
    "DEFAULT_MODEL_KEY",
    "check_model_names",
    "MODEL_NOT_READY_CODE",
    "ModelCheck",
    "check_model",
    "model_problem",
    "find_agent",
    "map_nodes",
    "nodes_of",
    "walk",
    "with_models",
]

DEFAULT_MODEL_KEY = "*"
"""The `EvalCase.models` key whose model every other agent of the tree gets."""


def walk(root: BaseAgent | Workflow) -> Iterator[tuple[BaseAgent, str]]:
    """Every agent of the tree once, root first, with where it sits.

    A `Workflow` is walked through: its agent nodes (and nested workflows') count.
    """
    seen: set[int] = set()
    pending: list[tuple[BaseAgent | Workflow, str]] = [(root, f"agent `{root.name}`")]
    while pending:
        agent, where = pending.pop(0)
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        if isinstance(agent, Workflow):
            pending.extend(
                (node, f"node `{node.name}` of workflow `{agent.name}`")
                for node in nodes_of(agent)
                if isinstance(node, BaseAgent | Workflow)
            )
            continue
        yield agent, where
        for tool in getattr(agent, "tools", []) if isinstance(agent, LlmAgent) else []:
            if isinstance(tool, AgentTool):
                pending.append(
                    (
                        tool.agent,
                        f"agent `{tool.agent.name}` inside AgentTool `{tool.name}` of "
                        f"`{agent.name}`",
                    )
                )
        pending.extend(
            (sub, f"sub-agent `{sub.name}` of `{agent.name}`") for sub in agent.sub_agents
        )


def nodes_of(workflow: Workflow) -> Iterator[BaseNode]:
    """The nodes of `workflow`'s graph (not its nested workflows' nodes), START left out.

    A parallel worker is seen as the node it runs once per item.
    """
    for node in workflow.graph.nodes if workflow.graph else []:
        if node is not START:
            yield _worker_inner(node) or node


def _worker_inner(node: BaseNode) -> BaseNode | None:
    """The node a parallel worker (ADK's ``_ParallelWorker``) runs per item; None for others."""
    inner = getattr(node, "_node", None) if type(node).__name__ == "_ParallelWorker" else None
    return inner if isinstance(inner, BaseNode) else None


def map_nodes(workflow: Workflow, replace: Callable[[BaseNode, str], BaseNode]) -> Workflow:
    """A copy of `workflow` (nested workflows copied too) with each node ``replace``d.

    `replace` gets every node but START and nested workflows, once each, with
    where it sits (a parallel worker's inner node, rewrapped after); the copy keeps
    the edges, routes and the workflow's settings.
    """
    copies: dict[int, BaseNode] = {}

    def copy_of(node: BaseNode) -> BaseNode:
        if id(node) not in copies:
            if node is START:
                copies[id(node)] = node
            elif type(node) is Workflow:
                copies[id(node)] = map_nodes(node, replace)
            elif (inner := _worker_inner(node)) is not None:  # replace it, then rewrap it
                copies[id(node)] = _rewrapped(node, copy_of(inner))
            else:
                copies[id(node)] = replace(node, f"workflow `{workflow.name}`")
        return copies[id(node)]

    edges: list[Any] = [
        Edge(from_node=copy_of(edge.from_node), to_node=copy_of(edge.to_node), route=edge.route)
        for edge in (workflow.graph.edges if workflow.graph else [])
    ]
    fields = {
        name: getattr(workflow, name)
        for name in workflow.model_fields_set
        if name not in ("edges", "graph")
    }
    return Workflow(**fields, edges=edges)


def _rewrapped(worker: BaseNode, inner: BaseNode) -> BaseNode:
    """`worker` again (a parallel worker) around `inner`, its settings kept."""
    if inner is _worker_inner(worker):
        return worker
    from google.adk.workflow._parallel_worker import _ParallelWorker

    return _ParallelWorker(
        node=inner,
        max_parallel_workers=getattr(worker, "max_parallel_workers", None),
        retry_config=worker.retry_config,
        timeout=worker.timeout,
    )


def find_agent(root: BaseAgent | Workflow, name: str) -> BaseAgent | None:
    """The agent named `name` in the tree (workflow nodes included), or None."""
    return next((agent for agent, _ in walk(root) if agent.name == name), None)


def check_model_names(root: BaseAgent | Workflow, models: Mapping[str, Any], *, case: str) -> None:
    """Checks that every key of `models` names an `LlmAgent` of the tree (or is ``"*"``).

    Raises:
        EvalSetupError: For a name that matches no model-using agent, with a did-you-mean.
    """
    names = sorted({agent.name for agent, _ in walk(root) if isinstance(agent, LlmAgent)})
    for name in models:
        if name == DEFAULT_MODEL_KEY or name in names:
            continue
        close = difflib.get_close_matches(str(name), names, n=1)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        listed = ", ".join(f"`{n}`" for n in names)
        raise EvalSetupError(
            f"EvalCase `{case}`: models names `{name}`, but the agent tree has no LlmAgent by "
            f'that name.{hint} Agents with a model: {listed} (or "*" for all of them).'
        )


def with_models(
    root: BaseAgent | Workflow, models: Mapping[str, ModelSpec]
) -> BaseAgent | Workflow:
    """A copy of the tree whose `LlmAgent`s use `models` (by agent name; ``"*"``: the rest).

    Agents without an entry (and no ``"*"``) keep their model. The copy shares
    tools, callbacks and everything else with the original, which is not changed.
    """
    copies: dict[int, BaseAgent] = {}

    def copy_of(agent: BaseAgent) -> BaseAgent:
        if id(agent) in copies:
            return copies[id(agent)]
        update: dict[str, Any] = {"sub_agents": [copy_of(sub) for sub in agent.sub_agents]}
        if isinstance(agent, LlmAgent):
            model = models.get(agent.name, models.get(DEFAULT_MODEL_KEY))
            if model is not None:
                update["model"] = model
            update["tools"] = [_copy_tool(tool, copy_of) for tool in agent.tools]
        copies[id(agent)] = clone = agent.clone(update=update)
        return clone

    def node_copy(node: BaseNode, where: str) -> BaseNode:
        return copy_of(node) if isinstance(node, BaseAgent) else node

    return map_nodes(root, node_copy) if isinstance(root, Workflow) else copy_of(root)


def _copy_tool(tool: Any, copy_of: Any) -> Any:
    if not isinstance(tool, AgentTool):
        return tool
    clone = copy.copy(tool)
    clone.agent = copy_of(tool.agent)
    return clone


def _model_setting(agent: LlmAgent) -> ModelSpec:
    """What model `agent` runs on, as configured: its own, an ancestor's, or ADK's default."""
    current: BaseAgent | None = agent
    while current is not None:
        if isinstance(current, LlmAgent) and current.model:
            return current.model
        current = current.parent_agent
    default: ModelSpec = LlmAgent._default_model  # set by LlmAgent.set_default_model
    return default


def model_problem(agent: BaseAgent, where: str, *, case: str | None) -> str | None:
    """Why `agent` cannot run here (its model lacks its key, or is not installed), or None."""
    if not isinstance(agent, LlmAgent):
        return None
    problem = missing_credentials(_model_setting(agent))
    if problem is None:
        return None
    inherited = "" if agent.model else " (inherited: the agent sets no model)"
    return (
        (f"EvalCase `{case}`: " if case else "")
        + f"{where} cannot run: {problem}{inherited}. Give it a "
        f'model for this case with EvalCase(models={{"{agent.name}": ...}}) '
        f'(or models={{"*": ...}} for every agent).'
    )


def check_model(agent: BaseAgent | Workflow, *, case: str) -> None:
    """Checks, before anything runs, the model of an agent certain to run (a root).

    The other agents of a tree are checked at their first model call (`ModelCheck`):
    a case need not give models to agents it never reaches.

    Raises:
        EvalSetupError: Naming the agent, where it sits, and how to fix it.
    """
    if isinstance(agent, BaseAgent):
        problem = model_problem(agent, f"agent `{agent.name}`", case=case)
        if problem is not None:
            raise EvalSetupError(problem)


MODEL_NOT_READY_CODE = "ADK_EVAL_MODEL_NOT_READY"
"""The error code of the model response that ends a run at an agent that cannot run."""


class ModelCheck(BasePlugin):
    """Ends a run, before a model call, at an agent whose model cannot run here.

    The run ends with an error response (`MODEL_NOT_READY_CODE`), not an exception,
    so ADK logs no traceback; `problem` holds the same `EvalSetupError` the check
    before the run gives a root.

    Args:
        root: The tree whose agents it checks (where each sits comes from it).
        case: The case's name, for the message (None: a runner used by hand).
    """

    def __init__(self, root: BaseAgent | Workflow, *, case: str | None) -> None:
        super().__init__(name="adk_eval_model_check")
        self._where: dict[str, str] = {}  # by name: ADK runs clones of some agents
        for agent, where in walk(root):
            self._where.setdefault(agent.name, where)
        self._case = case
        self._ready: set[int] = set()
        self.problem: EvalSetupError | None = None
        """The first agent that could not run."""

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Lets the call through, or ends the run naming the agent that cannot run."""
        agent = callback_context.get_invocation_context().agent
        if not isinstance(agent, BaseAgent) or id(agent) in self._ready:
            return None
        where = self._where.get(agent.name, f"agent `{agent.name}`")
        message = model_problem(agent, where, case=self._case)
        if message is None:
            self._ready.add(id(agent))
            return None
        if self.problem is None:
            self.problem = EvalSetupError(message)
        return LlmResponse(
            error_code=MODEL_NOT_READY_CODE, error_message=message, turn_complete=True
        )
