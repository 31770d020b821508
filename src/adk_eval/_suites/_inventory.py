"""What of the user's code and set-up runs for real in a suite, read off its cases before they run.

Interception replaces tool bodies. Everything else the agent under test brings
runs as it would in production: an App's plugins, every agent callback, a
toolset's listing of its tools (which starts an MCP server's process or opens
its connection), and whatever telemetry or model-call logging the agent's
modules installed; a deployed agent under test, reached over A2A, runs whole
in its own service. `RunsForReal` names each, so a report never hides a channel
that could leave the machine; `of_trees` reads it off the agents and Apps of a
suite without running anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.apps import App
from google.adk.tools.base_toolset import BaseToolset
from google.adk.workflow import Workflow

from .._agent_tree import CALLBACK_FIELDS, qualified_name, walk
from .._tools._remote import is_remote_agent, remote_address

__all__ = ["RunsForReal", "of_trees"]


@dataclass(frozen=True)
class RunsForReal:
    """What of the user's code and set-up runs for real, beyond the tools a case provides.

    Attributes:
        deployed: Agents under test reached over A2A (each runs for real in its service).
        plugins: The plugins of the user's Apps (``shop.SinkPlugin (`sink`) of App `shop```).
        callbacks: Each agent callback by qualified name, with its agent.
        toolsets: Toolsets whose listing starts a process or opens a connection.
        telemetry: Span and log exporters, and model-call logging callbacks, the
            user's code installed, with what happens to them during runs.
        shipping: For a Ray cluster: what is shipped, and where.
        sandbox: What the sandbox does with the rest (processes, connections off
            the machine, name lookups, file writes), per mode.
    """

    deployed: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    callbacks: tuple[str, ...] = ()
    toolsets: tuple[str, ...] = ()
    telemetry: tuple[str, ...] = ()
    shipping: tuple[str, ...] = ()
    sandbox: tuple[str, ...] = ()

    @property
    def nothing(self) -> bool:
        """Whether nothing but the tools the cases provide runs for real (the sandbox aside)."""
        return not any(getattr(self, f.name) for f in fields(self) if f.name != "sandbox")

    def lines(self) -> list[str]:
        """One line per item, under its kind (nothing when there is nothing)."""
        out: list[str] = []
        for field in fields(self):
            for item in getattr(self, field.name):
                out.append(f"{field.name}: {item}")
        return out

    def to_data(self) -> dict[str, list[str]]:
        """The JSON-ready form (every kind, empty lists included)."""
        return {field.name: list(getattr(self, field.name)) for field in fields(self)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> RunsForReal:
        """What `to_data` wrote (unknown kinds are left out)."""
        data = data or {}
        return cls(**{f.name: tuple(str(i) for i in data.get(f.name, ())) for f in fields(cls)})

    def merged(self, other: RunsForReal) -> RunsForReal:
        """Both, each item once, in order."""
        return RunsForReal(
            **{
                f.name: tuple(dict.fromkeys((*getattr(self, f.name), *getattr(other, f.name))))
                for f in fields(self)
            }
        )

    def with_items(self, **kinds: Sequence[str]) -> RunsForReal:
        """This with more items of the named kinds."""
        return self.merged(RunsForReal(**{kind: tuple(items) for kind, items in kinds.items()}))


def of_trees(trees: Iterable[BaseAgent | App | Workflow]) -> RunsForReal:
    """What runs for real in these agents and Apps (each item once, in order)."""
    deployed: list[str] = []
    plugins: list[str] = []
    callbacks: list[str] = []
    toolsets: list[str] = []
    for tree in trees:
        root = tree.root_agent if isinstance(tree, App) else tree
        if isinstance(tree, App):
            plugins += [
                f"{qualified_name(type(plugin))} (`{plugin.name}`) of App `{tree.name}`"
                for plugin in tree.plugins
            ]
        if not isinstance(root, BaseAgent | Workflow):
            continue
        if isinstance(root, BaseAgent) and is_remote_agent(root):
            deployed.append(_deployed(root))
            continue
        for agent, where in walk(root):
            callbacks += _callbacks(agent, where)
            for tool in agent.tools if isinstance(agent, LlmAgent) else []:
                if isinstance(tool, BaseToolset):
                    found = _toolset(tool, where)
                    if found:
                        toolsets.append(found)
    return RunsForReal(
        deployed=tuple(dict.fromkeys(deployed)),
        plugins=tuple(dict.fromkeys(plugins)),
        callbacks=tuple(dict.fromkeys(callbacks)),
        toolsets=tuple(dict.fromkeys(toolsets)),
    )


def _deployed(agent: BaseAgent) -> str:
    """What a deployed agent under test does for real: all of it, in its own service."""
    return (
        f"agent `{agent.name}` over A2A at {remote_address(agent)}: the agent under test, "
        "whole, in its own service (its tools and remote agents too, unless it points them "
        "at adk-eval mock-mcp and mock-a2a)"
    )


def _callbacks(agent: BaseAgent, where: str) -> list[str]:
    found = []
    for field in CALLBACK_FIELDS:
        value = getattr(agent, field, None)
        for callback in value if isinstance(value, list) else [value]:
            if callback is None:
                continue
            name = qualified_name(callback)
            if not name.startswith("adk_eval."):  # the harness's own run as part of it
                found.append(f"{name} ({field} of {where})")
    return found


def _toolset(toolset: BaseToolset, where: str) -> str | None:
    """What listing `toolset`'s tools does, if it reaches outside (None for a stand-in)."""
    kind = type(toolset).__name__
    if type(toolset).__module__.startswith("adk_eval."):
        return None  # a ToolsetMock's stand-in: nothing of the toolset runs
    params = getattr(toolset, "_connection_params", None)
    server = getattr(params, "server_params", params)
    command = getattr(server, "command", None)
    if isinstance(command, str):
        line = " ".join([command, *(str(arg) for arg in getattr(server, "args", None) or [])])
        return f"{kind} of {where} starts `{line}`"
    url = getattr(params, "url", None)
    if isinstance(url, str):
        return f"{kind} of {where} connects to {url}"
    return f"{kind} of {where} lists its tools for real (its code may reach a service)"
