"""The agent shapes a suite mixes: a Workflow, an App, an AgentTool, a remote (A2A) agent.

Each builder returns a fresh case (or agent) on `ScriptedLlm` models. `remote_server`
serves a real A2A agent (ADK's ``to_a2a``) on 127.0.0.1 and counts every request it
gets, the agent card's fetch included, so a test can assert that nothing reached it.
"""

from __future__ import annotations

import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.adk import Event
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.apps import App
from google.adk.tools import AgentTool
from google.adk.workflow import START, Workflow

from adk_eval import EvalCase, ToolMock
from adk_eval.testing import ScriptedLlm, tool_call

RAN: list[str] = []
"""The names of the real function bodies that ran."""


def lookup(topic: str) -> dict:
    """Looks a topic up (a side effect: always mocked)."""
    RAN.append("lookup")
    return {"facts": "real"}


def open_ledger(node_input: str, ctx) -> dict:
    """Keeps a formatter in state and hands on the text with its lock: values no pickle holds."""
    ctx.state["formatter"] = lambda text: text.upper()
    return {"text": node_input, "guard": threading.Lock()}


def confirm(node_input: dict):
    """A generator node, as ADK's workflow samples write one: it yields its message."""
    RAN.append("confirm")
    yield Event(message=f"Confirmed: {node_input['text']}")


def workflow_case(name: str = "workflow") -> EvalCase:
    """A Workflow: an agent node, a node whose state and output cannot be pickled, a generator."""
    writer = LlmAgent(name="writer", model=ScriptedLlm(["owls hunt at night"]))
    graph = Workflow(name="confirming", edges=[(START, writer, open_ledger, confirm)])
    return EvalCase(
        name=name,
        agent=graph,
        first_message="Write about owls.",
        node_mocks={"open_ledger": open_ledger, "confirm": confirm},
    )


def app_case(name: str = "app") -> EvalCase:
    """An App whose agent calls a mocked tool."""
    agent = LlmAgent(
        name="librarian",
        model=ScriptedLlm([tool_call("lookup", {"topic": "owls"}), "Owls are nocturnal."]),
        tools=[lookup],
    )
    return EvalCase(
        name=name,
        agent=App(name="library", root_agent=agent),
        first_message="Tell me about owls.",
        tool_mocks={"lookup": ToolMock.returning({"facts": "mocked"})},
    )


def agent_tool_case(name: str = "agent_tool") -> EvalCase:
    """An agent that asks another, inside an `AgentTool`, which calls a mocked tool."""
    finder = LlmAgent(
        name="finder",
        description="Finds facts.",
        model=ScriptedLlm([tool_call("lookup", {"topic": "owls"}), "Found: nocturnal."]),
        tools=[lookup],
    )
    planner = LlmAgent(
        name="planner",
        model=ScriptedLlm([tool_call("finder", {"request": "owls"}), "Planned."]),
        tools=[AgentTool(finder)],
    )
    return EvalCase(
        name=name,
        agent=planner,
        first_message="Plan an owl talk.",
        tool_mocks={"lookup": ToolMock.returning({"facts": "mocked"})},
    )


def remote_agent(url: str, name: str = "helper", client: Any = None) -> BaseAgent:
    """ADK's `RemoteA2aAgent` for the agent card at `url` (its experimental warning hushed).

    `client`: the `httpx.AsyncClient` it uses, for one that runs for real (ADK copies
    the agent at each run, and a copy never closes a client it opened itself).
    """
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return RemoteA2aAgent(name=name, agent_card=url, httpx_client=client)


def transferring_root(remote: BaseAgent, name: str = "root") -> LlmAgent:
    """A root agent that hands the conversation to `remote` (a sub-agent), then answers."""
    model = ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": remote.name}), "Back."])
    return LlmAgent(name=name, model=model, sub_agents=[remote])


def remote_case(url: str, name: str = "remote", **fields) -> EvalCase:
    """A case whose root transfers to a remote agent at `url`."""
    root = transferring_root(remote_agent(url))
    return EvalCase(name=name, agent=root, first_message="my private words", **fields)


@dataclass
class RemoteServer:
    """A real A2A agent on 127.0.0.1 and every request it got, ``(method, path)``."""

    card_url: str
    requests: list[tuple[str, str]] = field(default_factory=list)


@contextmanager
def remote_server(reply: str = "Answered remotely.") -> Iterator[RemoteServer]:
    """An ADK agent served over A2A (``to_a2a``) on a free port of 127.0.0.1, counting requests."""
    import uvicorn
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    from adk_eval._sandbox._serving import PromptServer

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    far = LlmAgent(name="far", model=ScriptedLlm([reply] * 20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        served = to_a2a(far, host="127.0.0.1", port=port)
    found = RemoteServer(f"http://127.0.0.1:{port}/.well-known/agent-card.json")

    async def counted(scope, receive, send):
        if scope["type"] == "http":
            found.requests.append((scope["method"], scope["path"]))
        await served(scope, receive, send)

    config = uvicorn.Config(counted, log_level="warning", timeout_graceful_shutdown=1)
    server = PromptServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
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
