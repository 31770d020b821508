"""The studio server under hostile input: no 500s, bounded bodies and echoes, headers, Host."""

from __future__ import annotations

import json

import httpx
import pytest

from adk_eval.studio._server import MAX_BODY_BYTES, MAX_ECHO, MAX_PROBLEMS

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


def remote(client, request, **fields):
    """Posts a remote model request (the fields override the session and agent)."""
    body = {"client_session": "app/user/session", "agent_name": "remote_agent", "request": request}
    return client.post("/api/remote/model-requests", json={**body, **fields})


MODEL_REQUEST = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "tools": [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}],
}


def test_values_json_does_not_have_are_400_not_500(client):
    request = json.dumps(MODEL_REQUEST)
    for value in ("1" * 5000, "NaN", "-Infinity", "1e999", '"\\ud800"'):
        raw = f'{{"client_session": {value}, "agent_name": "x", "request": {request}}}'
        answer = client.post("/api/remote/model-requests", content=raw)
        assert answer.status_code == 400, value
        assert answer.json()["error"] in (
            "the request body must be JSON",
            "the request body has a string that is not Unicode text (a lone surrogate)",
        )
    raw = f'{{"\\udfff": 1, "agent_name": "x", "request": {request}}}'  # a key
    assert client.post("/api/remote/model-requests", content=raw).status_code == 400
    assert client.get("/api/sessions").json() == []


def test_a_remote_request_must_be_shaped_like_a_model_request(client):
    shapes = [
        {},
        {"contents": "hi", "tools": []},
        {"contents": [{"parts": [{"text": 1}]}], "tools": []},
        {"contents": [], "tools": [1]},
        {"contents": [], "tools": [{"name": "lookup"}]},
        {"contents": [], "tools": [{"name": "lookup", "parameters": {"type": 5}}]},
        {"contents": [], "tools": [], "output_schema": "a string"},
    ]
    for shape in shapes:
        answer = remote(client, shape)
        assert answer.status_code == 422, shape
        assert answer.json()["error"] == "`request` is not a model request (an LlmRequest)"
        assert answer.json()["problems"], shape
    assert client.get("/api/sessions").json() == []  # nothing half-made that a view trips on
    assert remote(client, MODEL_REQUEST).status_code == 200
    (session,) = client.get("/api/sessions").json()
    assert client.get(f"/api/sessions/{session['id']}").status_code == 200


def test_answers_to_odd_remote_requests_are_checked_not_500(client):
    unusable = {**MODEL_REQUEST, "output_schema": {"$ref": "#/$defs/missing"}}
    request_id = remote(client, unusable).json()["request_id"]
    answer = client.post(f"/api/requests/{request_id}/answer", json={"type": "output", "value": {}})
    assert answer.status_code == 422
    assert answer.json()["problems"][0].startswith("(schema): the schema cannot be used")

    request_id = remote(client, MODEL_REQUEST, client_session="app/user/2").json()["request_id"]
    # every field is checked before the answer is taken: none of these reaches the session
    for call, problem in [
        ({"name": "lookup", "args": {}, "id": ["x"]}, "calls/0/id: ['x'] is not of type"),
        ({"name": "lookup", "args": {}, "id": {"x": 1}}, "calls/0/id: {'x': 1} is not of type"),
        ({"name": ["lookup"], "args": {}}, "calls/0/name: ['lookup'] is not of type 'string'"),
        ({"name": {"n": "lookup"}, "args": {}}, "calls/0/name: {'n': 'lookup'} is not of type"),
        ({"name": "lookup", "args": [1]}, "calls/0/args: [1] is not of type 'object'"),
        ({"name": "lookup", "extra": 1}, "calls/0: Additional properties are not allowed"),
    ]:
        answer = client.post(
            f"/api/requests/{request_id}/answer", json={"type": "tool_calls", "calls": [call]}
        )
        assert answer.status_code == 422, call
        assert answer.json()["problems"][0].startswith(problem), answer.json()
    good = {"name": "lookup", "args": {"q": "x"}, "id": "c1"}
    answer = client.post(
        f"/api/requests/{request_id}/answer", json={"type": "tool_calls", "calls": [good]}
    )
    assert answer.status_code == 200, answer.json()


def test_problem_lists_are_capped(client):
    request_id = remote(client, MODEL_REQUEST).json()["request_id"]
    answer = client.post(
        f"/api/requests/{request_id}/answer", json={"type": "tool_calls", "calls": [0] * 5000}
    )
    assert answer.status_code == 422
    problems = answer.json()["problems"]
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[-1] == f"… and {5000 - MAX_PROBLEMS} more problems"
    assert len(answer.content) < 5000


def test_a_bad_query_parameter_is_a_422_that_does_not_echo_it(client):
    for path, name in (("/api/remote/model-requests/x/answer", "wait"), ("/api/events", "since")):
        answer = client.get(path, params={name: "a" * 10_000})
        assert answer.status_code == 422
        assert answer.json()["error"] == "the request does not fit"
        assert answer.json()["problems"][0].startswith(f"query/{name}: ")
        assert "aaaa" not in answer.text


def test_the_host_check_ignores_case(client):
    for host in ("LOCALHOST:1", "LocalHost", "[::1]:8765", "127.0.0.1"):
        assert client.get("/api/targets", headers={"Host": host}).status_code == 200, host
    assert (
        client.get("/api/targets", headers={"Host": "localhost.attacker.example"}).status_code
        == 421
    )
