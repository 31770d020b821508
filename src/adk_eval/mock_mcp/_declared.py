"""What a mock MCP server serves: each tool's declaration and the `ToolMock` answering it.

A tool is declared by what an agent's own tool list would hold: a Python
function (its signature and docstring make the schema, as ADK's `FunctionTool`
makes it), an ADK tool, a `ToolsetMock` (declared by hand or read from a
toolset recording), or a mapping ``{name: {"description": ..., "parameters":
<JSON schema>}}``. Its answers come from `tool_mocks`, keyed by tool name as in
`EvalCase(tool_mocks=...)`. Every declared tool needs a mock and every mock a
declaration: a mismatch is one `EvalSetupError` naming both sides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

from .._errors import EvalSetupError
from .._suites._discovery import import_file, put_project_on_path
from .._tools._mocks import ToolMock
from .._tools._toolsets import ToolsetMock

__all__ = ["ServedTool", "load_tools", "served_tools"]

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ServedTool:
    """One tool a mock MCP server lists and answers.

    Attributes:
        name: The tool's name, as ``tools/list`` shows it and calls name it.
        description: What ``tools/list`` says it does.
        input_schema: The JSON schema of its arguments.
        mock: What answers its calls.
        tool: The ADK tool it stands for (what a simulating model reads).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    mock: ToolMock
    tool: BaseTool


def _adk_tools(declared: Any) -> list[BaseTool]:
    """The ADK tools `declared` (one entry of `tools`, or all of them) stands for."""
    if isinstance(declared, ToolsetMock):
        return declared.tools()
    if isinstance(declared, Mapping):
        return _adk_tools(ToolsetMock(declared))
    if isinstance(declared, BaseTool):
        return [declared]
    if callable(declared):
        return [FunctionTool(declared)]
    if isinstance(declared, Sequence) and not isinstance(declared, str):
        return [tool for entry in declared for tool in _adk_tools(entry)]
    raise EvalSetupError(
        f"mock MCP `tools` entries are functions, ADK tools, ToolsetMocks or "
        f"{{name: {{'description': ..., 'parameters': <JSON schema>}}}} mappings; got {declared!r}"
    )


def _schema(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    if declaration.parameters_json_schema:
        return dict(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        dumped = declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
        return dumped or dict(_EMPTY_SCHEMA)
    return dict(_EMPTY_SCHEMA)


def _checked_mock(name: str, mock: Any) -> ToolMock:
    if callable(mock) and not isinstance(mock, ToolMock):
        raise EvalSetupError(
            f"tool_mocks[{name!r}] is a function, not a ToolMock: a mock MCP server never runs "
            f"a tool's body; wrap a function of (args, ctx) as ToolMock(fn), or answer with "
            f"ToolMock.returning(...)"
        )
    if not isinstance(mock, ToolMock):
        raise EvalSetupError(
            f"tool_mocks[{name!r}] must be a ToolMock, got {mock!r}; for a fixed answer use "
            f"ToolMock.returning({mock!r})"
        )
    if mock.real_tool is not None:
        raise EvalSetupError(
            f"tool_mocks[{name!r}] is ToolMock.real(...): a mock MCP server never runs a real "
            "tool; serve the real tool from its own MCP server, or mock it"
        )
    return mock


def served_tools(tools: Any, tool_mocks: Mapping[str, Any]) -> list[ServedTool]:
    """Each declared tool with its mock, in declaration order.

    Args:
        tools: What declares the tools (see the module doc): one entry or a list.
        tool_mocks: Tool name -> the `ToolMock` answering it.

    Raises:
        EvalSetupError: No tools, a tool declared twice, a declared tool with no
            mock, a mock with no declaration, or a value that is not a `ToolMock`.
    """
    declared: dict[str, BaseTool] = {}
    for tool in _adk_tools(tools):
        if tool.name in declared:
            raise EvalSetupError(f"mock MCP tool `{tool.name}` is declared twice in `tools`")
        declared[tool.name] = tool
    if not declared:
        raise EvalSetupError("a mock MCP server needs at least one tool in `tools`")
    unmocked = [name for name in declared if name not in tool_mocks]
    undeclared = [name for name in tool_mocks if name not in declared]
    if unmocked or undeclared:
        problems = []
        if unmocked:
            problems.append(f"declared with no mock in `tool_mocks`: {', '.join(unmocked)}")
        if undeclared:
            problems.append(f"mocked but not declared in `tools`: {', '.join(undeclared)}")
        raise EvalSetupError(
            f"mock MCP tools must be declared and mocked alike; {'; '.join(problems)}"
        )
    served = []
    for name, tool in declared.items():
        declaration = tool._get_declaration() or types.FunctionDeclaration(name=name)
        served.append(
            ServedTool(
                name=name,
                description=tool.description or declaration.description or "",
                input_schema=_schema(declaration),
                mock=_checked_mock(name, tool_mocks[name]),
                tool=tool,
            )
        )
    return served


def load_tools(path: str | Path) -> list[ServedTool]:
    """The tools a TOOLS.py file serves: its module-level `tools` and `tool_mocks`.

    The file is imported as ``adk-eval run`` imports eval files (the project's
    root first on ``sys.path``).

    Raises:
        EvalSetupError: The file does not exist or import, lacks `tools` or
            `tool_mocks`, or they do not match (see `served_tools`).
    """
    file = Path(path)
    if not file.is_file():
        raise EvalSetupError(f"{file} is not a file; give the Python file defining the tools")
    put_project_on_path()
    module = import_file(file)
    missing = [name for name in ("tools", "tool_mocks") if not hasattr(module, name)]
    if missing:
        raise EvalSetupError(
            f"{file} defines no {' and no '.join(f'`{m}`' for m in missing)}; a mock MCP tools "
            "file binds `tools = [...]` (functions, ADK tools, ToolsetMocks) and "
            "`tool_mocks = {name: ToolMock...}` at module level"
        )
    tool_mocks = module.tool_mocks
    if not isinstance(tool_mocks, Mapping):
        raise EvalSetupError(f"{file}: `tool_mocks` must be a dict of tool name -> ToolMock")
    return served_tools(module.tools, tool_mocks)
