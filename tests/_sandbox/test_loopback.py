"""One loopback rule: what counts as this machine, and every server refusing a remote host alike."""

from __future__ import annotations

import pytest

from adk_eval import EvalSetupError, ToolMock
from adk_eval._sandbox._loopback import is_loopback, refuse_remote
from adk_eval._web import serve
from adk_eval.mock_mcp import MockMcpServer
from adk_eval.production import SpanCollector
from adk_eval.reporting._viewer import run_viewer
from adk_eval.studio._engine import StudioEngine
from adk_eval.studio._server import run_studio

REMOTE = "0.0.0.0"
REFUSAL = (
    "0.0.0.0 is not a loopback address, and anyone who can reach it could use this server; "
    "listen on 127.0.0.1 (or ::1), or pass --allow-remote to listen on it"
)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.3.4.5",
        "::1",
        "[::1]",
        "::1%lo",
        "::ffff:127.0.0.1",
        "localhost",
        "LOCALHOST.",
        "ip6-localhost",
    ],
)
def test_this_machine(host):
    assert is_loopback(host)
    refuse_remote(host, allow_remote=False)


@pytest.mark.parametrize(
    "host",
    [
        "0.0.0.0",
        "::",
        "",
        "10.0.0.1",
        "192.168.1.2",
        "example.com",
        "app.localhost",
        "127.0.0.1.nip.io",
    ],
)
def test_not_this_machine(host):
    assert not is_loopback(host)
    with pytest.raises(EvalSetupError, match="is not a loopback address"):
        refuse_remote(host, allow_remote=False)
    refuse_remote(host, allow_remote=True)


def get_order(order_id: str) -> dict:
    """Looks an order up by its id."""
    raise NotImplementedError


def never_built(token: str, host: str):
    raise AssertionError("a refused server builds no app")


async def refusals(tmp_path) -> dict[str, str]:
    """What each server raises when asked to listen on a remote host without allow_remote."""
    said: dict[str, str] = {}

    def refused(name: str, call) -> None:
        with pytest.raises(EvalSetupError) as raised:
            call()
        said[name] = str(raised.value)

    refused(
        "web",
        lambda: serve(never_built, host=REMOTE, port=0, token="t" * 24, announce=print),
    )
    refused("viewer", lambda: run_viewer(tmp_path / "runs.db", host=REMOTE, port=0))
    engine = StudioEngine([], tmp_path / "studio.db")
    refused("studio", lambda: run_studio(engine, host=REMOTE, port=0))
    refused("collector", lambda: SpanCollector(tmp_path / "spans.db", host=REMOTE, port=0).start())
    server = MockMcpServer([get_order], {"get_order": ToolMock.returning({})})
    with pytest.raises(EvalSetupError) as raised:
        await server.serve_http(REMOTE, 0)
    said["mock MCP"] = str(raised.value)
    return said


async def test_every_server_refuses_a_remote_host_with_the_same_error(tmp_path):
    said = await refusals(tmp_path)
    assert said == dict.fromkeys(["web", "viewer", "studio", "collector", "mock MCP"], REFUSAL)
    assert not (tmp_path / "viewer.token").exists()  # refused before a token is kept
    assert not (tmp_path / "spans.db").exists()
