"""Remote agents (ADK's `RemoteA2aAgent`): a side effect like a tool, refused unless declared.

A remote agent sends the conversation to another service over A2A: its agent
card is fetched from its URL as soon as an agent that can transfer to it asks
its model (to describe it, unless it has a description of its own), and the
user's words go to its URL (``message/send``) when it runs. None of that passes
through a tool callback, so the interception plugin cannot stand in for it.
`RemotePolicy.build` finds every remote agent of the tree a run starts with
(the root, a sub-agent, the agent inside an `AgentTool`, a workflow node, at
any depth) and decides each before anything runs:

* ``remote_mocks[name]`` is a mock (a `RemoteMock`, a `RemoteReply`, a list
  of replies, a function of the request's text): `with_remote_mocks` has put
  its stand-in in the run's copy of the tree, ADK's own `RemoteA2aAgent`
  answered in process by the mock's A2A server (see ``_a2a``); nothing is sent;
* ``remote_mocks[name]`` is the agent itself (or the case's copy of it, when
  per-case models copy the tree), or a workflow node's ``node_mocks[name]`` is:
  it runs for real, as a provided tool does;
* every way to it goes through an `AgentTool` that ``tool_mocks`` mocks: it
  never runs;
* anything else: `RemotePolicy.refusal` ends the run when it starts, with the
  `EvalToolError` an unmocked tool gets, so nothing reaches the remote agent.

``remote_mocks`` is keyed by the remote agent's name, as ``tool_mocks`` is by
the tool's, and resolved here.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.workflow import Workflow

from .._agent_tree import nodes_of, with_models
from .._errors import EvalSetupError, EvalToolError

if TYPE_CHECKING:
    from ._a2a._replies import RemoteMock

__all__ = ["RemotePlace", "RemotePolicy", "is_remote_agent", "with_remote_mocks"]

_MOCK_HOST = "remote-mock.adk-eval.invalid"
"""The host of a stand-in's card (``_a2a._served.MOCK_HOST``; ``.invalid`` never resolves)."""

_REMOTE_MODULES = ("google.adk.agents.remote_a2a_agent", "google.adk.a2a.agent._remote_a2a_agent")
"""Where ADK gives `RemoteA2aAgent` (its public name) and defines it: code that makes
one has imported one of them."""


def _remote_classes() -> tuple[type, ...]:
    """ADK's `RemoteA2aAgent` class, once imported (nothing is imported here)."""
    found = (getattr(sys.modules.get(name), "RemoteA2aAgent", None) for name in _REMOTE_MODULES)
    return tuple({kind for kind in found if isinstance(kind, type)})


def is_remote_agent(agent: object) -> bool:
    """Whether `agent` is ADK's `RemoteA2aAgent` (or a subclass)."""
    kinds = _remote_classes()
    return bool(kinds) and isinstance(agent, kinds)


def remote_address(agent: BaseAgent) -> str:
    """Where `agent` reaches out to: ``its agent card URL-or-file``, or the card's own URL."""
    source = getattr(agent, "_agent_card_source", None)
    if isinstance(source, str) and source:
        return f"its agent card {source}"
    card = getattr(agent, "_agent_card", None)
    url = getattr(card, "url", None)  # an a2a-sdk 0.3 card
    if not url:  # a 1.x card: its interfaces' URLs
        url = next((i.url for i in getattr(card, "supported_interfaces", ()) if i.url), None)
    return str(url) if url else "the URL of its agent card"


@dataclass(frozen=True)
class RemotePlace:
    """Where a remote agent sits in a tree.

    Attributes:
        agent: The remote agent.
        where: Where it sits, for messages (``sub-agent `helper` of `root```).
        inside: The `AgentTool`s it is reached through, outermost first.
        node: Whether it is a workflow node.
    """

    agent: BaseAgent
    where: str
    inside: tuple[str, ...] = ()
    node: bool = False


def remote_places(root: BaseAgent | Workflow) -> list[RemotePlace]:
    """Every place of a remote agent in the tree, each way to it counted."""
    if not _remote_classes():  # no remote agent was ever made in this process
        return []
    return list(_visit(root, f"agent `{root.name}`", (), False, frozenset()))


def _visit(
    agent: BaseAgent | Workflow,
    where: str,
    inside: tuple[str, ...],
    node: bool,
    path: frozenset[int],
) -> Iterator[RemotePlace]:
    if id(agent) in path:  # an AgentTool of one of its own ancestors
        return
    path = path | {id(agent)}
    if isinstance(agent, Workflow):
        for child in nodes_of(agent):
            if isinstance(child, BaseAgent | Workflow):
                at = f"node `{child.name}` of workflow `{agent.name}`"
                yield from _visit(child, at, inside, True, path)
        return
    if is_remote_agent(agent):
        yield RemotePlace(agent, where, inside, node)
    for tool in agent.tools if isinstance(agent, LlmAgent) else []:
        if isinstance(tool, AgentTool):
            at = f"agent `{tool.agent.name}` inside AgentTool `{tool.name}` of `{agent.name}`"
            yield from _visit(tool.agent, at, (*inside, tool.name), False, path)
    for sub in agent.sub_agents:
        yield from _visit(sub, f"sub-agent `{sub.name}` of `{agent.name}`", inside, False, path)


def _same(value: object, agent: BaseAgent) -> bool:
    """`value` is `agent`, or the agent it was copied from (same class, name and address)."""
    return value is agent or (
        type(value) is type(agent)
        and getattr(value, "name", None) == agent.name
        and remote_address(value) == remote_address(agent)
    )


@dataclass(frozen=True)
class RemotePolicy:
    """Which remote agents of a tree run for real, and the run's error if one may not."""

    real: frozenset[str] = frozenset()
    """The names of the remote agents the case declares (they run for real)."""
    mocked: frozenset[str] = frozenset()
    """The names of the remote agents a mock answers (their stand-ins run)."""
    refusal: EvalToolError | None = None
    """The run's error when a remote agent is neither declared nor behind a mock."""

    @classmethod
    def build(
        cls,
        root: BaseAgent | Workflow,
        remote_mocks: Mapping[str, Any],
        *,
        node_mocks: Mapping[str, Any],
        mocked_tools: Container[str],
    ) -> RemotePolicy:
        """Resolves `remote_mocks` against the remote agents of the tree (see the module doc).

        Raises:
            EvalSetupError: A name of `remote_mocks` is no remote agent of the tree
                (with a did-you-mean), or its value is not that agent.
        """
        places = remote_places(root)
        _check(remote_mocks, places)

        def declared(place: RemotePlace) -> bool:
            name = place.agent.name
            in_nodes = place.node and _same(node_mocks.get(name), place.agent)
            return in_nodes or _same(remote_mocks.get(name), place.agent)

        def mocked(place: RemotePlace) -> bool:
            name = place.agent.name
            return _as_mock(name, remote_mocks.get(name)) is not None and is_stand_in(place.agent)

        refused = [
            place
            for place in places
            if not declared(place)
            and not mocked(place)
            and not any(tool in mocked_tools for tool in place.inside)
        ]
        return cls(
            real=frozenset(place.agent.name for place in places if declared(place)),
            mocked=frozenset(place.agent.name for place in places if mocked(place)),
            refusal=_refusal(refused) if refused else None,
        )


def _as_mock(name: str, value: Any) -> RemoteMock | None:
    """`value` as the mock of remote agent `name` (`_a2a.remote_mock`), None if it is none."""
    from ._a2a._replies import remote_mock  # only for a tree or a case with remote agents

    return remote_mock(name, value)


def _check(remote_mocks: Mapping[str, Any], places: list[RemotePlace]) -> None:
    by_name = {place.agent.name: place.agent for place in places}
    for name, value in remote_mocks.items():
        if not isinstance(name, str):
            raise EvalSetupError(
                f"remote_mocks keys must be remote agent names (str), got {name!r}"
            )
        agent = by_name.get(name)
        if agent is None:
            close = difflib.get_close_matches(name, sorted(by_name), n=1)
            hint = f" Did you mean `{close[0]}`?" if close else ""
            found = ", ".join(f"`{n}`" for n in sorted(by_name)) or "(none)"
            raise EvalSetupError(
                f"remote_mocks names `{name}`, but the agent tree has no RemoteA2aAgent by that "
                f"name.{hint} Remote agents found: {found}."
            )
        if not _same(value, agent) and _as_mock(name, value) is None:
            raise EvalSetupError(
                f"remote_mocks[{name!r}] must be a mock of it (RemoteMock, RemoteReply, a list "
                "of replies or a function of the request's text) or the RemoteA2aAgent "
                f"`{name}` itself, which then runs for real (reaching {remote_address(agent)}); "
                f"got {value!r}"
            )


def _refusal(refused: list[RemotePlace]) -> EvalToolError:
    """The error of remote agents the case neither declares nor mocks (the first named)."""
    first, agent = refused[0], refused[0].agent
    lines = [
        f"Remote agent `{agent.name}` ({first.where}) would be called during eval but no mock "
        f"was provided; nothing was sent to {remote_address(agent)}. To let it run for real: "
        f'remote_mocks={{"{agent.name}": <the RemoteA2aAgent itself>}}',
        "",
        "A RemoteA2aAgent calls another service outside ADK's tool callbacks: its agent card "
        "can be fetched as soon as an agent that can transfer to it asks its model, and the "
        "user's words go to it when it runs, so the run stops before it starts.",
        "",
        "To keep it from running instead:",
        f'  mock it: remote_mocks={{"{agent.name}": RemoteMock.scripted(["<its reply>"])}}',
    ]
    if first.inside:
        tool = first.inside[-1]
        lines.append(f'  mock the AgentTool that runs it: tool_mocks={{"{tool}": ToolMock(...)}}')
    lines.append("  evaluate a copy of the agent without it")
    more = {place.agent.name: place.where for place in refused[1:] if place.agent is not agent}
    if more:
        listed = ", ".join(f"`{name}` ({where})" for name, where in more.items())
        lines += ["", f"Also refused: {listed}."]
    return EvalToolError(agent.name, {}, detail="\n".join(lines), kind="agent")


def is_stand_in(agent: BaseAgent) -> bool:
    """Whether `agent` is a mock's stand-in (its card's RPC is the in-process mock host)."""
    return is_remote_agent(agent) and f"//{_MOCK_HOST}/" in remote_address(agent)


def with_remote_mocks(
    root: BaseAgent | Workflow, remote_mocks: Mapping[str, Any], harness: Any = None
) -> BaseAgent | Workflow:
    """`root`, or a copy of its tree whose mocked remote agents are their mocks' stand-ins.

    A remote agent of the tree whose ``remote_mocks`` value is a mock is
    replaced, wherever it sits, by ADK's `RemoteA2aAgent` answered in process
    by the mock (a fresh one per call: each run's scripted replies start over).
    A `RemoteMock.local` runs its agent with the plugins `harness` (a
    ``_a2a._harness.HarnessPlugins``) will hold. The user's tree is not changed.
    """
    mocks = {
        name: mock for name, value in remote_mocks.items() if (mock := _as_mock(str(name), value))
    }
    if not mocks or not any(p.agent.name in mocks for p in remote_places(root)):
        return root
    from ._a2a._harness import HarnessPlugins
    from ._a2a._local import local_stand_in
    from ._a2a._served import stand_in

    plugins = harness if harness is not None else HarnessPlugins()

    def replace(agent: BaseAgent) -> BaseAgent | None:
        mock: RemoteMock | None = mocks.get(agent.name)
        if mock is None or not is_remote_agent(agent) or is_stand_in(agent):
            return None
        if mock.agent is not None:
            local: BaseAgent = local_stand_in(agent, mock, plugins)
            return local
        stood: BaseAgent = stand_in(agent, mock)
        return stood

    return with_models(root, {}, replace_agent=replace)
