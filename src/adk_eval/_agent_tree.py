"""The agent tree of a case: its agents, a copy with per-case models, and a model check.

`walk` visits every agent a run can reach without running it: sub-agents and
the agents inside `AgentTool`s, each with where it sits. `with_models` copies
the tree with other models (ADK's `clone`, sub-agents and `AgentTool` agents
included) and never changes the user's objects, so module-level agents shared
by many eval files can each get their own scripted model. `check_model` names a
root whose model cannot run before anything runs; `_model_check.ModelCheck`
checks every other agent at its first model call (and gives the case's models
to agents built at run time, which no walk can see).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.workflow import START, BaseNode, Edge, Workflow

from ._arguments import near_miss
from ._errors import EvalSetupError
from .models import ModelSpec, missing_credentials
from .models._roles._consult import advisor_for, is_consult_tool

__all__ = [
    "CALLBACK_FIELDS",
    "DEFAULT_MODEL_KEY",
    "code_labels",
    "object_labels",
    "qualified_name",
    "check_model_names",
    "check_model",
    "model_problem",
    "find_agent",
    "map_nodes",
    "nodes_of",
    "runs_code",
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


def runs_code(root: BaseAgent | Workflow) -> bool:
    """Whether code of the tree could build and run agents at run time.

    It could if an agent has a tool that is no `AgentTool`, or the root is a
    workflow (its nodes run code).
    """
    if isinstance(root, Workflow):
        return True
    return any(
        not isinstance(tool, AgentTool)
        for agent, _ in walk(root)
        if isinstance(agent, LlmAgent)
        for tool in agent.tools
    )


def check_model_names(root: BaseAgent | Workflow, models: Mapping[str, Any], *, case: str) -> None:
    """Checks that no key of `models` is a misspelt name of an `LlmAgent` of the tree.

    A key that names no agent of the tree and resembles none may name an agent
    a tool builds at run time: if the tree has such code, it is accepted here,
    `ModelCheck` gives the model to that agent when it runs, and a key no agent
    used that resembles a name the run saw is reported after the run.

    Raises:
        EvalSetupError: For a key nearly the name of an agent of the tree, or any
            unknown key when no code of the tree could build an agent.
    """
    names = sorted({agent.name for agent, _ in walk(root) if isinstance(agent, LlmAgent)})
    for name in models:
        if name == DEFAULT_MODEL_KEY or name in names:
            continue
        close = near_miss(str(name), names)
        if close or not runs_code(root):
            hint = f" Did you mean `{close}`?" if close else ""
            listed = ", ".join(f"`{n}`" for n in names)
            raise EvalSetupError(
                f"EvalCase `{case}`: models names `{name}`, but the agent tree has no "
                f"LlmAgent by that name.{hint} Agents with a model: "
                f'{listed} (or "*" for all of them).'
            )


def with_models(
    root: BaseAgent | Workflow,
    models: Mapping[str, ModelSpec],
    replace_tool: Callable[[Any], Any] | None = None,
    replace_agent: Callable[[BaseAgent], BaseAgent | None] | None = None,
) -> BaseAgent | Workflow:
    """A copy of the tree whose `LlmAgent`s use `models` (by agent name; ``"*"``: the rest).

    Agents without an entry (and no ``"*"``) keep their model. `replace_tool`
    maps each tool of each agent to the tool the copy holds (a stand-in for a
    toolset, say); `replace_agent` gives an agent's stand-in in the copy (None:
    a copy of it). The copy shares tools, callbacks and everything else with
    the original, which is not changed.
    """
    copies: dict[int, BaseAgent] = {}

    def copy_of(agent: BaseAgent) -> BaseAgent:
        if id(agent) in copies:
            return copies[id(agent)]
        stand_in = replace_agent(agent) if replace_agent is not None else None
        if stand_in is not None:
            copies[id(agent)] = stand_in
            return stand_in
        update: dict[str, Any] = {"sub_agents": [copy_of(sub) for sub in agent.sub_agents]}
        if isinstance(agent, LlmAgent):
            model = models.get(agent.name, models.get(DEFAULT_MODEL_KEY))
            if model is not None:
                update["model"] = model
            tools = [_copy_tool(tool, copy_of, models) for tool in agent.tools]
            update["tools"] = [replace_tool(tool) for tool in tools] if replace_tool else tools
        copies[id(agent)] = clone = agent.clone(update=update)
        return clone

    def node_copy(node: BaseNode, where: str) -> BaseNode:
        return copy_of(node) if isinstance(node, BaseAgent) else node

    return map_nodes(root, node_copy) if isinstance(root, Workflow) else copy_of(root)


def _copy_tool(tool: Any, copy_of: Any, models: Mapping[str, ModelSpec]) -> Any:
    if is_consult_tool(tool):  # its advisor is a model of the case's too
        spec = models.get(tool.name, models.get(DEFAULT_MODEL_KEY))
        if spec is None:
            return tool
        advisor = copy.copy(tool)
        advisor.advisor_model = advisor_for(spec)
        advisor._session_states = {}  # its own, not the original tool's
        return advisor
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


def qualified_name(thing: Any) -> str:
    """``module.Qualified.name`` of a function, method, class or partial (where it is defined)."""
    if isinstance(thing, functools.partial):
        return qualified_name(thing.func)
    target = getattr(thing, "__func__", thing)  # a bound method: its function
    module = getattr(target, "__module__", None) or type(target).__module__
    name = getattr(target, "__qualname__", None)
    if name is None:  # a callable object: its class
        name = type(target).__qualname__
    if "<lambda>" in name:
        try:
            line = inspect.getsourcelines(target)[1]
            name = f"{name} (line {line})"
        except (OSError, TypeError):
            pass
    return f"{module}.{name}"


CALLBACK_FIELDS = (
    "before_agent_callback",
    "after_agent_callback",
    "before_model_callback",
    "after_model_callback",
    "on_model_error_callback",
    "before_tool_callback",
    "after_tool_callback",
    "on_tool_error_callback",
)
"""The callbacks an ADK agent runs around its turns, model calls and tool calls."""


def code_labels(root: BaseAgent | Workflow, plugins: Any = ()) -> dict[tuple[str, int], str]:
    """The user's code in a tree, ``(file, first line) -> what it is``, for the sandbox.

    Its tools' functions (and the methods of tool and toolset classes of the
    user's), every agent callback, and the methods of `plugins`' classes; ADK's
    and adk_eval's own code is left out.
    """
    labels: dict[tuple[str, int], str] = {}

    def add(function: Any, label: str) -> None:
        target = getattr(function, "__func__", function)
        target = (
            getattr(target, "func", target) if isinstance(target, functools.partial) else target
        )
        code = getattr(target, "__code__", None)
        module = getattr(target, "__module__", "") or ""
        if code is not None and not module.startswith(("google.adk", "adk_eval")):
            labels.setdefault((code.co_filename, code.co_firstlineno), label)

    def add_methods(kind: type, label: str) -> None:
        for klass in kind.__mro__:
            if klass.__module__.startswith(("google.adk", "adk_eval", "builtins", "abc")):
                continue
            for name, member in vars(klass).items():
                if callable(member) or isinstance(member, staticmethod | classmethod):
                    add(getattr(member, "__func__", member), f"{label} ({name})")

    for plugin in plugins:
        add_methods(type(plugin), f"plugin `{plugin.name}` ({qualified_name(type(plugin))})")
    for agent, where in walk(root):
        for field in CALLBACK_FIELDS:
            value = getattr(agent, field, None)
            for callback in value if isinstance(value, list) else [value]:
                if callback is not None:
                    add(callback, f"{field} {qualified_name(callback)} of {where}")
        for tool in agent.tools if isinstance(agent, LlmAgent) else []:
            if callable(tool) and not isinstance(tool, type):
                add(tool, f"tool `{getattr(tool, '__name__', tool)}` of {where}")
            func = getattr(tool, "func", None)
            if func is not None:
                add(func, f"tool `{getattr(tool, 'name', '?')}` of {where}")
            elif not isinstance(tool, AgentTool) and not callable(tool):
                add_methods(type(tool), f"{type(tool).__name__} of {where}")
    return labels


def object_labels(root: BaseAgent | Workflow, plugins: Any = ()) -> dict[int, str]:
    """The tools, toolsets and plugins of a tree by id, for the sandbox (ADK's own included).

    What code cannot name: a toolset of ADK's starting a process is told by its
    object (``self`` on the stack).
    """
    labels = {
        id(plugin): f"plugin `{plugin.name}` ({qualified_name(type(plugin))})" for plugin in plugins
    }
    for agent, where in walk(root):
        for tool in agent.tools if isinstance(agent, LlmAgent) else []:
            if not callable(tool) or isinstance(tool, BaseTool):
                name = getattr(tool, "name", None) or type(tool).__name__
                kind = type(tool).__name__
                label = f"{kind} `{name}` of {where}" if name != kind else f"{kind} of {where}"
                labels.setdefault(id(tool), label)
                params = getattr(tool, "connection_params", None)  # an MCP server's, say
                for each in (params, getattr(params, "server_params", None)):
                    if each is not None:
                        labels.setdefault(id(each), label)
    return labels
