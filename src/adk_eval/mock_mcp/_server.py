"""`MockMcpServer`: adk-eval's mocks served over MCP (stdio, or streamable HTTP on loopback).

Built on the `mcp` SDK's low-level `Server` (mcp 2.x, imported when a server
starts: ``pip install "adk-eval[mcp]"``), with two handlers: ``tools/list``
lists the served tools and nothing else, ``tools/call`` answers through
`_answering` and logs the call (`_log`). Over HTTP it listens on a loopback
address unless told otherwise (`allow_remote`; the refusal is every server's,
`_sandbox._loopback.refuse_remote`): the mocks answer anyone who can reach the
port, and the SDK's DNS-rebinding protection is on for loopback hosts.
"""

from __future__ import annotations

import errno
import sys
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from .._errors import EvalSetupError
from .._sandbox._loopback import is_loopback, refuse_remote
from .._seeds import DEFAULT_SEED
from .._tools._mcp import mcp_error
from ._answering import Answer, Conversation, answer_call
from ._declared import ServedTool, load_tools, served_tools
from ._log import CallLog, LoggedCall
from ._stdio import serve_stdio_streams

__all__ = ["MockMcpServer", "echo_call", "printable"]

_INSTALL = 'pip install "adk-eval[mcp]"'


def _sdk() -> tuple[Any, Any]:
    """The `mcp` SDK's low-level `Server` and its types module (mcp 2.x)."""
    try:
        import mcp_types
        from mcp.server.lowlevel import Server
    except ImportError:
        raise EvalSetupError(
            f"the mock MCP server needs the `mcp` package, version 2: {_INSTALL}"
        ) from None
    return Server, mcp_types


class MockMcpServer:
    """An MCP server answering tool calls from `ToolMock`s.

    Example:
        ``MockMcpServer(tools=[get_order], tool_mocks={"get_order":
        ToolMock.returning({"status": "shipped"})}, log="calls.db")``

    Only the declared tools are listed and answered; a call to any other tool
    gets an error result naming it and the served tools (and is logged).

    Args:
        tools: What declares the tools: functions, ADK tools, `ToolsetMock`s, or
            ``{name: {"description": ..., "parameters": <JSON schema>}}``.
        tool_mocks: Tool name -> the `ToolMock` answering it.
        log: An SQLite file the calls are logged to, one ADK session per
            connection (``adk-eval score sqlite:///LOG``); None logs nothing.
        seed: What seeded faults and injections (`ToolMock.with_faults`,
            `with_injection`) are drawn from.
        on_call: Called with each call as it is answered (the CLI prints it).
        name: The server's name in its ``initialize`` answer.

    Raises:
        EvalSetupError: Tools and mocks do not match (see `tool_mocks`).
    """

    def __init__(
        self,
        tools: Any,
        tool_mocks: Mapping[str, Any],
        *,
        log: str | Path | None = None,
        seed: int = DEFAULT_SEED,
        on_call: Callable[[LoggedCall], None] | None = None,
        name: str = "adk-eval-mock",
    ) -> None:
        self._setup(served_tools(tools, tool_mocks), log, seed, on_call, name)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        log: str | Path | None = None,
        seed: int = DEFAULT_SEED,
        on_call: Callable[[LoggedCall], None] | None = None,
    ) -> MockMcpServer:
        """The server of a tools file: its module-level `tools` and `tool_mocks`."""
        server = cls.__new__(cls)
        server._setup(load_tools(path), log, seed, on_call, f"adk-eval-mock {Path(path).name}")
        return server

    def _setup(
        self,
        served: list[ServedTool],
        log: str | Path | None,
        seed: int,
        on_call: Callable[[LoggedCall], None] | None,
        name: str,
    ) -> None:
        self.served: dict[str, ServedTool] = {tool.name: tool for tool in served}
        """The served tools, by name, in declaration order."""
        self.calls: list[LoggedCall] = []
        """Every call answered or refused so far, in order."""
        self._log = CallLog(Path(log)) if log is not None else None
        self._seed, self._on_call, self._name = seed, on_call, name
        self._conversations: dict[str, Conversation] = {}
        self._opening = anyio.Lock()

    def lowlevel(self) -> Any:
        """The `mcp.server.lowlevel.Server` serving the tools (to run on any transport)."""
        server_class, types = _sdk()

        async def list_tools(ctx: Any, params: Any) -> Any:
            listed = [
                types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in self.served.values()
            ]
            return types.ListToolsResult(tools=listed)

        async def call_tool(ctx: Any, params: Any) -> Any:
            answer = await self._answer(ctx, params.name, dict(params.arguments or {}))
            try:
                return types.CallToolResult.model_validate(answer.result)
            except ValueError as error:  # a mock's own result that MCP's types refuse
                why = f"`{params.name}` answered a CallToolResult MCP refuses: {error}"
                return types.CallToolResult.model_validate(mcp_error(" ".join(why.split())))

        return server_class(self._name, on_list_tools=list_tools, on_call_tool=call_tool)

    async def _answer(self, ctx: Any, tool: str, args: dict[str, Any]) -> Answer:
        conversation = await self._conversation(ctx)
        conversation.calls += 1
        call_id = f"mcp-{conversation.calls}-{uuid.uuid4().hex[:8]}"
        answer = await answer_call(
            self.served, conversation, tool, args, call_id=call_id, seed=self._seed
        )
        self.calls.append(answer.call)
        if self._log is not None and conversation.session is not None:
            await self._log.write(conversation.session, answer.call)
        if self._on_call is not None:
            self._on_call(answer.call)
        return answer

    async def _conversation(self, ctx: Any) -> Conversation:
        """The conversation `ctx`'s request belongs to (see `_connection_key`)."""
        params = ctx.session.client_params
        client = (params.client_info.name if params is not None else "") or "mcp-client"
        key = _connection_key(ctx.request, client)
        async with self._opening:  # two first calls at once: one conversation, one session
            conversation = self._conversations.get(key)
            if conversation is None:
                conversation = Conversation(client=client)
                if self._log is not None:
                    conversation.session = await self._log.open(client)
                self._conversations[key] = conversation
        return conversation

    async def serve_stdio(self) -> None:
        """Serves one client over this process's stdin and stdout until stdin closes.

        Every call read before stdin closed is answered first (see `_stdio`).
        """
        server = self.lowlevel()

        async def run(read_stream: Any, write_stream: Any) -> None:
            await server.run(read_stream, write_stream, server.create_initialization_options())

        try:
            await serve_stdio_streams(run)
        finally:
            await self.close()

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        allow_remote: bool = False,
        ready: Callable[[str], None] | None = None,
    ) -> None:
        """Serves streamable HTTP at ``http://HOST:PORT/mcp`` until cancelled or signalled.

        Args:
            host: The interface: a loopback address unless `allow_remote`.
            port: The port; 0 picks a free one.
            allow_remote: Allows a non-loopback `host`.
            ready: Called with the URL once the server listens.

        Raises:
            EvalSetupError: A non-loopback `host` without `allow_remote`.
            OSError: The port cannot be bound.
        """
        refuse_remote(host, allow_remote)
        app = self.lowlevel().streamable_http_app(host=host, transport_security=_security(host))
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        server = _uvicorn_server(config, self.close)

        async def announce() -> None:
            while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, not an event
                await anyio.sleep(0.05)
            bound = server.servers[0].sockets[0].getsockname()[1]
            if ready is not None:
                shown = f"[{host}]" if ":" in host else host
                ready(f"http://{shown}:{bound}/mcp")

        bound_at_all = True
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(announce)
                try:
                    await server.serve()
                except SystemExit:  # uvicorn exits when it cannot bind
                    bound_at_all = False
                group.cancel_scope.cancel()
        finally:
            await self.close()
        if not bound_at_all:
            raise OSError(errno.EADDRINUSE, f"{host}:{port} is in use or cannot be bound")

    async def close(self) -> None:
        """Ends the connections' sessions in the call log (they count as closed), then closes it."""
        if self._log is not None:
            for conversation in self._conversations.values():
                if conversation.session is not None:
                    await self._log.end(conversation.session)
            self._conversations.clear()
            await self._log.close()


def _uvicorn_server(config: Any, on_stop: Callable[[], Awaitable[None]]) -> Any:
    """A uvicorn server that runs `on_stop` as it shuts down.

    Not after `serve` returns: on SIGTERM or SIGINT uvicorn shuts down, then
    raises the signal again, which ends the process before any ``finally``.
    """
    from .._sandbox._serving import PromptServer

    class Server(PromptServer):
        async def shutdown(self, sockets: Any = None) -> None:
            try:
                await super().shutdown(sockets)
            finally:
                await on_stop()

    return Server(config)


def _connection_key(request: Any, client: str) -> str:
    """Which connection a request came on, for its call counts, state and log session.

    Over stdio (no HTTP request) there is one: the process's. Over HTTP, a
    session of the ``initialize`` handshake is its ``Mcp-Session-Id``; a request
    of the sessionless protocol (2026 and later: no handshake, no session id)
    carries only its client's name, so a client's such calls are one
    conversation for as long as the server runs.
    """
    if request is None:
        return "stdio"
    session_id = request.headers.get("mcp-session-id")
    return f"session {session_id}" if session_id else f"client {client}"


def _security(host: str) -> Any:
    """DNS-rebinding protection for a loopback `host`: only loopback names in ``Host``/``Origin``.

    The SDK turns it on by itself only for ``127.0.0.1``, ``localhost`` and
    ``::1``; every loopback address gets it here. None (off) for other hosts.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    if not is_loopback(host):
        return None
    named = f"[{host}]" if ":" in host else host
    hosts = sorted({named, "127.0.0.1", "localhost", "[::1]"})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in hosts],
        allowed_origins=[f"http://{name}:*" for name in hosts],
    )


def echo_call(call: LoggedCall) -> None:
    """One line on stderr per call: the tool, its args, and how it was answered.

    What the client sent (the tool's name, argument keys and values, the error
    naming them) is shown with its control characters escaped (`printable`): a
    terminal never obeys a client's escape sequence, and one call stays one line.
    """
    said = {"fault": "a fault injected", "simulated": "simulated"}.get(call.answered_by, "answered")
    outcome = f"-> error: {call.error}" if call.error else f"-> {said}"
    args = ", ".join(f"{k}={v!r}" for k, v in call.args.items())
    line = printable(f"{call.tool}({args}) {outcome}")
    print(f"adk-eval mock-mcp: {line}", file=sys.stderr, flush=True)


def printable(text: str) -> str:
    r"""`text` with each control or format character written as its escape (``\x1b``, ``\u202e``).

    Those are Unicode's ``Cc`` (C0 and C1 controls: ESC, CR, LF, BEL, CSI, ...),
    ``Cf`` (bidirectional overrides, zero-width characters) and the line and
    paragraph separators; every other character is kept.
    """
    return "".join(_escaped(ch) if unicodedata.category(ch) in _HIDDEN else ch for ch in text)


_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
