"""ADK 2 `Workflow` graphs under test: every node that runs code is mocked, passed or refused.

A workflow's `LlmAgent` nodes and tool nodes run through the App's plugins (the
interception plugin sees their model requests and tool calls, as in any agent).
Function nodes, custom `BaseAgent` nodes and any other node that is plain code run
outside every plugin callback, so the harness runs a *copy* of the graph in which
each such node is replaced, by name, according to ``node_mocks``:

* the node itself, or the function it wraps: it runs as itself (no side effects);
* any other callable: called with the node's arguments as keywords (those the
  function would get, ``ctx`` and ``node_input`` included); its result is the
  node's output (an `Event` or `RequestInput` passes as is);
* any other value: the node's output;
* not listed: the node does not run; the run stops with an `EvalToolError`
  naming the node, its workflow and its module, before anything else happens
  (its confirmation predicate is not asked, its credential not requested).

A remote agent node (ADK's `RemoteA2aAgent`) that ``node_mocks`` does not replace
by a mock stays in the graph: it is a remote agent first, declared in
``remote_mocks`` or refused before the run (see ``_remote.py``).

The copy keeps every edge, route, join, retry, timeout and confirmation setting;
only the code of the replaced nodes differs. The user's workflow is not changed.
A parallel worker (``parallel_worker=True``) keeps being one: its inner node is
replaced, so a mock is called once per item.

**Dynamic nodes** (``await ctx.run_node(other)`` inside a node that runs as
itself) go through the same rule, by name: the ``ctx`` such a node gets starts
`other` (a function, a node, a workflow) only as ``node_mocks`` says, so a node
declared harmless cannot start an undeclared one. A name in ``node_mocks`` that is
no node of the graph is taken for a dynamic node, unless it is nearly a node's name
(a typo is refused, with a did-you-mean; a function, node or agent declared
under its own name never is).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.events import Event
from google.adk.tools.base_tool import BaseTool
from google.adk.workflow import BaseNode, FunctionNode, JoinNode, Workflow
from google.adk.workflow._tool_node import _ToolNode

from .._agent_tree import map_nodes, nodes_of
from .._callables import call_user
from .._errors import EvalSetupError, EvalToolError
from .._quiet import quiet
from ._remote import is_remote_agent

__all__ = ["NodeRefusal", "with_node_mocks"]

NodeRefusal = Callable[[str, str, str | None, dict[str, Any]], Event]
"""``(node name, where, module, arguments) -> the error event`` of an unlisted node."""

_SEEN_AGENTS = (LlmAgent, SequentialAgent, ParallelAgent, LoopAgent)
"""Agents whose work the plugins see (model calls, tool calls, sub-agents): not code."""

_SETTINGS = (
    "rerun_on_resume",
    "retry_config",
    "timeout",
    "auth_config",
    "require_confirmation",
    "parameter_binding",
    "state_schema",
)
"""A node's settings its replacement keeps (a refused node drops the last but two)."""


def _runs_code(node: BaseNode) -> bool:
    """Whether the plugins cannot see `node` run: a function node, a custom agent, any other."""
    if isinstance(node, BaseAgent):
        return not isinstance(node, _SEEN_AGENTS)
    return type(node) not in (JoinNode, _ToolNode, Workflow)


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
        EvalSetupError: A key of `node_mocks` is close to a code node's name but is
            none (a typo).
    """
    names = sorted({node.name for node in _code_nodes(workflow)})
    for unknown in sorted(set(node_mocks) - set(names)):
        value = node_mocks[unknown]
        if unknown in (getattr(value, "__name__", None), getattr(value, "name", None)):
            continue  # the dynamic node's own function, node or agent: no typo
        close = difflib.get_close_matches(unknown, names, n=1, cutoff=0.85)
        if close:
            raise EvalSetupError(
                f"EvalCase `{case}`: node_mocks names `{unknown}`, which is no function node "
                f"of workflow `{workflow.name}` (its function nodes: {names}). Did you mean "
                f"`{close[0]}`?"
            )
    return map_nodes(workflow, _Gate(node_mocks, refuse).static_node)


class _Gate:
    """Replaces code nodes by `node_mocks` (static ones, and those started dynamically)."""

    def __init__(self, node_mocks: Mapping[str, Any], refuse: NodeRefusal) -> None:
        self._mocks = node_mocks
        self._refuse = refuse

    def node(self, node: BaseNode, where: str) -> BaseNode:
        """`node`, or what replaces it (the function `map_nodes` applies)."""
        return self._replaced(node, where) if _runs_code(node) else node

    def static_node(self, node: BaseNode, where: str) -> BaseNode:
        """`node` of the graph itself: a remote agent without a stand-in is left in place.

        The remote-agent rule decides it before the run (`RemotePolicy`: declared
        in ``remote_mocks``, else the run is refused); one started dynamically is
        no node of the tree, so `node` decides it, as any code.
        """
        stand_in = self._mocks.get(node.name)
        if is_remote_agent(node) and (stand_in is None or is_remote_agent(stand_in)):
            return node
        return self.node(node, where)

    def dynamic(self, target: Any, where: str) -> Any:
        """What ``ctx.run_node(target)`` starts instead of `target` (`where`: who starts it)."""
        if isinstance(target, Workflow):
            return map_nodes(target, self.node)
        if isinstance(target, BaseNode):
            return self.node(target, where)
        if callable(target) and not isinstance(target, BaseTool):
            return self._replaced(FunctionNode(func=target), where)
        return target  # a tool (the plugins see it), "START"

    def _replaced(self, node: BaseNode, where: str) -> BaseNode:
        function = getattr(node, "_func", None)  # FunctionNode keeps what it wraps there
        if node.name not in self._mocks:
            module = getattr(inspect.unwrap(function), "__module__", None) if function else None

            async def refused(**arguments: Any) -> Any:
                return self._refuse(node.name, where, module, arguments)

            return _worker_like(node, _function_node_like(node, refused, refused_node=True))
        mock = self._mocks[node.name]
        if mock is node or (function is not None and mock is function):
            if function is None:  # a node or agent of its own: it runs as itself
                return node
            started = f"{where} (started by node `{node.name}` with ctx.run_node)"
            return _worker_like(node, _function_node_like(node, self._gated(function, started)))
        return _worker_like(node, _function_node_like(node, _mocked(node.name, mock)))

    def _gated(self, function: Callable[..., Any], where: str) -> Callable[..., Any]:
        """`function`, with the ``ctx`` it gets starting dynamic nodes through this gate."""
        gate = self

        @contextlib.contextmanager
        def watching(ctx: Any) -> Iterator[None]:
            if ctx is None or not hasattr(ctx, "run_node"):
                yield
                return
            start = ctx.run_node

            async def run_node(target: Any, *args: Any, **options: Any) -> Any:
                return await start(gate.dynamic(target, where), *args, **options)

            ctx.run_node = run_node  # this node's own context: its dynamic nodes are gated
            try:
                yield
            finally:
                with contextlib.suppress(AttributeError):
                    del ctx.run_node

        if inspect.isasyncgenfunction(function):

            async def gated_stream(*args: Any, **kwargs: Any) -> Any:
                with watching(kwargs.get("ctx")), _reported():
                    async for item in function(*args, **kwargs):
                        yield item

            return functools.wraps(function)(gated_stream)
        if inspect.iscoroutinefunction(function):

            async def gated(*args: Any, **kwargs: Any) -> Any:
                with watching(kwargs.get("ctx")), _reported():
                    return await function(*args, **kwargs)

            return functools.wraps(function)(gated)

        if inspect.isgeneratorfunction(function):  # ADK streams what it yields, as the node's

            def plain_stream(*args: Any, **kwargs: Any) -> Any:
                with _reported():
                    yield from function(*args, **kwargs)

            return functools.wraps(function)(plain_stream)

        def plain(*args: Any, **kwargs: Any) -> Any:  # sync code cannot await ctx.run_node
            with _reported():
                return function(*args, **kwargs)

        return functools.wraps(function)(plain)


def _mocked(name: str, mock: Any) -> Callable[..., Any]:
    """What runs instead of node `name`: `mock` called with its arguments, or `mock` itself.

    A generator function (sync or async) yields its items as the node's, as ADK
    streams a generator node's; any other callable's result is the node's output.
    """

    def raised(error: Exception, arguments: dict[str, Any]) -> EvalToolError:
        detail = f"The mock for node `{name}` raised {type(error).__name__}: {error}"
        failure = EvalToolError(name, arguments, detail=detail, kind="node")
        quiet(failure)  # the result reports it: ADK need not log it too
        return failure

    if inspect.isasyncgenfunction(mock):

        async def streamed(**arguments: Any) -> Any:
            try:
                async for item in mock(**arguments):
                    yield item
            except Exception as error:
                raise raised(error, arguments) from error

        return streamed
    if inspect.isgeneratorfunction(mock):

        def generated(**arguments: Any) -> Any:
            try:
                yield from mock(**arguments)
            except Exception as error:
                raise raised(error, arguments) from error

        return generated

    async def mocked(**arguments: Any) -> Any:
        try:
            return await call_user(
                lambda values: mock(**values) if callable(mock) else mock, arguments
            )
        except Exception as error:
            raise raised(error, arguments) from error

    return mocked


@contextlib.contextmanager
def _reported() -> Iterator[None]:
    """What a node's own code raises is the run's error: ADK need not log its traceback."""
    try:
        yield
    except Exception as error:
        quiet(error)
        raise


def _function_node_like(
    node: BaseNode, run: Callable[..., Any], *, refused_node: bool = False
) -> FunctionNode:
    """A FunctionNode with `node`'s name, signature and settings that runs `run` instead.

    A refused node keeps no confirmation predicate and no auth: nothing of it runs,
    and nobody is asked for it, before the refusal.
    """
    original = inspect.unwrap(getattr(node, "_func", None) or _takes_node_input)
    if run is not getattr(node, "_func", None):
        run.__name__ = run.__qualname__ = node.name
        run.__doc__ = original.__doc__
        run.__annotations__ = dict(getattr(original, "__annotations__", {}))
        run.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    settings = {key: getattr(node, key) for key in _SETTINGS if hasattr(node, key)}
    if refused_node:
        settings.update(require_confirmation=False, auth_config=None)
    replacement = FunctionNode(func=run, name=node.name, **settings)
    for key in ("description", "wait_for_output", "input_schema", "output_schema"):
        if hasattr(node, key):
            setattr(replacement, key, getattr(node, key))
    return replacement


def _worker_like(node: BaseNode, replacement: BaseNode) -> BaseNode:
    """`replacement`, run once per item where `node` is a parallel worker (a `Node` flag)."""
    if not getattr(node, "parallel_worker", False):
        return replacement
    from google.adk.workflow._parallel_worker import _ParallelWorker

    return _ParallelWorker(
        node=replacement, max_parallel_workers=getattr(node, "max_parallel_workers", None)
    )


def _takes_node_input(node_input: Any) -> Any:
    """The signature of a replaced node that is not a function node."""
    return node_input
