"""A real ADK agent served over A2A (ADK's ``to_a2a``) on 127.0.0.1, its requests recorded.

Also a deployed shop in processes of its own, for the test whose effects are all
mocked: this file is the tools file ``adk-eval mock-mcp`` serves (`tools`,
`tool_mocks`: `get_order`'s real body records that it ran, in the file named by
``REAL_CALLS``), and run as a script (``python -m tests.deployed_support PORT
MCP_URL ENDPOINT``) it serves `clerk` with ``to_a2a()`` on 127.0.0.1:PORT, its
MCP toolset at MCP_URL, its spans sent by the OpenTelemetry SDK's OTLP exporter
to ENDPOINT as they end (with a fourth argument ``extract``, each request runs in
the trace context it carries). `started` runs any of these servers and waits for
it. ``python -m tests.deployed_support evaluate URL ENDPOINT`` is an evaluating
process traced as a user sets it up (`evaluate`): its run's spans sent to ENDPOINT.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents import LlmAgent

from adk_eval import ToolMock
from adk_eval.testing import ScriptedLlm, tool_call

REAL_CALLS = "ADK_EVAL_TEST_REAL_CALLS"
"""The environment variable naming the file a real tool body writes to when it runs."""


def get_order(order_id: str) -> dict:
    """Looks an order up by its id."""
    with open(os.environ[REAL_CALLS], "a", encoding="utf-8") as calls:
        calls.write(json.dumps({"get_order": order_id}) + "\n")  # it ran: what must not be
    return {"order_id": order_id, "status": "lost"}


tools = [get_order]
tool_mocks = {
    "get_order": ToolMock(lambda args, ctx: {"order_id": args["order_id"], "status": "shipped"})
}

CLERK_SAYS = ["Order A1 has shipped.", "Bye."]
"""What the served clerk says: after its `get_order` call, then at the next turn."""


def clerk(mcp_url: str) -> LlmAgent:
    """The shop's deployed agent: looks order A1 up over MCP at `mcp_url`, then answers."""
    from google.adk.tools.mcp_tool import McpToolset
    from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams

    shop = McpToolset(connection_params=StreamableHTTPConnectionParams(url=mcp_url, timeout=30))
    script = [tool_call("get_order", {"order_id": "A1"}), *CLERK_SAYS]
    return LlmAgent(name="clerk", model=ScriptedLlm(script), tools=[shop])


@dataclass
class Served:
    """An ADK agent served over A2A on 127.0.0.1: its URL, each JSON-RPC request and its headers."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    stop: Callable[[], None] = lambda: None

    def contexts(self) -> list[str | None]:
        """The A2A context id of each message sent to it, in order."""
        return [r["params"]["message"].get("contextId") for r in self.requests]

    def parts(self) -> list[dict[str, Any]]:
        """The parts of each message sent to it, in order (first part of each)."""
        return [r["params"]["message"]["parts"][0] for r in self.requests]


@contextmanager
def served(agent: LlmAgent) -> Iterator[Served]:
    """`agent` served with ADK's `to_a2a` on a free port of 127.0.0.1, its requests recorded."""
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    from adk_eval._sandbox._serving import PromptServer

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        app = to_a2a(agent, host="127.0.0.1", port=port)
    found = Served(f"http://127.0.0.1:{port}")

    async def recorded(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        messages, body = [], b""
        while not messages or messages[-1].get("more_body"):
            messages.append(await receive())
            body += messages[-1].get("body", b"")
        found.requests.append(json.loads(body))
        found.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await app(scope, replay, send)

    server = PromptServer(
        uvicorn.Config(recorded, log_level="warning", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()

    def stop() -> None:
        server.stop()
        thread.join(30)

    found.stop = stop
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the A2A server did not start")
        time.sleep(0.02)
    try:
        yield found
    finally:
        server.stop()
        thread.join(30)
        sock.close()


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(server: subprocess.Popen, port: int, deadline: float) -> None:
    """Waits until `server` listens on 127.0.0.1:`port` (its stderr in the error if it exits)."""
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                said = server.communicate()[1].decode(errors="replace")[-2000:]
                raise RuntimeError(f"{server.args[2:4]} did not start: {said}") from None
            time.sleep(0.05)


@contextmanager
def started(
    servers: list[tuple[list[str], int]], env: dict[str, str]
) -> Iterator[list[subprocess.Popen]]:
    """Each argv run at once as a server on 127.0.0.1:its port; SIGTERM, in reverse, at the end."""
    running: list[subprocess.Popen] = []
    try:
        for argv, _ in servers:
            running.append(
                subprocess.Popen(
                    argv,
                    env={**os.environ, **env},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
            )
        deadline = time.monotonic() + 60
        for server, (_, port) in zip(running, servers, strict=True):
            _listening(server, port, deadline)
        yield running
    finally:
        for server in reversed(running):
            server.terminate()
            server.communicate(timeout=30)  # its stderr pipe read and closed


def _traced(service: str, endpoint: str) -> Any:
    """This process's tracer provider: spans of `service` sent to `endpoint` as they end."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    return provider


def serve_clerk(port: int, mcp_url: str, endpoint: str, extract: bool = False) -> None:
    """`clerk` over A2A on 127.0.0.1:`port`, a service (``shop``) sending spans to `endpoint`.

    With `extract`, each request runs in the trace context it carries (the ASGI
    middleware docs/production.md gives a service).
    """
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    from tests._sources._spans.a2a_app import TraceContext

    _traced("shop", endpoint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        app = to_a2a(clerk(mcp_url), host="127.0.0.1", port=port)
    if extract:
        app.add_middleware(TraceContext)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def shop_case(url: str, **fields: Any) -> Any:
    """The case the deployed shop is evaluated by: one lookup, the customer's thanks."""
    from adk_eval import EvalCase, ScriptedUserAgent, UserAgents
    from adk_eval.metrics import event_count_metric

    return EvalCase(
        name="shop",
        agent=url,
        first_message="Where is order A1?",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="customer", script=["Thanks!"])),
        metrics=[event_count_metric("lookups", "tool_call", assertion=lambda n: n == 1)],
        **fields,
    )


def evaluate(url: str, endpoint: str) -> None:
    """Evaluates the shop at `url` in a traced process (``eval``): its run's spans to `endpoint`.

    The case keeps telemetry, so its run's spans reach this process's exporter.
    Prints the run's status and messages (author, text) as one JSON line.
    """
    import asyncio

    from adk_eval import run_eval

    provider = _traced("eval", endpoint)
    result = asyncio.run(run_eval(shop_case(url, telemetry="keep")))
    provider.shutdown()  # every span sent
    said = [[m.author, m.text] for m in result.trace.messages]
    print(json.dumps({"status": result.status, "said": said}))


if __name__ == "__main__":
    if sys.argv[1] == "evaluate":
        evaluate(sys.argv[2], sys.argv[3])
    else:
        serve_clerk(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:] == ["extract"])
