"""Toolsets replaced as a whole (`ToolsetMock`): their tools declared, nothing of them started.

A toolset lists its tools when ADK builds a model request: an `McpToolset` over
stdio starts its server for that (``npx ...``: code from the network, on the
machine running the case), one over HTTP connects, an OpenAPI toolset reads its
spec. Mocking every call does not stop that. `EvalCase(toolset_mocks=...)` puts
a `ToolsetMock` in the toolset's place in the case's copy of the tree: the
agent is told about the tools it declares, exactly as the toolset would have
listed them, and `tool_mocks` answers their calls as any other tool's (a call
with no mock stops the run). The toolset object itself is never asked for
anything, so nothing of it starts.

The stand-in keeps what ADK does with the toolset's list: its ``tool_filter``
(names, or a predicate) hides the tools it leaves out, whose calls ADK answers
"not found", and its ``tool_name_prefix`` names the tools the agent sees. For
an `McpToolset`, each answer reaches the model as `McpTool` gives it, a
``CallToolResult`` (`_mcp`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.adk.workflow import Workflow
from google.genai import types
from pydantic import ValidationError

from .._agent_tree import walk
from .._errors import EvalSetupError
from .._strict_json import load_file
from ._mcp import mcp_toolset_class

__all__ = ["ToolsetMock", "resolve_toolset_mocks"]

RECORDING_VERSION = 1
"""The version of the file `ToolsetMock.record` writes."""


class _DeclaredTool(BaseTool):
    """A tool of a `ToolsetMock`: a declaration, no body (the interception answers it).

    `answers_as_mcp`: it stands for an `McpToolset`'s tool (see `_mcp`).
    """

    def __init__(self, declaration: types.FunctionDeclaration, *, mcp: bool = False) -> None:
        super().__init__(name=declaration.name or "", description=declaration.description or "")
        self._declaration = declaration
        self.answers_as_mcp = mcp

    def _get_declaration(self) -> types.FunctionDeclaration:
        return self._declaration.model_copy(deep=True)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        raise RuntimeError(  # the interception swaps the body of every tool before ADK calls it
            f"`{self.name}` is a declaration without a body; its ToolMock in tool_mocks answers it"
        )


class _MockedToolset(BaseToolset):
    """The stand-in the case's tree holds instead of the toolset: its filter and prefix too."""

    def __init__(
        self,
        tools: list[BaseTool],
        *,
        tool_filter: Any = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self._tools = tools

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return [tool for tool in self._tools if self._is_tool_selected(tool, readonly_context)]

    async def close(self) -> None:
        return None


class ToolsetMock:
    """Stands in for a whole toolset: its tools are declared here, nothing of it starts.

    Example:
        ``ToolsetMock({"read_file": {"description": "Reads a file.", "parameters":
        {"type": "object", "properties": {"path": {"type": "string"}},
        "required": ["path"]}}})``

    Args:
        tools: Tool name -> ``{"description": ..., "parameters": <JSON schema>}``,
            the names as the toolset lists them (as `record` writes them): the
            replaced toolset's ``tool_filter`` and ``tool_name_prefix`` apply to
            them. `from_recording` reads them from a file instead.
    """

    def __init__(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        if not isinstance(tools, Mapping) or not tools:
            raise EvalSetupError(
                "ToolsetMock needs its tools: {name: {'description': ..., 'parameters': "
                "<JSON schema>}}, or ToolsetMock.from_recording(path)"
            )
        declarations = []
        for name, spec in tools.items():
            if not isinstance(name, str) or not isinstance(spec, Mapping):
                raise EvalSetupError(
                    f"ToolsetMock: tool {name!r} needs a name (str) and a mapping with "
                    f"'description' and 'parameters', got {spec!r}"
                )
            parameters = spec.get("parameters")
            if parameters is not None and not isinstance(parameters, Mapping):
                raise EvalSetupError(
                    f"ToolsetMock: the parameters of `{name}` must be a JSON schema (a mapping)"
                )
            declarations.append(
                types.FunctionDeclaration(
                    name=name,
                    description=str(spec.get("description", "")),
                    parameters_json_schema=dict(parameters) if parameters is not None else None,
                )
            )
        self.declarations: tuple[types.FunctionDeclaration, ...] = tuple(declarations)
        """What the agent is told about each tool."""

    @classmethod
    def _of(cls, declarations: Sequence[types.FunctionDeclaration]) -> ToolsetMock:
        mock = cls.__new__(cls)
        mock.declarations = tuple(declarations)
        return mock

    @property
    def names(self) -> list[str]:
        """The names of the tools it declares."""
        return [declaration.name or "" for declaration in self.declarations]

    def tools(self, *, mcp: bool = False) -> list[BaseTool]:
        """Its tools: each a declaration without a body (the interception answers it).

        `mcp`: they stand for an `McpToolset`'s tools, answering as `McpTool` does.
        """
        return [_DeclaredTool(d, mcp=mcp) for d in self.declarations]

    def toolset(self, replaced: BaseToolset | None = None) -> BaseToolset:
        """A fresh toolset listing these tools, in `replaced`'s place (what the case's tree holds).

        It keeps `replaced`'s ``tool_filter`` and ``tool_name_prefix``, and, for an
        `McpToolset`, answers as its tools would (see the module doc).
        """
        mcp_toolset = mcp_toolset_class()
        mcp = mcp_toolset is not None and isinstance(replaced, mcp_toolset)
        return _MockedToolset(
            self.tools(mcp=mcp),
            tool_filter=getattr(replaced, "tool_filter", None),
            tool_name_prefix=getattr(replaced, "tool_name_prefix", None),
        )

    @classmethod
    def from_recording(cls, path: str | Path) -> ToolsetMock:
        """The tools a toolset listed when `record` wrote `path`, declared as it declared them."""
        how = f"write one with `await ToolsetMock.record(toolset, {str(path)!r})`"
        try:
            data = load_file(Path(path), "a toolset recording")
        except EvalSetupError as error:
            raise EvalSetupError(f"{path} is not a toolset recording ({error}); {how}") from None
        tools = data.get("tools") if isinstance(data, Mapping) else None
        if not isinstance(tools, list) or data.get("version") != RECORDING_VERSION:
            raise EvalSetupError(
                f"{path} is not a toolset recording (version {RECORDING_VERSION}); {how}"
            )
        try:
            return cls._of([types.FunctionDeclaration.model_validate(t) for t in tools])
        except ValidationError as error:
            raise EvalSetupError(f"{path}: a tool declaration is not valid: {error}") from None

    @classmethod
    async def record(cls, toolset: BaseToolset, path: str | Path) -> ToolsetMock:
        """Lists `toolset`'s tools once, for real, and writes their declarations to `path`.

        This starts the toolset (an MCP server's process or connection): run it
        by hand, once, where that is allowed; cases then use `from_recording`.
        An earlier recording at `path` is replaced; any other file is refused.
        """
        target = Path(path)
        if await anyio.Path(target).exists():
            cls.from_recording(target)  # raises for a file that is not a recording
        try:
            tools = await toolset.get_tools()
            declarations = [tool._get_declaration() for tool in tools]
        finally:
            await toolset.close()
        found = [declaration for declaration in declarations if declaration is not None]
        records = [d.model_dump(mode="json", exclude_none=True) for d in found]
        data = {"version": RECORDING_VERSION, "toolset": type(toolset).__name__, "tools": records}
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        await anyio.to_thread.run_sync(_write, target, text)
        return cls._of(found)


def _write(path: Path, text: str) -> None:
    """Writes `text` to `path` whole or not at all."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)


def resolve_toolset_mocks(
    root: BaseAgent | Workflow, toolset_mocks: Mapping[Any, Any], *, case: str
) -> dict[int, ToolsetMock]:
    """The toolsets of the tree `toolset_mocks` replaces, by id (keys: the object or class name).

    Raises:
        EvalSetupError: For a value that is no `ToolsetMock`, or a key that names no
            toolset of the tree, or more than one.
    """
    found = [
        (tool, agent.name)
        for agent, _ in walk(root)
        if isinstance(agent, LlmAgent)
        for tool in agent.tools
        if isinstance(tool, BaseToolset)
    ]
    listed = ", ".join(f"{type(t).__name__} (agent `{a}`)" for t, a in found) or "none"
    resolved: dict[int, ToolsetMock] = {}
    for key, mock in toolset_mocks.items():
        if not isinstance(mock, ToolsetMock):
            raise EvalSetupError(
                f"EvalCase `{case}`: toolset_mocks values must be ToolsetMock(...), got {mock!r}"
            )
        matches = [t for t, _ in found if t is key or type(t).__name__ == key]
        if len(matches) != 1:
            problem = "names no toolset of the agent tree" if not matches else "is ambiguous"
            raise EvalSetupError(
                f"EvalCase `{case}`: toolset_mocks key {key!r} {problem}; key it by the "
                f"toolset object or its class name. Toolsets found: {listed}."
            )
        resolved[id(matches[0])] = mock
    return resolved
