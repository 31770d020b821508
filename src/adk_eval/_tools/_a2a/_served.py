"""A remote mock as an A2A server application, and the stand-in agent that reaches it.

A `RemoteMock` is served by a2a-sdk's own server (its JSON-RPC routes, its
request handler, its task store) over `MockExecutor`, an `AgentExecutor` that
answers each request from the mock: the agent card at
``/.well-known/agent-card.json``, ``message/send`` and ``message/stream``.
In a run, the case's copy of the tree holds `stand_in`: ADK's own
`RemoteA2aAgent`, named as the agent it replaces, whose HTTP client's transport
is ``httpx.ASGITransport(app)``, so nothing leaves the process; served by
``adk-eval mock-a2a``, the same application answers over the network. Both run
the same protocol code, so both give the same events.

Every exchange (the request's text and the reply) goes to `on_exchange` (the
served mock's log).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT as PROTOCOL_VERSION
from starlette.applications import Starlette
from starlette.routing import Route

from ..._errors import EvalSetupError
from ._replies import RemoteMock, RemoteReply

__all__ = [
    "MOCK_HOST",
    "Exchange",
    "MockExecutor",
    "card_of",
    "mock_app",
    "mock_routes",
    "stand_in",
]

MOCK_HOST = "remote-mock.adk-eval.invalid"
"""The host of an in-process mock's card (``.invalid``: it never resolves)."""

_STATE = {
    "completed": TaskState.TASK_STATE_COMPLETED,
    "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
    "failed": TaskState.TASK_STATE_FAILED,
}


@dataclass(frozen=True)
class Exchange:
    """One request a remote mock answered.

    Attributes:
        agent: The remote agent's name.
        context_id: The A2A context (one conversation of the caller's).
        task_id: The A2A task.
        request: The request's text.
        reply: What answered it.
    """

    agent: str
    context_id: str
    task_id: str
    request: str
    reply: RemoteReply


OnExchange = Callable[[Exchange], Awaitable[None]]


class _ClosedQueueNoise(logging.Filter):
    """Drops a2a-sdk's warning that a task's event queue closed before it waited on it.

    The server logs it as each answered task's queue closes; it says nothing
    about the exchange, and in process it would follow every mocked answer.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Dispatcher task is not running")


def _install_noise_filter() -> None:
    logger = logging.getLogger("a2a.server.events.event_queue_v2")
    if not any(isinstance(f, _ClosedQueueNoise) for f in logger.filters):
        logger.addFilter(_ClosedQueueNoise())


_install_noise_filter()


def _part(value: Any) -> Any:
    if isinstance(value, str):
        return new_text_part(value)
    return new_data_part(json.loads(json.dumps(value)))  # a JSON value, as the wire holds it


class MockExecutor(AgentExecutor):
    """Answers each A2A request to agent `name` from `mock`.

    Scripted replies are counted per A2A context (one caller's conversation):
    each conversation starts at the first reply.
    """

    def __init__(self, name: str, mock: RemoteMock, on_exchange: OnExchange | None = None):
        self.name, self.mock, self.on_exchange = name, mock, on_exchange
        self.turns: dict[str, int] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Answers the request: a task, its artifacts, then its last status and message."""
        task_id, context_id = context.task_id or "", context.context_id or ""
        if context.current_task is None:  # a new task's first event is the task itself
            submitted = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
            history = [context.message] if context.message else []
            await event_queue.enqueue_event(
                Task(id=task_id, context_id=context_id, status=submitted, history=history)
            )
        request = context.get_user_input()
        turn = self.turns[context_id] = self.turns.get(context_id, -1) + 1
        reply = await self.mock.reply(self.name, request, turn)
        updater = TaskUpdater(event_queue, task_id, context_id)
        for name, value in reply.artifacts.items():
            await updater.add_artifact([_part(value)], name=name)
        message = updater.new_agent_message([new_text_part(reply.text)])
        await updater.update_status(_STATE[reply.state], message=message)
        if self.on_exchange is not None:
            await self.on_exchange(Exchange(self.name, context_id, task_id, request, reply))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancels the task (a mock's answer is immediate: nothing is in flight)."""
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def card_of(name: str, mock: RemoteMock, url: str) -> AgentCard:
    """The agent card a mock serves: its description, skills and modes, its RPC at `url`."""
    described = mock.skills or {"answer": mock.description or f"Answers as `{name}`."}
    skills = [
        AgentSkill(id=skill, name=skill, description=what, tags=[skill])
        for skill, what in described.items()
    ]
    return AgentCard(
        name=name,
        description=mock.description or f"A mock of the remote agent `{name}`.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION)
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=list(mock.input_modes),
        default_output_modes=list(mock.output_modes),
        skills=skills,
    )


def mock_routes(
    name: str, mock: RemoteMock, url: str, prefix: str = "", on_exchange: OnExchange | None = None
) -> list[Route]:
    """The card and JSON-RPC routes of one mock, under `prefix` (``""``: at the root).

    Raises:
        EvalSetupError: `mock` is `RemoteMock.local` (it runs only inside a case's run).
    """
    if mock.agent is not None:
        raise EvalSetupError(
            f"remote mock `{name}` is RemoteMock.local: it runs its agent only inside a case's "
            "run, under its interception, and cannot be served; script or simulate it instead"
        )
    card = card_of(name, mock, url)
    handler = DefaultRequestHandler(
        agent_executor=MockExecutor(name, mock, on_exchange),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    return [
        *create_agent_card_routes(card, card_url=f"{prefix}/.well-known/agent-card.json"),
        *create_jsonrpc_routes(handler, f"{prefix}/", enable_v0_3_compat=True),
    ]


def mock_app(name: str, mock: RemoteMock, url: str, prefix: str = "") -> Starlette:
    """One mock's A2A server application under `prefix`, its RPC advertised at `url`."""
    return Starlette(routes=mock_routes(name, mock, url, prefix))


def stand_in(agent: Any, mock: RemoteMock) -> Any:
    """ADK's `RemoteA2aAgent` in `agent`'s place, answered in process by `mock`'s app.

    It keeps `agent`'s name and description (what its parent's model is told
    about it); its card and its messages go to the mock through an
    ``httpx.ASGITransport``: nothing is sent anywhere.
    """
    from a2a.client import ClientConfig, ClientFactory
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    url = f"http://{MOCK_HOST}/{agent.name}/"
    described = mock if mock.description or not agent.description else _described(mock, agent)
    app = mock_app(agent.name, described, url, f"/{agent.name}")
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=url)
    factory = ClientFactory(ClientConfig(httpx_client=client, streaming=True))
    return RemoteA2aAgent(
        name=agent.name,
        agent_card=card_of(agent.name, described, url),
        description=agent.description,
        a2a_client_factory=factory,
    )


def _described(mock: RemoteMock, agent: Any) -> RemoteMock:
    """`mock` with `agent`'s description on its card (the mock gave none)."""
    from dataclasses import replace

    return replace(mock, description=agent.description)
