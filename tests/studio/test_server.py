"""The studio server over real HTTP on 127.0.0.1: token, loopback, events, remote mode, restart."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_eval.studio import StudioPlugin
from adk_eval.testing import ScriptedLlm

from .conftest import TOKEN, agent_targets, running_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(tmp_path):
    with running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url:
        yield url


def poll(client: httpx.Client, session_id: str, predicate, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = client.get(f"/api/sessions/{session_id}").json()
        if predicate(view):
            return view
        time.sleep(0.05)
    raise AssertionError(f"timed out; last view: {view}")


def test_every_request_needs_the_token(server):
    with httpx.Client(base_url=server) as anonymous:
        for path in ["/", "/static/studio.js", "/api/targets", "/api/sessions", "/api/events"]:
            assert anonymous.get(path).status_code == 401, path
        assert (
            anonymous.post("/api/sessions", json={"target": "Toolbox", "message": "x"}).status_code
            == 401
        )
        assert anonymous.get("/api/targets", headers={"X-Studio-Token": "wrong"}).status_code == 403
        assert anonymous.get("/api/targets", params={"token": "wrong"}).status_code == 403
    with httpx.Client(base_url=server, headers={"X-Studio-Token": TOKEN}) as client:
        assert client.get("/api/targets").status_code == 200


def test_the_page_sets_a_cookie_but_changes_need_the_header(server):
    with httpx.Client(base_url=server) as browser:
        page = browser.get("/", params={"token": TOKEN})
        assert page.status_code == 200
        assert "adk-eval studio" in page.text
        assert browser.cookies.get("adk_eval_studio") == TOKEN
        assert browser.get("/static/studio.css").status_code == 200  # by cookie
        forged = browser.post("/api/sessions", json={"target": "Toolbox", "message": "hi"})
        assert forged.status_code == 401  # a cookie alone cannot change anything (CSRF)
        forged_query = browser.post(
            "/api/sessions", params={"token": TOKEN}, json={"target": "Toolbox", "message": "hi"}
        )
        assert forged_query.status_code == 401


def outward_address() -> str:
    """This machine's non-loopback IPv4 address (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            pytest.skip("this machine has no route off loopback to test with")
        address = probe.getsockname()[0]
    if address.startswith("127."):
        pytest.skip("this machine has no non-loopback IPv4 address")
    return address


def test_it_listens_on_loopback_only_unless_told_otherwise(server, tmp_path):
    outside = outward_address()
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection((outside, port), timeout=2),
    ):
        pass
    # told otherwise, the same machine address reaches it (so the refusal above is real)
    with running_server(agent_targets(tmp_path), tmp_path / "all.db", host="0.0.0.0") as url:
        other_port = int(url.rsplit(":", 1)[1])
        with socket.create_connection((outside, other_port), timeout=5):
            pass


def test_a_session_over_http_with_validation_and_export(server, tmp_path):
    with httpx.Client(base_url=server, headers={"X-Studio-Token": TOKEN}, timeout=30) as client:
        assert [t["name"] for t in client.get("/api/targets").json()] == ["Toolbox", "Structured"]
        session_id = client.post(
            "/api/sessions", json={"target": "Toolbox", "message": "What is 5+3?"}
        ).json()["id"]
        view = poll(client, session_id, lambda v: v["pending"])
        request_id = view["pending"][0]["id"]

        refused = client.post(
            f"/api/requests/{request_id}/answer",
            json={"type": "tool_calls", "calls": [{"name": "add", "args": {"a": 5}}]},
        )
        assert refused.status_code == 422
        assert refused.json()["problems"] == [
            "call #1 `add`: (top level): 'b' is a required property"
        ]

        ok = client.post(
            f"/api/requests/{request_id}/answer",
            json={"type": "tool_calls", "calls": [{"name": "add", "args": {"a": 5, "b": 3}}]},
        )
        assert ok.status_code == 200
        view = poll(
            client, session_id, lambda v: v["pending"] and v["pending"][0]["id"] != request_id
        )
        assert view["entries"][-1]["response"] == {"result": 8}
        client.post(
            f"/api/requests/{view['pending'][0]['id']}/answer", json={"type": "text", "text": "8."}
        )
        poll(client, session_id, lambda v: v["can_export"])
        exported = client.post(f"/api/sessions/{session_id}/export").json()
        assert exported["path"] == str(tmp_path / "toolbox.evalset.json")
        assert exported["cases"] == 1


def test_the_event_stream_needs_the_token_and_reports_changes(server):
    with httpx.Client(base_url=server, headers={"X-Studio-Token": TOKEN}, timeout=30) as client:
        received: list[dict] = []

        def listen() -> None:
            with httpx.stream(
                "GET", f"{server}/api/events", params={"token": TOKEN}, timeout=30
            ) as stream:
                for line in stream.iter_lines():
                    if line.startswith("data: "):
                        received.append(json.loads(line[6:]))
                        if received[-1]["sessions"]:
                            return

        listener = threading.Thread(target=listen)
        listener.start()
        time.sleep(0.3)
        session_id = client.post(
            "/api/sessions", json={"target": "Toolbox", "message": "hi"}
        ).json()["id"]
        listener.join(20)
        hello, *_, change = received  # first, at once: which studio, what changed
        assert hello["boot"] == change["boot"]
        assert change["sessions"][session_id] <= change["version"]


async def test_remote_mode_a_studio_plugin_in_another_app(server):
    targeted = LlmAgent(
        name="triage",
        description="Triage.",
        model=ScriptedLlm(["unused: the person answers"]),
        tools=[],
    )
    helper = LlmAgent(name="helper", model=ScriptedLlm(["I am the real model."]))
    plugin = StudioPlugin(server, TOKEN, target_agents=["triage"], poll_seconds=2)

    async def run(agent: LlmAgent, text: str) -> list[str]:
        service = InMemorySessionService()
        runner = Runner(
            app=App(name="their_app", root_agent=agent, plugins=[plugin]), session_service=service
        )
        session = await service.create_session(app_name="their_app", user_id="u")
        out = []
        async for event in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        ):
            out += [p.text for p in (event.content.parts if event.content else []) if p.text]
        return out

    def answer_in_studio() -> None:
        with httpx.Client(base_url=server, headers={"X-Studio-Token": TOKEN}, timeout=30) as client:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                remote = [s for s in client.get("/api/sessions").json() if s["kind"] == "remote"]
                if remote:
                    view = client.get(f"/api/sessions/{remote[0]['id']}").json()
                    if view["pending"]:
                        assert view["entries"] == [
                            {"kind": "user", "text": "my chest hurts", "author": "user", "at": None}
                        ]
                        client.post(
                            f"/api/requests/{view['pending'][0]['id']}/answer",
                            json={"type": "text", "text": "Call 999."},
                        )
                        return
                time.sleep(0.1)
            raise AssertionError("no remote request arrived")

    person = threading.Thread(target=answer_in_studio)
    person.start()
    assert await run(targeted, "my chest hurts") == ["Call 999."]
    person.join(20)
    assert await run(helper, "hello") == ["I am the real model."]  # not targeted: its own model


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)  # drains and closes the output pipe


@pytest.mark.slow  # a few seconds of processes: make test runs it
def test_a_server_restart_keeps_the_session(tmp_path):
    db = tmp_path / "studio.db"

    def start() -> tuple[subprocess.Popen, str]:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "adk_eval",
                "studio",
                "examples/toolbox/studio.py",
                "--port",
                "0",
                "--db",
                str(db),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "ADK_EVAL_STUDIO_TOKEN": TOKEN},
        )
        assert process.stdout is not None
        for line in process.stdout:
            match = re.search(r"open (http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
            if match:
                assert match.group(2) == TOKEN
                return process, match.group(1)
        raise AssertionError("the studio printed no URL")

    process, url = start()
    try:
        with httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}, timeout=30) as client:
            session_id = client.post(
                "/api/sessions", json={"target": "Toolbox", "message": "What is 5+3?"}
            ).json()["id"]
            view = poll(client, session_id, lambda v: v["pending"])
            client.post(
                f"/api/requests/{view['pending'][0]['id']}/answer",
                json={"type": "tool_calls", "calls": [{"name": "add", "args": {"a": 5, "b": 3}}]},
            )
            before = poll(client, session_id, lambda v: v["pending"] and len(v["entries"]) == 3)
    finally:
        stop(process)

    process, url = start()
    try:
        with httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}, timeout=30) as client:
            after = poll(client, session_id, lambda v: v["pending"])
            assert after["entries"] == before["entries"]
            assert (
                after["pending"][0]["payload"]["contents"]
                == before["pending"][0]["payload"]["contents"]
            )
            client.post(
                f"/api/requests/{after['pending'][0]['id']}/answer",
                json={"type": "text", "text": "It is 8."},
            )
            done = poll(client, session_id, lambda v: v["phase"] == "idle")
            assert done["entries"][-1]["text"] == "It is 8."
    finally:
        stop(process)
