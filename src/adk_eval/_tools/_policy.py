"""Tool interception: every tool call of the system agent is checked, safe by default.

`ToolPolicy.build` walks the agent tree once (root, sub-agents, agents inside
`AgentTool`s, toolsets), resolves `tool_mocks` against the tools it finds, and
refuses constructs it cannot intercept. `InterceptionPlugin`
(``interception_plugin.py``) then applies it to every call; only the tool's body
is replaced, the agent's own tool callbacks run around it:

==================================  =============================================
the call                            what happens
==================================  =============================================
tool has a `ToolMock`               the mock runs instead of the tool's body
tool is provided (passthrough)      ADK runs the real tool
framework control tool              ADK runs it (``transfer_to_agent``,
                                    ``exit_loop``, `AgentTool` wrappers,
                                    ``finish_task``, ``set_model_response``);
                                    what runs inside them is intercepted too
long-running tool, not provided     paused without running it; the simulation
                                    asks the tool's user agent
unknown tool name (hallucinated)    ADK answers "tool not found" to the model
anything else                       the run stops with `EvalToolError`
==================================  =============================================

Remote agents (ADK's `RemoteA2aAgent`) call another service outside every tool
callback: `RemotePolicy` (``_remote.py``) decides them by name, before the run.
"""

from __future__ import annotations

import difflib
import functools
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.load_artifacts_tool import LoadArtifactsTool
from google.adk.tools.set_model_response_tool import SetModelResponseTool
from google.adk.tools.transfer_to_agent_tool import TransferToAgentTool, transfer_to_agent
from google.adk.workflow import Workflow

from .._agent_tree import runs_code
from .._arguments import near_miss
from .._errors import EvalSetupError
from ..models._roles._consult import consult_tool_class
from ._mocks import ToolMock
from ._remote import RemotePolicy
from ._tree import Inventory, collect

__all__ = ["ToolPolicy", "is_control_tool", "is_framework_tool"]


def _finish_task_tool() -> type[BaseTool] | None:
    try:  # ADK's task-mode tool lives in a private module
        from google.adk.agents.llm.task._finish_task_tool import FinishTaskTool
    except ImportError:  # pragma: no cover - another ADK layout: nothing is let through
        return None
    return FinishTaskTool


_CONTROL_CLASSES: tuple[type[BaseTool], ...] = tuple(
    kind
    for kind in (
        TransferToAgentTool,
        AgentTool,
        SetModelResponseTool,
        LoadArtifactsTool,  # reads the case's own artifacts into the request
        _finish_task_tool(),
    )
    if kind is not None
)
_RUNNING_METHODS = ("run_async", "_run_async_impl", "_call_live")
_LOAD_MEMORY = "google.adk.tools.load_memory_tool"
"""ADK's `LoadMemoryTool` and ``load_memory`` (searches the case's own memory), a
control tool too; its module is not imported here (see `_adk_object`)."""
_EXIT_LOOP = "google.adk.tools.exit_loop_tool"
"""ADK's ``exit_loop`` function (`_adk_object`)."""


def _adk_object(module: str, name: str) -> Any:
    """ADK's `name` of `module`, None while `module` is not imported.

    No tool can hold a class or function of a module nobody imported, so a run
    that uses neither does not import it.
    """
    return getattr(sys.modules.get(module), name, None)


def _runs_as(tool: BaseTool, base: type[BaseTool]) -> bool:
    """`tool` is a `base`, and a subclass (if it is one) overrides nothing that runs."""
    return _class_runs_as(type(tool), base)


@functools.cache
def _class_runs_as(kind: type[BaseTool], base: type[BaseTool]) -> bool:
    return issubclass(kind, base) and all(
        getattr(kind, method, None) is getattr(base, method, None) for method in _RUNNING_METHODS
    )


def is_control_tool(tool: BaseTool) -> bool:
    """Whether `tool` is one of ADK's own control-flow tools (not a side effect).

    Decided by identity and behaviour, never by name: ADK's control tool classes
    (transfer, AgentTool, structured output, task finish, ``load_artifacts`` and
    ``load_memory``, which read the run's own artifacts and memory, and
    ``ModelConsultTool``, whose body is a call to its advisor model) and ADK's own
    ``exit_loop`` function, each as ADK runs it. A subclass that overrides what
    runs, or a look-alike class, is an ordinary tool: mocked, provided or refused.
    """
    consult = consult_tool_class()  # its body is a model call (see `models._roles._consult`)
    if consult is not None and _runs_as(tool, consult):
        return True
    memory_tool = _adk_object(_LOAD_MEMORY, "LoadMemoryTool")
    kinds = (*_CONTROL_CLASSES, memory_tool) if memory_tool is not None else _CONTROL_CLASSES
    func = getattr(tool, "func", None)
    if any(_runs_as(tool, kind) for kind in kinds):
        return not isinstance(tool, FunctionTool) or (
            func is not None
            and func in (transfer_to_agent, _adk_object(_LOAD_MEMORY, "load_memory"))
        )
    exit_loop = _adk_object(_EXIT_LOOP, "exit_loop")
    return exit_loop is not None and _runs_as(tool, FunctionTool) and func is exit_loop


_PLACEHOLDER_DESCRIPTION = "Tool not found"


def _is_unknown_tool_placeholder(tool: BaseTool) -> bool:
    # For a name the model made up, ADK passes a bare BaseTool described "Tool not
    # found" and answers the call with that error after the callbacks; nothing runs.
    # A bare BaseTool of the agent's, given a body of its own, is not it.
    return (
        type(tool) is BaseTool
        and tool.description == _PLACEHOLDER_DESCRIPTION
        and not any(method in vars(tool) for method in _RUNNING_METHODS)
    )


def is_framework_tool(tool: BaseTool) -> bool:
    """Whether ADK runs `tool` as part of its own machinery (no side effect of the agent's).

    ADK's control tools (see `is_control_tool`) and its placeholder for a tool
    name the model made up.
    """
    return _is_unknown_tool_placeholder(tool) or is_control_tool(tool)


@dataclass(frozen=True)
class _Passthrough:
    tools: tuple[Any, ...]
    """The tools (or, for a tool no agent of the tree has yet, the functions) provided."""

    def allows(self, tool: BaseTool) -> bool:
        return any(tool is allowed for allowed in self.tools) or any(
            getattr(tool, "func", None) is getattr(allowed, "func", allowed)
            for allowed in self.tools
        )


def _did_you_mean(name: str, choices: Iterable[str]) -> str:
    choices = sorted(choices)
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    listed = ", ".join(f"`{c}`" for c in choices) or "(none)"
    return f"{hint} Tools found: {listed}."


@dataclass(frozen=True)
class ToolPolicy:
    """The resolved decision table for one case: which tool is mocked, provided or yields."""

    mocks: Mapping[str, ToolMock]
    passthrough: Mapping[str, _Passthrough]
    agents: Mapping[str, str] = field(default_factory=dict)
    """Agent name -> where it sits in the tree, for messages."""
    tool_nodes: Mapping[str, str] = field(default_factory=dict)
    """Name of a tool placed in a workflow graph -> where, for messages."""
    simulate_unmocked: ToolMock | None = None
    """The simulated mock that answers tools nothing else covers (an explicit opt-in)."""
    tree_tools: frozenset[str] = frozenset()
    """The names of the tools of the tree the run starts with."""
    unresolved: frozenset[str] = frozenset()
    """`tool_mocks` names no tool of the tree has: tools of agents built at run time."""
    interim: frozenset[str] = frozenset()
    """Long-running tools with a mock (or provided) and a user agent: the first gives the
    interim answer, as the tool would, and the user agent the final one."""
    remote: RemotePolicy = field(default_factory=RemotePolicy)
    """Which remote agents run for real, and the run's error if one may not."""

    def describe_agent(self, name: str, tool: str | None = None, inside: str | None = None) -> str:
        """Where agent `name` sits, e.g. ``sub-agent `billing` of `root```.

        A call of `tool` from no agent the tree knows is the call of a tool node (its
        workflow runs it), described as such, or of an agent built at run time by
        the tool call it runs `inside`.
        """
        if name not in self.agents and tool is not None and tool in self.tool_nodes:
            return self.tool_nodes[tool]
        if name not in self.agents and inside is not None:
            return f"agent `{name}` (built at run time inside tool `{inside}`)"
        return self.agents.get(name, f"agent `{name}`")

    def misspelt_mock(self, tool: str) -> str | None:
        """A `tool_mocks` name no tool of the tree has that is most likely `tool` misspelt."""
        close = difflib.get_close_matches(tool, sorted(self.unresolved), n=1)
        return close[0] if close else None

    @classmethod
    async def build(
        cls,
        root: BaseAgent | Workflow,
        tool_mocks: Mapping[str, Any],
        *,
        yield_agents: Iterable[str] = (),
        context: Callable[[], ReadonlyContext] | None = None,
        simulate_unmocked: ToolMock | None = None,
        remote_mocks: Mapping[str, Any] | None = None,
        node_mocks: Mapping[str, Any] | None = None,
    ) -> ToolPolicy:
        """Resolves `tool_mocks`, tool user agents and `remote_mocks` against the agent tree.

        Raises:
            EvalSetupError: For a mock or user agent naming no tool (with a
                did-you-mean), a value that is neither a `ToolMock` nor the
                agent's own tool, a name both mocked and answered by a user
                agent, a construct adk_eval cannot intercept, or a
                `remote_mocks` name or value that is no remote agent of the tree.
        """
        inventory = await collect(root, context)
        mocks, passthrough, unresolved = _resolve(tool_mocks, inventory, root)
        yield_names = set(yield_agents)
        _check_yield_agents(yield_names, inventory)
        problems = [*inventory.problems, *_unintercepted_agent_tools(inventory, mocks)]
        if problems:
            raise EvalSetupError("\n".join(problems))
        remote = RemotePolicy.build(
            root,
            remote_mocks or {},
            node_mocks=node_mocks or {},
            mocked_tools={name for name, mock in mocks.items() if mock.real_tool is None},
        )

        return cls(
            mocks=mocks,
            passthrough=passthrough,
            agents=dict(inventory.agents),
            tool_nodes=dict(inventory.tool_nodes),
            simulate_unmocked=simulate_unmocked,
            tree_tools=frozenset(inventory.tools),
            unresolved=frozenset(unresolved),
            interim=frozenset(yield_names & (set(mocks) | set(passthrough))),
            remote=remote,
        )


def _resolve(
    tool_mocks: Mapping[str, Any], inventory: Inventory, root: BaseAgent | Workflow
) -> tuple[dict[str, ToolMock], dict[str, _Passthrough], set[str]]:
    """`tool_mocks` resolved against the tree: the mocks, the tools passed through, unknown names.

    A tool passed through is the agent's own, given as it is or by `ToolMock.real`;
    a name no tool of the tree has is kept (a tool of an agent built at run time)
    unless `_check_unknown_tool` finds it a typo.
    """
    unresolved: set[str] = set()
    mocks: dict[str, ToolMock] = {}
    passthrough: dict[str, _Passthrough] = {}
    for name, value in tool_mocks.items():
        if not isinstance(name, str):
            raise EvalSetupError(f"tool_mocks keys must be tool names (str), got {name!r}")
        candidates = inventory.tools.get(name)
        if not candidates:  # a typo, or a tool of an agent built at run time
            _check_unknown_tool(name, inventory, root)
            unresolved.add(name)
        if isinstance(value, ToolMock):
            mocks[name] = value
            if value.real_tool is None:
                continue
            value = value.real_tool  # ToolMock.real(tool): the tool must be the agent's
        matched = tuple(
            tool
            for tool in candidates or [value]
            if value is tool or (callable(value) and getattr(tool, "func", None) is value)
        )
        if not matched or not (callable(value) or isinstance(value, BaseTool)):
            raise EvalSetupError(_not_the_agents_tool(name, value))
        passthrough[name] = _Passthrough(matched)
    return mocks, passthrough, unresolved


def _check_unknown_tool(name: str, inventory: Inventory, root: BaseAgent | Workflow) -> None:
    """Checks that a `tool_mocks` name no tool of the tree has is no typo.

    It is kept for a tool of an agent built at run time, unless it is nearly the
    name of a tool of the tree, or no code of the tree could build an agent.
    """
    if near_miss(name, list(inventory.tools)) or not runs_code(root):
        raise EvalSetupError(
            f"tool_mocks names `{name}`, but agent `{root.name}` has no tool by that "
            f"name.{_did_you_mean(name, inventory.tools)}"
        )


def _check_yield_agents(names: set[str], inventory: Inventory) -> None:
    """Checks that each tool a user agent answers is one that can yield."""
    for name in names:
        if name not in inventory.yielding_names:
            kind = "is not long-running" if name in inventory.tools else "does not exist"
            close = difflib.get_close_matches(name, inventory.yielding_names, 1)
            raise EvalSetupError(
                f"user_agents.tools names `{name}`, but that tool {kind}, so it never "
                f"yields. Tools that can yield: "
                + ", ".join(f"`{n}`" for n in sorted(inventory.yielding_names))
                + "."
                + (f" Did you mean `{close[0]}`?" if close else "")
            )


def _unintercepted_agent_tools(inventory: Inventory, mocks: Mapping[str, ToolMock]) -> list[str]:
    """The AgentTools whose agent's tools would run without interception, unmocked."""
    return [
        f"AgentTool `{name}` was created with include_plugins=False, so the tools of its "
        f"agent would run without interception. Create it with include_plugins=True, or "
        f"mock `{name}` with a ToolMock."
        for name, tools in inventory.tools.items()
        for tool in tools
        if isinstance(tool, AgentTool) and not tool.include_plugins and name not in mocks
    ]


def _not_the_agents_tool(name: str, value: Any) -> str:
    if isinstance(value, Mapping) and "execute" in value:
        return (
            f"tool_mocks[{name!r}] is a dict; wrap the function in ToolMock: "
            f"tool_mocks={{{name!r}: ToolMock(execute)}}"
        )
    if callable(value) or isinstance(value, BaseTool):
        function = getattr(value, "__name__", "fn")
        return (
            f"tool_mocks[{name!r}] is {value!r}, which is not the agent's `{name}` tool. "
            "To run the real tool, pass the exact tool object or function the agent "
            "uses; to answer with your function (ToolMock calls `execute(args, ctx)`), "
            f"wrap it: ToolMock(lambda args, ctx: {function}(**args))"
        )
    return (
        f"tool_mocks[{name!r}] must be a ToolMock or the agent's own `{name}` tool, "
        f"got {value!r}; for a fixed answer use ToolMock.returning({value!r})"
    )
