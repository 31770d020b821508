"""The tools of an agent tree: what `ToolPolicy` resolves the case's mocks against.

`collect` walks the tree once (root, sub-agents, agents inside `AgentTool`s,
workflow nodes) and lists every tool by name with its owner and where each
agent sits, and the constructs the harness cannot intercept. An agent's tools
are ADK's canonical ones; for an agent with plain tools only, ADK's conversion
is kept by agent while its tools stay the same (it makes a task per tool).
A toolset lists its tools in a context: `setup_context` makes the one of a run's
first session.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.code_executors import BuiltInCodeExecutor
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.workflow import Workflow

from .._agent_tree import nodes_of
from .._lazy import is_loaded_instance
from ._a2a._harness import local_agent_of
from ._mtls import skip_mtls_probe

__all__ = [
    "FRAMEWORK_YIELD_TOOLS",
    "Inventory",
    "collect",
    "refuses_code_execution",
    "setup_context",
]

FRAMEWORK_YIELD_TOOLS = frozenset(
    {
        "adk_request_input",
        "adk_request_confirmation",
        "adk_request_credential",
        "mock_function_call_for_required_user_input",  # a remote (A2A) agent asks
    }
)
"""Yielding calls ADK makes on its own (input requests, tool confirmations, credentials)."""


def refuses_code_execution(agent: object) -> str | None:
    """Why `agent` cannot run under the harness (its code executor), else None."""
    executor = getattr(agent, "code_executor", None)
    if executor is None or type(executor) is BuiltInCodeExecutor:
        return None
    name = getattr(agent, "name", "?")
    return (
        f"Agent `{name}` has a code executor (`{type(executor).__name__}`) that runs code "
        "outside ADK's tool callbacks, so adk_eval cannot intercept it. Evaluate a copy "
        "without it: `agent.clone(update={'code_executor': None})`."
    )


@dataclass
class Inventory:
    """The tools of a tree by name, their owners, its agents, and what cannot run."""

    tools: dict[str, list[BaseTool]] = field(default_factory=dict)
    owners: dict[int, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    agents: dict[str, str] = field(default_factory=dict)
    """Agent name -> where it sits in the tree (``sub-agent `billing` of `root```)."""
    tool_nodes: dict[str, str] = field(default_factory=dict)
    """Name of a tool placed in a workflow graph -> where (``tool node `x` of workflow `w```)."""

    def add(self, agent: BaseAgent | Workflow, tool: BaseTool) -> None:
        same_name = self.tools.setdefault(tool.name, [])
        if not any(existing is tool for existing in same_name):
            same_name.append(tool)
        self.owners.setdefault(id(tool), agent.name)

    @property
    def yielding_names(self) -> set[str]:
        names = {
            name for name, tools in self.tools.items() if any(t.is_long_running for t in tools)
        }
        return names | FRAMEWORK_YIELD_TOOLS


_PLAIN_TOOLS: dict[int, tuple[weakref.ref[LlmAgent], tuple[int, ...], list[BaseTool]]] = {}
"""id(agent) -> (the agent, its tools' ids, ADK's canonical tools), for plain tools only.

Agents are not hashable (pydantic models): kept by id, each entry dropped with its agent.
"""


def _is_search_tool(tool: object) -> bool:
    """Whether `tool` is one of Google's built-in search tools (their modules not imported)."""
    return is_loaded_instance(
        tool, "google.adk.tools.google_search_tool", "GoogleSearchTool"
    ) or is_loaded_instance(tool, "google.adk.tools.vertex_ai_search_tool", "VertexAiSearchTool")


async def _canonical_tools(agent: LlmAgent, ctx: ReadonlyContext | None) -> list[BaseTool]:
    """ADK's canonical tools of `agent`, worked out once while its plain tools stay the same.

    A toolset lists its tools per context, and ADK wraps Google's built-in
    search tools by what else the agent has: an agent with one of those is
    asked every time. Plain tools and functions convert the same way each
    time, so the conversion (a task per tool in ADK) is kept by agent.
    """
    if any(isinstance(t, BaseToolset) or _is_search_tool(t) for t in agent.tools):
        return await agent.canonical_tools(ctx)
    ids = tuple(map(id, agent.tools))
    known = _PLAIN_TOOLS.get(id(agent))
    if known is not None and known[0]() is agent and known[1] == ids:
        return known[2]
    tools = await agent.canonical_tools(ctx)
    key = id(agent)
    _PLAIN_TOOLS[key] = (weakref.ref(agent, lambda _: _PLAIN_TOOLS.pop(key, None)), ids, tools)
    return tools


def setup_context(
    sessions: BaseSessionService, root: BaseAgent | Workflow, session: Session
) -> ReadonlyContext:
    """A read-only context in `session`, where toolsets list their tools for `collect`."""
    return ReadonlyContext(
        InvocationContext(
            session_service=sessions,
            invocation_id=f"adk_eval-setup-{uuid.uuid4().hex[:8]}",
            agent=root,
            session=session,
        )
    )


async def collect(
    root: BaseAgent | Workflow, context: Callable[[], ReadonlyContext] | None
) -> Inventory:
    inventory = Inventory()
    seen: set[int] = set()
    made: list[ReadonlyContext] = []

    def ctx_for(agent: LlmAgent) -> ReadonlyContext | None:
        """A context only for an agent with a toolset (it lists its tools in one)."""
        if context is None or not any(isinstance(t, BaseToolset) for t in agent.tools):
            return None
        if not made:
            made.append(context())
        return made[0]

    async def visit(agent: BaseAgent | Workflow, where: str) -> None:
        if id(agent) in seen:
            return
        seen.add(id(agent))
        if isinstance(agent, Workflow):  # its agents, tool nodes and nested workflows
            for node in nodes_of(agent):
                if isinstance(node, BaseAgent | Workflow):
                    await visit(node, f"node `{node.name}` of workflow `{agent.name}`")
                elif isinstance(tool := getattr(node, "tool", None), BaseTool):
                    inventory.add(agent, tool)
                    inventory.tool_nodes.setdefault(
                        tool.name, f"tool node `{tool.name}` of workflow `{agent.name}`"
                    )
            return
        inventory.agents.setdefault(agent.name, where)
        if isinstance(agent, LlmAgent):
            problem = refuses_code_execution(agent)
            if problem is not None:
                inventory.problems.append(problem)
            for toolset in agent.tools:  # before get_tools connects for the first time
                skip_mtls_probe(toolset)
            for tool in await _canonical_tools(agent, ctx_for(agent)):
                inventory.add(agent, tool)
                if isinstance(tool, AgentTool):
                    await visit(
                        tool.agent,
                        f"agent `{tool.agent.name}` inside AgentTool `{tool.name}` of "
                        f"`{agent.name}`",
                    )
        for sub_agent in agent.sub_agents:
            await visit(sub_agent, f"sub-agent `{sub_agent.name}` of `{agent.name}`")
        if (local := local_agent_of(agent)) is not None:  # a remote agent's code, in process
            await visit(local, f"agent `{local.name}` run by remote mock `{agent.name}`")

    await visit(root, f"agent `{root.name}`")
    return inventory
