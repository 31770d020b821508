"""ADK 2 `Workflow` graphs under test: every node that runs code is mocked, passed or refused.

A workflow's `LlmAgent` nodes and tool nodes run through the App's plugins (the
interception plugin sees their model requests and tool calls, as in any agent).
Function nodes, and any other node that is plain code, run outside every plugin
callback, so the harness runs a *copy* of the graph in which each such node is
replaced, by name, according to ``node_mocks``:

* the node itself, or the function it wraps: it runs as itself (no side effects);
* any other callable: called with the node's arguments as keywords (those the
  function would get, ``ctx`` and ``node_input`` included); its result is the
  node's output (an `Event` or `RequestInput` passes as is);
* any other value: the node's output;
* not listed: the node does not run; the run stops with an `EvalToolError`
  naming the node, its workflow and its module.

The copy keeps every edge, route, join, retry, timeout and confirmation setting;
only the code of the replaced nodes differs. The user's workflow is not changed.
Dynamic nodes (``ctx.run_node``) run from inside a node: from a node that runs as
itself, they are its own business; a replaced node never starts them.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.events import Event
from google.adk.workflow import BaseNode, FunctionNode, JoinNode, Workflow
from google.adk.workflow._tool_node import _ToolNode

from .._agent_tree import map_nodes, nodes_of
from .._callables import call_user
from .._errors import EvalSetupError

__all__ = ["NodeRefusal", "with_node_mocks"]

NodeRefusal = Callable[[str, str, str | None, dict[str, Any]], Event]
"""``(node name, where, module, arguments) -> the error event`` of an unlisted node."""


def _runs_code(node: BaseNode) -> bool:
    """Whether the plugins cannot see `node` run: a function node or an unknown node class.

    START never comes here: `nodes_of` and `map_nodes` leave it out.
    """
    return not isinstance(node, BaseAgent) and type(node) not in (JoinNode, _ToolNode, Workflow)


def _code_nodes(workflow: Workflow) -> Iterator[BaseNode]:
    """Every node that runs code, in nested workflows too."""
    for node in nodes_of(workflow):
        if type(node) is Workflow:
            yield from _code_nodes(node)
        elif _runs_code(node):
            yield node


def with_node_mocks(
    workflow: Workflow, node_mocks: Mapping[str, Any], refuse: NodeRefusal, *, case: str
) -> Workflow:
    """A copy of `workflow` whose code nodes are mocked, passed or refused (module doc).

    Raises:
        EvalSetupError: A key of `node_mocks` names no code node of the graph.
    """
    names = sorted({node.name for node in _code_nodes(workflow)})
    unknown = sorted(set(node_mocks) - set(names))
    if unknown:
        close = difflib.get_close_matches(unknown[0], names, n=1)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        raise EvalSetupError(
            f"EvalCase `{case}`: node_mocks names `{unknown[0]}`, which is no function node "
            f"of workflow `{workflow.name}` (its function nodes: {names or 'none'}).{hint}"
        )

    def replace(node: BaseNode, where: str) -> BaseNode:
        return _replaced(node, where, node_mocks, refuse) if _runs_code(node) else node

    return map_nodes(workflow, replace)


def _replaced(
    node: BaseNode, where: str, node_mocks: Mapping[str, Any], refuse: NodeRefusal
) -> BaseNode:
    function = getattr(node, "_func", None)  # FunctionNode keeps what it wraps there
    if node.name in node_mocks:
        mock = node_mocks[node.name]
        if mock is node or (function is not None and mock is function):
            return node  # declared harmless: it runs as itself

        def body(arguments: dict[str, Any]) -> Any:
            return mock(**arguments) if callable(mock) else mock

    else:
        module = getattr(inspect.unwrap(function), "__module__", None) if function else None

        def body(arguments: dict[str, Any]) -> Any:
            return refuse(node.name, where, module, arguments)

    return _function_node_like(node, body)


def _function_node_like(node: BaseNode, body: Callable[[dict[str, Any]], Any]) -> FunctionNode:
    """A FunctionNode with `node`'s name, signature and settings that runs `body` instead."""
    original = inspect.unwrap(getattr(node, "_func", None) or _takes_node_input)

    async def run(**arguments: Any) -> Any:
        return await call_user(body, arguments)

    run.__name__ = run.__qualname__ = node.name
    run.__doc__ = original.__doc__
    run.__annotations__ = dict(getattr(original, "__annotations__", {}))
    run.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    settings = {
        key: getattr(node, key)
        for key in (
            "rerun_on_resume",
            "retry_config",
            "timeout",
            "auth_config",
            "require_confirmation",
            "parameter_binding",
            "state_schema",
        )
        if hasattr(node, key)
    }
    replacement = FunctionNode(func=run, name=node.name, **settings)
    for key in ("description", "wait_for_output", "input_schema", "output_schema"):
        setattr(replacement, key, getattr(node, key))
    return replacement


def _takes_node_input(node_input: Any) -> Any:
    """The signature of a replaced node that is not a function node."""
    return node_input
