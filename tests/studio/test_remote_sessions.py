"""Remote sessions over real HTTP: a real ADK app with `StudioPlugin`, a real studio server.

A run that ended leaves its session idle and exportable; an answer the app no
longer waits for (its plugin timed out, or its deadline passed) is refused.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_eval.goldens import load_eval_set
from adk_eval.studio import StudioPlugin, StudioUnavailableError, unwrap_studio_errors
from adk_eval.testing import ScriptedLlm

from .conftest import TOKEN, agent_targets, running_server


def add(a: int, b: int) -> dict:
    """Adds two numbers."""
    return {"result": a + b}


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # remote exports go to the studio's working directory
    with running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url:
        yield url


def client(server: str) -> httpx.Client:
    return httpx.Client(base_url=server, headers={"X-Studio-Token": TOKEN}, timeout=30)


async def run_app(server: str, text: str, **plugin: object) -> list[str]:
    """A run of the remote app `their_app`, whose `triage` model the person plays."""
    triage = LlmAgent(name="triage", model=ScriptedLlm(["unused"]), tools=[add])
    studio = StudioPlugin(server, TOKEN, target_agents=["triage"], poll_seconds=1, **plugin)
    service = InMemorySessionService()
    runner = Runner(
        app=App(name="their_app", root_agent=triage, plugins=[studio]), session_service=service
    )
    session = await service.create_session(app_name="their_app", user_id="ann")
    texts: list[str] = []
    try:
        with unwrap_studio_errors():
            async for event in runner.run_async(
                user_id="ann",
                session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text=text)]),
            ):
                texts += [p.text for p in (event.content.parts if event.content else []) if p.text]
    finally:
        await runner.close()
    return texts


def remote_view(http: httpx.Client, predicate, timeout: float = 20.0) -> dict:
    """The remote session's view, once `predicate` holds for it."""
    deadline = time.monotonic() + timeout
    view: dict = {}
    while time.monotonic() < deadline:
        remote = [s for s in http.get("/api/sessions").json() if s["kind"] == "remote"]
        if remote:
            view = http.get(f"/api/sessions/{remote[0]['id']}").json()
            if predicate(view):
                return view
        time.sleep(0.05)
    raise AssertionError(f"timed out; last view: {view}")


def person(server: str, answers: list[dict]) -> threading.Thread:
    """The person in the studio: answers each new remote model call in turn."""

    def play() -> None:
        answered: set[str] = set()
        with client(server) as http:
            for answer in answers:
                view = remote_view(
                    http, lambda v: any(r["id"] not in answered for r in v["pending"])
                )
                request = next(r for r in view["pending"] if r["id"] not in answered)
                answered.add(request["id"])
                http.post(f"/api/requests/{request['id']}/answer", json=answer).raise_for_status()

    thread = threading.Thread(target=play)
    thread.start()
    return thread


async def test_a_remote_run_that_ended_is_idle_and_exports_as_a_golden(server, tmp_path):
    playing = person(
        server,
        [
            {"type": "tool_calls", "calls": [{"name": "add", "args": {"a": 5, "b": 3}}]},
            {"type": "text", "text": "5+3 is 8."},
        ],
    )
    assert await run_app(server, "What is 5+3?") == ["5+3 is 8."]
    playing.join(20)
    with client(server) as http:
        view = remote_view(http, lambda v: v["phase"] == "idle")
        assert view["can_export"], view
        assert view["eval_set_path"] == str(tmp_path / "their_app.evalset.json")
        exported = http.post(f"/api/sessions/{view['id']}/export")
        assert exported.status_code == 200, exported.text
        record = exported.json()
    assert record["path"] == str(tmp_path / "their_app.evalset.json")
    assert record["eval_id"].startswith("triage_")
    assert ":" not in record["eval_id"]
    [golden] = load_eval_set(tmp_path / "their_app.evalset.json").eval_cases
    [turn] = golden.conversation
    assert turn.user_content.parts[0].text == "What is 5+3?"
    assert [(c.name, c.args) for c in turn.intermediate_data.tool_uses] == [
        ("add", {"a": 5, "b": 3})
    ]
    assert [r.response for r in turn.intermediate_data.tool_responses] == [{"result": 8}]
    assert turn.final_response.parts[0].text == "5+3 is 8."
    assert (golden.session_input.app_name, golden.session_input.user_id) == ("their_app", "ann")


@pytest.mark.slow
async def test_an_answer_after_the_plugin_timed_out_is_refused_and_the_session_says_why(server):
    seen: list[str] = []

    def look() -> None:  # the person opens the request, and takes too long
        with client(server) as http:
            seen.append(remote_view(http, lambda v: v["pending"])["pending"][0]["id"])

    looking = threading.Thread(target=look)
    looking.start()
    with pytest.raises(StudioUnavailableError, match=r"gave no answer within 1\.5 s"):
        await run_app(server, "Anyone there?", timeout=1.5)
    looking.join(20)
    with client(server) as http:
        view = remote_view(http, lambda v: v["phase"] == "idle")
        late = http.post(
            f"/api/requests/{seen[0]}/answer", json={"type": "text", "text": "Sorry, here now."}
        )
    assert late.status_code == 409
    assert "no longer awaited: the app that asked stopped waiting" in late.json()["error"]
    assert (view["pending"], view["can_export"]) == ([], False)
    assert "The app stopped waiting for the answer" in view["error"]
    assert "its timeout (1.5 s) passed" in view["error"]
    assert "The app's run ended with StudioUnavailableError" in view["error"]


def test_an_answer_after_the_apps_deadline_is_refused_without_a_notice(server):
    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": []}
    with client(server) as http:
        created = http.post(
            "/api/remote/model-requests",
            json={
                "client_session": "app/u/s1",
                "agent_name": "a",
                "request": request,
                "timeout": 0.3,
            },
        )
        request_id = created.json()["request_id"]
        time.sleep(0.5)  # the app (which died, say) sends no notice
        late = http.post(f"/api/requests/{request_id}/answer", json={"type": "text", "text": "x"})
        assert late.status_code == 409
        assert "no longer awaited" in late.json()["error"]
        wait = http.get(f"/api/remote/model-requests/{request_id}/answer", params={"wait": 0})
        assert wait.status_code == 410  # whoever polls for it learns it is closed


def test_the_remote_notices_refuse_what_they_cannot_use(server):
    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": []}
    body = {"client_session": "app/u/s2", "agent_name": "a", "request": request}
    with client(server) as http:
        for timeout in ("soon", -1, True):
            refused = http.post("/api/remote/model-requests", json={**body, "timeout": timeout})
            assert refused.status_code == 422, timeout
            assert "`timeout` must be the seconds the app waits" in refused.json()["error"]
        assert http.post("/api/remote/model-requests/nope/abandon", json={}).status_code == 404
        ended = http.post("/api/remote/run-ended", json={"client_session": "app/u/unknown"})
        assert ended.status_code == 404
        assert "no remote session of 'app/u/unknown'" in ended.json()["error"]
