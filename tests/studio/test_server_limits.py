"""The studio server under hostile input: no 500s, bounded bodies and echoes, headers, Host."""

from __future__ import annotations

import httpx
import pytest

from adk_eval.studio._server import MAX_BODY_BYTES, MAX_ECHO

from .conftest import TOKEN, agent_targets, running_server


@pytest.fixture
def client(tmp_path):
    with (
        running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url,
        httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}, timeout=30) as http,
    ):
        yield http


def test_bad_bodies_are_4xx_with_a_message_never_500(client):
    deep = "[" * 5000 + "]" * 5000
    answer = client.post("/api/sessions", content='{"target": ' + deep + "}")
    assert answer.status_code == 400
    assert "nests" in answer.json()["error"]
    for shape in ([], "text", 42):
        answer = client.post(
            "/api/remote/model-requests",
            json={"client_session": "a/u/s", "agent_name": "x", "request": shape},
        )
        assert answer.status_code == 422
        assert answer.json()["error"] == "`request` must be a JSON object (an LlmRequest)"


def test_bodies_are_bounded(client):
    big = b'{"message": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    assert client.post("/api/sessions", content=big).status_code == 413

    def chunks():  # no Content-Length: the server counts what arrives
        yield b'{"message": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"x" * 65536
        yield b'"}'

    answer = client.post("/api/sessions", content=chunks())
    assert answer.status_code == 413
    assert answer.json()["error"] == f"the request body is over {MAX_BODY_BYTES} bytes"


def test_echoed_values_are_cut(client):
    long = "a" * 5000
    for path in (f"/{long}", f"/static/{long}", f"/api/sessions/{long}"):
        answer = client.get(path)
        assert answer.status_code == 404
        message = answer.json()["error"]
        assert len(message) < MAX_ECHO + 100
        assert "more characters)" in message


def test_every_response_carries_the_security_headers(client):
    for path in ("/", "/api/targets", "/nowhere"):
        headers = client.get(path).headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "default-src 'self'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "no-referrer"


def test_a_foreign_host_header_is_refused(client):
    answer = client.get("/api/targets", headers={"Host": "attacker.example:80"})
    assert answer.status_code == 421
    assert client.get("/api/targets", headers={"Host": "localhost:1"}).status_code == 200


def test_a_page_opened_with_the_cookie_only_can_act_but_a_forged_post_cannot(client):
    page = client.get("/", params={"token": TOKEN})  # the printed URL sets the cookie
    cookie = page.cookies.get("adk_eval_studio")
    assert cookie == TOKEN
    with httpx.Client(base_url=str(client.base_url), cookies={"adk_eval_studio": cookie}) as tab:
        bookmarked = tab.get("/")  # no ?token=: served from the cookie
        assert bookmarked.status_code == 200
        assert f'<meta name="studio-token" content="{TOKEN}">' in bookmarked.text
        forged = tab.post("/api/sessions", json={"target": "calculator"})  # cookie alone
        assert forged.status_code == 401
