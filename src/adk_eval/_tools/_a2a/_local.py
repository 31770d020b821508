"""A remote agent's own ADK code as its mock, run in process under the case's interception.

For teams that own both sides: ``RemoteMock.local(agent)`` answers the remote
agent with `agent` itself. It is served the way ``to_a2a()`` serves an agent
(a2a-sdk's server routes over ADK's own `A2aAgentExecutor`) and reached by
the stand-in `RemoteA2aAgent` through ``httpx.ASGITransport``, so the protocol
path is the one the other mocks take. The executor's `Runner` is built at the
first request, with the run's harness plugins (the interception, the model
check, the model-call limits, the gateway): its tools are answered by the
case's ``tool_mocks`` and refused when unmocked, as the main agent's are, and
its model calls go through the same gate. It has sessions of its own, as a
served agent has.

The plugins are handed over in `_harness.HarnessPlugins`.
"""

from __future__ import annotations

import warnings
from typing import Any

import httpx
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from google.adk.a2a.executor.a2a_agent_executor import A2aAgentExecutor
from starlette.applications import Starlette

from ._harness import HarnessPlugins, runs_locally
from ._replies import RemoteMock
from ._served import MOCK_HOST, card_of

__all__ = ["local_app", "local_stand_in"]


# ADK's A2A code warns that it is experimental at each first use of each of its
# parts; in process, these would follow the first local remote agent's answer.
warnings.filterwarnings(
    "ignore", r"\[EXPERIMENTAL\]", UserWarning, r"google\.adk\.a2a\.", append=True
)


class _LocalExecutor(A2aAgentExecutor):
    """ADK's executor, run outside the caller's tool calls (see `HarnessPlugins.outside`).

    The interception nests the events of agents that run inside an `AgentTool`
    call. Behind one, the remote agent's answers already come back through the
    `RemoteA2aAgent` (in the `AgentTool`'s session, nested there); its own
    runner's copies would count each of its calls twice.
    """

    def __init__(self, agent: Any, harness: HarnessPlugins) -> None:
        super().__init__(runner=lambda: harness.runner_for(agent))
        self._harness = harness

    async def execute(self, context: Any, event_queue: Any) -> None:
        """Runs the agent on the request, as ADK's executor does."""
        with self._harness.outside():
            await super().execute(context, event_queue)


def local_app(name: str, mock: RemoteMock, url: str, prefix: str, harness: HarnessPlugins) -> Any:
    """The A2A server application of a local remote agent (``to_a2a``'s routes, in process)."""
    agent = mock.agent
    card = card_of(name, mock, url)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK's experimental notice
        executor = _LocalExecutor(agent, harness)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card, card_url=f"{prefix}/.well-known/agent-card.json"),
            *create_jsonrpc_routes(handler, f"{prefix}/", enable_v0_3_compat=True),
        ]
    )


def local_stand_in(agent: Any, mock: RemoteMock, harness: HarnessPlugins) -> Any:
    """ADK's `RemoteA2aAgent` in `agent`'s place, answered in process by `mock.agent`."""
    from dataclasses import replace

    from a2a.client import ClientConfig, ClientFactory
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    url = f"http://{MOCK_HOST}/{agent.name}/"
    described = replace(mock, description=agent.description or mock.agent.description)
    app = local_app(agent.name, described, url, f"/{agent.name}", harness)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=url)
    factory = ClientFactory(ClientConfig(httpx_client=client, streaming=True))
    stood = RemoteA2aAgent(
        name=agent.name,
        agent_card=card_of(agent.name, described, url),
        description=agent.description,
        a2a_client_factory=factory,
    )
    runs_locally(stood, mock.agent)
    return stood
