"""The fake provider's quota mode and server errors, as ADK's real clients meet them.

The clients are ADK's `LiteLlm` (litellm and the OpenAI SDK, their own retries off)
and `Gemini` (google-genai), sending real HTTP requests; the quota's arithmetic is
pinned on its own clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import litellm
import pytest
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import errors, types

from adk_eval.fake_provider import FakeProviderServer, FakeRequest, Quota, error_reply
from adk_eval.fake_provider.__main__ import server_of
from adk_eval.fake_provider._quota import QuotaBook


def litellm_model(server: FakeProviderServer, **kwargs) -> LiteLlm:
    return LiteLlm(
        model="openai/fake-model",
        api_base=server.openai_base,
        api_key="x",
        _skip_mcp_handler=True,
        **kwargs,
    )


def gemini_model(server: FakeProviderServer) -> Gemini:
    return Gemini(
        model="gemini-2.5-flash", base_url=server.gemini_base, client_kwargs={"api_key": "x"}
    )


async def ask(model: LiteLlm | Gemini, text: str = "hello") -> str:
    """One model call through the client; the reply's text."""
    content = types.Content(role="user", parts=[types.Part(text=text)])
    request = LlmRequest(model=model.model, contents=[content])
    async for response in model.generate_content_async(request):
        assert response.content is not None
        assert response.content.parts
        return response.content.parts[0].text or ""
    raise AssertionError("no response")


def openai_post(server: FakeProviderServer, model: str = "m", text: str = "hi") -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    return httpx.post(f"{server.openai_base}/chat/completions", json=body)


# -- through the real clients ------------------------------------------------------------


async def test_litellm_over_the_quota_gets_a_rate_limit_error_it_can_wait_out():
    with FakeProviderServer(["ok"], quota=Quota(requests=2, window=10.0)) as server:
        model = litellm_model(server, num_retries=0)
        assert [await ask(model), await ask(model)] == ["ok", "ok"]
        with pytest.raises(litellm.RateLimitError) as raised:
            await ask(model)
    error = raised.value
    assert "Rate limit reached for fake-model on requests per 10s: Limit 2, Used 2" in str(error)
    headers = error.response.headers
    assert 9 <= int(headers["retry-after"]) <= 10  # the first request leaves the window then
    assert (headers["x-ratelimit-limit-requests"], headers["x-ratelimit-remaining-requests"]) == (
        "2",
        "0",
    )
    assert error.response.json()["error"]["code"] == "rate_limit_exceeded"
    assert [request.outcome for request in server.requests] == [
        "admitted",
        "admitted",
        "rate_limited",
    ]


async def test_gemini_over_the_quota_gets_a_client_error_with_its_retry_info():
    with FakeProviderServer(["ok"], quota=Quota(requests=1, window=10.0)) as server:
        model = gemini_model(server)
        assert await ask(model) == "ok"
        with pytest.raises(errors.ClientError) as raised:
            await ask(model)
    error = raised.value
    assert (error.code, error.status) == (429, "RESOURCE_EXHAUSTED")
    failure, retry = error.details["error"]["details"]
    assert retry["@type"] == "type.googleapis.com/google.rpc.RetryInfo"
    assert retry["retryDelay"] in ("9s", "10s")
    assert error.response.headers["Retry-After"] == retry["retryDelay"][:-1]
    violation = failure["violations"][0]
    assert violation["quotaDimensions"] == {"location": "global", "model": "gemini-2.5-flash"}
    assert violation["quotaId"] == "GenerateRequestsPer10SecondsPerProjectPerModel"


@pytest.mark.slow
async def test_litellm_own_retries_wait_out_the_retry_after_header():
    with FakeProviderServer(["ok"], quota=Quota(requests=1, window=1.0)) as server:
        model = litellm_model(server)  # the OpenAI SDK's default retries read Retry-After
        started = time.monotonic()
        assert [await ask(model), await ask(model)] == ["ok", "ok"]
        elapsed = time.monotonic() - started
    assert [request.outcome for request in server.requests] == [
        "admitted",
        "rate_limited",
        "admitted",
    ]
    assert 0.9 < elapsed < 5
    assert server.max_admitted_in_any_window(1.0) == 1


@pytest.mark.slow
async def test_server_errors_are_drawn_from_the_seed_and_spend_no_quota():
    def outcomes(seed: int) -> list[str]:
        quota = Quota(requests=6, window=10.0)
        with FakeProviderServer(["ok"], quota=quota, error_rate=0.3, seed=seed) as server:
            statuses = [openai_post(server).status_code for _ in range(12)]
        assert server.rejections == statuses.count(503) + statuses.count(429)
        return [request.outcome for request in server.requests]

    first = outcomes(seed=3)
    assert first == outcomes(seed=3)  # reproducible
    assert first != outcomes(seed=4)
    errors_drawn = first.count("server_error")
    assert 0 < errors_drawn < 6
    assert first.count("admitted") == 6  # the 503s spent none of the quota
    assert first.count("rate_limited") == 12 - 6 - errors_drawn
    with (
        FakeProviderServer(["ok"], error_rate=1.0) as server,
        pytest.raises(errors.ServerError) as raised,
    ):
        await ask(gemini_model(server))
    assert (raised.value.code, raised.value.status) == (503, "UNAVAILABLE")


# -- the quota's rules, on the server ------------------------------------------------


def test_a_token_quota_counts_the_prompt_estimate_and_the_completion():
    quota = Quota(tokens=250, window=10.0)
    with FakeProviderServer(["ok"], quota=quota) as server:  # completion_tokens=5
        responses = [openai_post(server, text="x" * 400) for _ in range(3)]
    assert [response.status_code for response in responses] == [200, 200, 429]
    # every string of the messages ("user" and the text): 404 characters / 4, plus 5
    assert [request.tokens for request in server.requests] == [106, 106, 106]
    message = responses[2].json()["error"]["message"]
    assert "on tokens per 10s: Limit 250, Used 212, Requested 106." in message
    assert responses[1].headers["x-ratelimit-remaining-tokens"] == "38"


def test_quotas_are_per_model_unless_shared():
    for per_model, expected in ((True, [200, 200, 429]), (False, [200, 429, 429])):
        with FakeProviderServer(["ok"], quota=Quota(1, window=10.0, per_model=per_model)) as s:
            statuses = [openai_post(s, model).status_code for model in ("a", "b", "a")]
        assert statuses == expected
        assert s.max_admitted_in_any_window(10.0, model="a") == 1


# -- the quota's arithmetic, on its own clock ----------------------------------------


def test_a_refused_request_spends_nothing_and_waits_for_the_oldest_to_leave():
    book = QuotaBook(Quota(requests=2, window=10.0))
    assert book.admit("m", 0.0, 1) is None
    assert book.admit("m", 4.0, 1) is None
    refusal = book.admit("m", 6.5, 1)
    assert refusal is not None
    assert (refusal.limit, refusal.used, refusal.retry_after) == ("requests", 2, 3.5)
    assert book.admit("m", 9.99, 1) is not None  # the refusals spent nothing
    assert book.admit("m", 10.0, 1) is None  # the request at 0 left exactly one window later
    assert book.headers("m", 10.0)["x-ratelimit-remaining-requests"] == "0"
    assert book.headers("m", 10.0)["x-ratelimit-reset-requests"] == "10s"


def test_a_token_refusal_waits_until_enough_tokens_leave():
    book = QuotaBook(Quota(tokens=100, window=10.0))
    for now in (0.0, 1.0, 2.0):
        assert book.admit("m", now, 30) is None
    refusal = book.admit("m", 3.0, 50)  # 90 used: 40 must leave, the first two requests
    assert refusal is not None
    assert (refusal.limit, refusal.used, refusal.requested) == ("tokens", 90, 50)
    assert refusal.retry_after == 8.0
    too_large = book.admit("m", 3.0, 101)
    assert too_large is not None
    assert too_large.retry_after == 10.0  # larger than the limit: never, so one whole window


def test_the_window_helper_counts_admitted_requests_in_half_open_spans():
    server = FakeProviderServer(["ok"])

    def logged(arrived: float, model: str = "m", outcome: str = "admitted") -> FakeRequest:
        return FakeRequest("openai", {}, model, 0, arrived=arrived, outcome=outcome)

    server.requests = [
        logged(0.0),
        logged(0.5),
        logged(0.6, outcome="rate_limited"),
        logged(0.99),
        logged(1.0),
        logged(1.2, model="other"),
        logged(1.5),
    ]
    assert server.max_admitted_in_any_window(1.0) == 4  # [0.5, 1.5): 0.5, 0.99, 1.0, 1.2
    assert server.max_admitted_in_any_window(1.0, model="m") == 3
    assert server.max_admitted_in_any_window(0.5) == 3  # [0.99, 1.49)
    assert server.rejections == 1


def test_a_quota_names_its_mistakes():
    with pytest.raises(ValueError, match="a Quota needs a limit"):
        Quota()
    with pytest.raises(ValueError, match="Quota requests must be >= 1 or None, got 0"):
        Quota(requests=0)
    with pytest.raises(ValueError, match="Quota window must be > 0 seconds, got 0"):
        Quota(requests=1, window=0)
    with pytest.raises(ValueError, match="error_rate must be between 0 and 1, got 2"):
        FakeProviderServer(["ok"], error_rate=2)


# -- the command line -------------------------------------------------------------------


def test_the_command_line_sets_the_quota_the_errors_and_the_seed():
    server, port = server_of(
        ["--rpm", "120", "--tpm", "9000", "--window", "10", "--error-rate", "0.05", "--seed", "7"]
    )
    assert server.quota == Quota(requests=120, tokens=9000, window=10.0)
    assert (server.error_rate, port) == (0.05, 0)
    assert server_of([])[0].quota is None
    with pytest.raises(SystemExit):  # argparse's one-line refusal, not a traceback
        server_of(["--rpm", "0"])


def test_the_command_line_says_a_quota_as_n_per_window():
    assert server_of(["--rpm", "20/10s"])[0].quota == Quota(requests=20, window=10.0)
    assert server_of(["--rpm", "3/s", "--tpm", "900/s"])[0].quota == Quota(3, 900, window=1.0)
    assert server_of(["--rpm", "20/10s", "--window", "10"])[0].quota == Quota(20, window=10.0)
    for contradicting in (["--rpm", "20/10s", "--window", "60"], ["--rpm", "2/s", "--tpm", "9/1m"]):
        with pytest.raises(SystemExit):
            server_of(contradicting)


def test_a_reply_carries_its_own_headers():
    reply = error_reply(429, "slow down", headers={"retry-after": "0", "x-note": "hostile"})
    with FakeProviderServer([reply]) as server:
        response = openai_post(server)
    assert response.status_code == 429
    assert (response.headers["retry-after"], response.headers["x-note"]) == ("0", "hostile")


def test_the_log_file_has_a_json_line_per_request_with_the_answers_status(tmp_path):
    log = tmp_path / "requests.jsonl"
    log.write_text('{"kept": true}\n')  # what was there stays: lines are appended
    with FakeProviderServer(["ok"], quota=Quota(requests=1, window=10.0), log=log) as server:
        statuses = [openai_post(server, text=text).status_code for text in ("a", "b")]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert statuses == [200, 429]
    assert lines[0] == {"kept": True}
    first, second = lines[1:]
    assert (first["outcome"], first["status"], first["retry_after"]) == ("admitted", 200, None)
    assert (second["outcome"], second["status"]) == ("rate_limited", 429)
    assert second["retry_after"] in ("9", "10")
    assert (first["api"], first["model"], first["turn"]) == ("openai", "m", 0)
    assert second["body"]["messages"] == [{"role": "user", "content": "b"}]
    assert abs(first["time"] - time.time()) < 60


def test_python_dash_m_serves_a_quota(tmp_path):
    log = tmp_path / "requests.jsonl"
    command = [
        *(sys.executable, "-m", "adk_eval.fake_provider", "--rpm", "1/1m", "--calls", "0"),
        *("--log", str(log)),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        statuses = [httpx.post(f"{url}/v1/chat/completions", json=body) for _ in range(2)]
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
    assert [response.status_code for response in statuses] == [200, 429]
    assert int(statuses[1].headers["retry-after"]) in (59, 60)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["outcome"], line["status"]) for line in logged] == [
        ("admitted", 200),
        ("rate_limited", 429),
    ]
