"""The agent under test deployed elsewhere, driven over A2A (``EvalCase(agent=URL)``).

A case whose agent is an A2A URL, or ADK's `RemoteA2aAgent` itself, evaluates
an agent that runs in its own service: the run's root is ADK's real
`RemoteA2aAgent`, so the case's simulated users talk to it over the protocol
(one A2A context per conversation, kept across turns; a task in state
``input-required`` is a long-running call the matching user agent answers) and
its events are the trace, authored by the remote agent. It is deliberately real:
the refusal of undeclared remote agents (``_remote.py``) does not apply to it.

What happens inside that service is not in the trace: its tool calls, its state
and its model usage (`UNOBSERVED`). Metrics that read them are not applicable,
never failed, and the result says so in one line (`UNOBSERVED_LINE`). Its effects
are mocked only where the service lets them be: its MCP toolsets pointed at
``adk-eval mock-mcp``, its remote agents at ``adk-eval mock-a2a``.

Each run drives a copy of the agent, whose HTTP client is closed when the run
closes (`DeployedPlugin`): a client outlives neither its run nor its event loop.
An A2A failure (the server went down) ends the run in an ``error`` of one line
instead of an agent turn with no words.

An agent given by URL is adk-eval's to configure. A case is built without
sending anything, so it is named after its URL's path (`deployed_agent`); its
card is fetched before each run (`check_reachable`), and the run's copy takes
the card's ``name`` when that can be an agent's (`run_copy`), so the run's
trace and the service's own spans name the same author. Its client sends the
W3C trace context of the span current in the eval process (OpenTelemetry's
global propagator; nothing when no tracing is active), so a service that
extracts it joins its spans to the run's trace. A `RemoteA2aAgent` given as
the agent keeps its name and its own client.
"""

from __future__ import annotations

import ipaddress
import re
import warnings
import weakref
from typing import Any
from urllib.parse import urlparse

import httpx
from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps import App
from google.adk.events import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.workflow import Workflow

from .._errors import EvalSetupError
from ._remote import is_remote_agent, remote_address

__all__ = [
    "A2A_ERROR_CODE",
    "UNOBSERVED",
    "UNOBSERVED_LINE",
    "DeployedPlugin",
    "as_under_test",
    "card_url",
    "check_reachable",
    "deployed_agent",
    "is_deployed",
    "run_copy",
    "unobserved_reason",
]

CARD_PATH = "/.well-known/agent-card.json"
"""Where an A2A server serves its agent card (a2a-sdk's well-known path)."""

A2A_ERROR_CODE = "A2A_ERROR"
"""The error code an A2A failure of the agent under test gets (the run ends in it)."""

UNOBSERVED = frozenset({"tools", "state", "usage"})
"""What a deployed agent's run does not show here: the facts metrics ``need``."""

UNOBSERVED_LINE = (
    "not observed: the deployed agent's tool calls, state and model usage happen in its own "
    "service, so metrics that read them are not applicable (collect its spans with "
    "`adk-eval collect` to see them)"
)

_NAMES = {"tools": "tool calls", "state": "state", "usage": "model usage"}

_AGENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_TIMEOUT = 600.0
"""The HTTP timeout of a URL's agent, in seconds (ADK's default for `RemoteA2aAgent`)."""

_FROM_URL: weakref.WeakValueDictionary[int, BaseAgent] = weakref.WeakValueDictionary()
"""The agents `deployed_agent` made, by id: adk-eval's to name and to give a client."""


def card_url(url: str) -> str:
    """The agent card's URL of the agent at `url` (a card URL is kept as it is)."""
    if urlparse(url).path.endswith(".json"):
        return url
    return url.rstrip("/") + CARD_PATH


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _name_of(url: str) -> str:
    """The agent's name: the path's last word before its card (``/a2a/weather``), else one."""
    path = urlparse(url).path.split("/.well-known/")[0]
    words = [word for word in path.split("/") if word]
    last = words[-1] if words else ""
    return last if _AGENT_NAME.fullmatch(last) else "deployed_agent"


def _can_name(name: object) -> bool:
    """Whether `name` (a card's) can be an ADK agent's name (`user` is the user's)."""
    return isinstance(name, str) and bool(_AGENT_NAME.fullmatch(name)) and name != "user"


def deployed_agent(url: str, *, case: str) -> BaseAgent:
    """ADK's `RemoteA2aAgent` for the agent served at `url` (its base URL or its card's).

    Raises:
        EvalSetupError: `url` is no http(s) URL, is plain http off this machine
            (ADK sends a card request only over https, or http to loopback), or
            ADK's A2A support is not installed.
    """
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise EvalSetupError(
            f"EvalCase `{case}`: `agent` is the URL of an agent served over A2A, got {url!r}; "
            "give http(s)://HOST:PORT (or its agent card's URL)"
        )
    if parsed.scheme == "http" and not _is_loopback(parsed.hostname):
        raise EvalSetupError(
            f"EvalCase `{case}`: the deployed agent at {url} is reached over plain http off "
            "this machine, which ADK's A2A client refuses; use its https URL"
        )
    try:
        from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
    except ImportError as error:
        raise EvalSetupError(
            f"EvalCase `{case}`: an agent over A2A needs ADK's A2A support ({error}); "
            "pip install 'google-adk[a2a]'"
        ) from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK's experimental notice
        agent = RemoteA2aAgent(name=_name_of(url), agent_card=card_url(url))
    _FROM_URL[id(agent)] = agent
    return agent


async def _carry_trace_context(request: httpx.Request) -> None:
    """The request hook of a URL agent's client: the current span's trace context, if any."""
    from opentelemetry import propagate

    propagate.inject(request.headers)


def is_deployed(agent: object) -> bool:
    """Whether `agent` (a case's root) is an agent under test reached over A2A."""
    return is_remote_agent(agent)


def run_copy(agent: BaseAgent, card: Any = None) -> tuple[BaseAgent, httpx.AsyncClient | None]:
    """The agent one run drives, and the HTTP client the run gave it (closed with the run).

    An agent made from a URL: a new `RemoteA2aAgent` at the same card, named
    after `card` (its fetched agent card) when its ``name`` can be an agent's,
    on a client of the run that sends the current trace context. Any other: a
    clone of `agent` (ADK's public `clone`), which opens ADK's client afresh
    (unless `agent` has a client of its own, which it shares). Either way no
    run inherits a client of an earlier run's event loop.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ADK's experimental notice
        if _FROM_URL.get(id(agent)) is not agent:
            return agent.clone(), None
        from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

        named = card.get("name") if isinstance(card, dict) else None
        name = named if isinstance(named, str) and _can_name(named) else agent.name
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(_TIMEOUT), event_hooks={"request": [_carry_trace_context]}
        )
        copy = RemoteA2aAgent(
            name=name,
            agent_card=remote_address(agent).removeprefix("its agent card "),
            description=agent.description,
            httpx_client=client,
        )
        return copy, client


async def check_reachable(agent: BaseAgent, *, case: str) -> dict[str, Any] | None:
    """Fetches the agent card of `agent` once, so a bad URL or a server down is one line.

    Returns:
        The card (a JSON object); None for an agent given its card as an object
        (nothing to fetch, not checked).

    Raises:
        EvalSetupError: The card cannot be fetched, or is no JSON object.
    """
    source = remote_address(agent)
    url = source.removeprefix("its agent card ")
    if url == source or not url.startswith(("http://", "https://")):
        return None
    problem, card = None, None
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as client:
            answer = await client.get(url)
        if answer.status_code != 200:
            problem = f"it answered HTTP {answer.status_code}"
        elif not isinstance(card := answer.json(), dict):
            problem = "its answer is no agent card (no JSON object)"
    except ValueError:
        problem = "its answer is no agent card (not JSON)"
    except httpx.HTTPError as error:
        problem = f"{type(error).__name__}: {error or 'no answer'}"
    if problem is not None:
        raise EvalSetupError(
            f"EvalCase `{case}`: the agent under test `{agent.name}` cannot be reached over "
            f"A2A at {url} ({problem}); start it, or fix the URL"
        )
    return card


def unobserved_reason(needs: Any) -> str | None:
    """Why a metric that ``needs`` these facts is not applicable to a deployed agent's run."""
    missing = sorted(frozenset(needs or ()) & UNOBSERVED)
    if not missing:
        return None
    what = " and ".join(_NAMES[fact] for fact in missing)
    return (
        f"not applicable: it reads the agent's {what}, which a deployed agent's run does not "
        "show (they happen in its own service)"
    )


class DeployedPlugin(BasePlugin):
    """An A2A failure of the agent under test ends the run; the run's client is closed."""

    def __init__(self, agent: BaseAgent, client: httpx.AsyncClient | None = None) -> None:
        super().__init__(name="adk_eval_deployed_agent")
        self._agent = agent
        self._client = client

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """An event of the agent with an error message and no code gets `A2A_ERROR_CODE`."""
        if event.author != self._agent.name or not event.error_message or event.error_code:
            return None
        return event.model_copy(update={"error_code": A2A_ERROR_CODE})

    async def close(self) -> None:
        """Closes the run's HTTP client: the one it gave, or the one ADK opened (`cleanup`)."""
        cleanup = getattr(self._agent, "cleanup", None)
        if cleanup is not None:
            await cleanup()
        if self._client is not None:
            await self._client.aclose()


def as_under_test(
    agent: BaseAgent | App | Workflow, card: Any = None
) -> BaseAgent | App | Workflow:
    """What a run drives: a deployed root as its run's copy, in an App with `DeployedPlugin`.

    `card` is the deployed agent's card as `check_reachable` fetched it (or None).
    """
    root = agent.root_agent if isinstance(agent, App) else agent
    if not isinstance(root, BaseAgent) or not is_deployed(root):
        return agent
    copy, client = run_copy(root, card)
    plugin = DeployedPlugin(copy, client)
    if isinstance(agent, App):
        return agent.model_copy(update={"root_agent": copy, "plugins": [*agent.plugins, plugin]})
    return App(name=copy.name, root_agent=copy, plugins=[plugin])
