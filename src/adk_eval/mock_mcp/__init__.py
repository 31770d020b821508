"""A mock MCP server: adk-eval's tool mocks served to agents outside this process or outside ADK.

* `MockMcpServer`: the tools a file or a list declares, answered by their
  `ToolMock`s (fixed answers, functions, recordings, simulating models, with
  faults and injections), over stdio or streamable HTTP on loopback; an unknown
  tool's call is an error result, never an answer; every call is logged to an
  ADK session store that ``adk-eval score`` reads.
* `LoggedCall`: one call as the server answered or refused it.
* ``adk-eval mock-mcp TOOLS.py --stdio | --http 127.0.0.1:PORT`` starts one
  (see ``docs/harness.md``, "Mock MCP server").

The modules, from the bottom up: `_declared` (the tools served, from a file or
a list), `_log` (the call log), `_answering` (one call answered, default-deny),
`_stdio` (stdin's end held back until every call read is answered), `_server`
(the MCP server and its transports).

Names are imported on first use; the `mcp` SDK only when a server starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._log import LoggedCall as LoggedCall
    from ._server import MockMcpServer as MockMcpServer

_EXPORTS = {
    "MockMcpServer": "._server",
    "LoggedCall": "._log",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
