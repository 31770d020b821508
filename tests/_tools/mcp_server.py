"""A real MCP server over stdio, for the toolset tests: it notes when it starts and what runs.

Every start and every tool body appends a line to the file named by
``ADK_EVAL_TEST_MCP_MARKER``, so a test can tell whether the server ran at all.
"""

from __future__ import annotations

import os
from pathlib import Path

try:  # mcp 2
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1
    from mcp.server.fastmcp import FastMCP as Server

MARKER = Path(os.environ["ADK_EVAL_TEST_MCP_MARKER"])


def note(line: str) -> None:
    with MARKER.open("a") as marker:
        marker.write(line + "\n")


server = Server("files")


@server.tool()
def read_file(path: str) -> str:
    """Reads a text file from the project."""
    note(f"read_file {path}")
    return Path(path).read_text()


@server.tool()
def delete_file(path: str, force: bool = False) -> str:
    """Deletes a file (a side effect no case may cause)."""
    note(f"delete_file {path}")
    return "deleted"


if __name__ == "__main__":
    note("started")
    server.run("stdio")
