"""What the model reads from an MCP tool: ADK's `McpTool` hands it the server's `CallToolResult`.

`McpTool` returns the JSON dump of the result the server sent, keyed as mcp 1.x
keyed it and without its empty fields: ``{"content": [...], "structuredContent":
..., "isError": ...}``. A mock's answer to an MCP tool reaches the model in that
form too, whichever way the tool is mocked: an `McpToolset` listed for real with
a `ToolMock` for its tool, a `ToolsetMock` standing in for an `McpToolset`, or
``adk-eval mock-mcp`` serving the mock (which sends the same result over the
wire). The mock's value is the text content (a string as it is, anything else as
JSON) and the structured content (a dict as it is, anything else as
``{"result": value}``). A value already shaped as a result (a ``content`` list of
content blocks, with at most ``structuredContent``, ``isError`` and ``meta``) is
the result itself, so a recorded MCP answer, or an error result, is read as it is.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from google.adk.tools.base_tool import BaseTool

from ._mocks import normalize_response

__all__ = ["answers_as_mcp", "is_mcp_result", "mcp_error", "mcp_result", "mcp_text"]

_RESULT_KEYS = frozenset({"content", "structuredContent", "isError", "meta"})


def mcp_text(value: Any) -> str:
    """The text content a value is sent as: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, default=repr)


def is_mcp_result(value: Any) -> bool:
    """Whether `value` is already a `CallToolResult` as ADK dumps it (see the module doc)."""
    if not isinstance(value, Mapping) or not set(value) <= _RESULT_KEYS:
        return False
    content = value.get("content")
    return isinstance(content, list) and all(
        isinstance(block, Mapping) and isinstance(block.get("type"), str) for block in content
    )


def mcp_result(value: Any) -> dict[str, Any]:
    """What the model reads when an MCP tool answers `value`."""
    if is_mcp_result(value):
        return {"isError": False, **value}
    return {
        "content": [{"type": "text", "text": mcp_text(value)}],
        "structuredContent": normalize_response(value),
        "isError": False,
    }


def mcp_error(text: str) -> dict[str, Any]:
    """An error result: `text` as its one text content."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def answers_as_mcp(tool: BaseTool) -> bool:
    """Whether ADK would hand the model `tool`'s answer as an MCP result.

    ADK's own `McpTool`, and the tools of a `ToolsetMock` standing in for an
    `McpToolset` (they carry ``answers_as_mcp``).
    """
    if getattr(tool, "answers_as_mcp", False):
        return True
    mcp_tool = _mcp_tool_class()
    return mcp_tool is not None and isinstance(tool, mcp_tool)


def _mcp_tool_class() -> type[BaseTool] | None:
    """ADK's `McpTool`, if its module was imported (else no tool can be one)."""
    module = sys.modules.get("google.adk.tools.mcp_tool.mcp_tool")
    return getattr(module, "McpTool", None)


def mcp_toolset_class() -> type[Any] | None:
    """ADK's `McpToolset`, if its module was imported (else no toolset can be one)."""
    module = sys.modules.get("google.adk.tools.mcp_tool.mcp_toolset")
    return getattr(module, "McpToolset", None)
