"""The provider's answer: every 429 the gateway's own, a floor on each wait, a budget in wall time.

ADK's real `LiteLlm` (litellm and the OpenAI SDK) and `Gemini` (google-genai)
clients, with their own retry settings, against `FakeProviderServer` on
127.0.0.1 answering 429s: a quota, a hostile ``Retry-After`` that says to retry
at once, a billing 429 that never clears.
"""

from __future__ import annotations

import json
import time

import litellm
import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from google.genai import types

from adk_eval import EvalCase, EvalResult, TerminateWhen, run_eval, run_eval_suite
from adk_eval.fake_provider import (
    FakeProviderServer,
    FakeReply,
    FakeRequest,
    Quota,
    error_reply,
    raw_reply,
)
from adk_eval.models._gateway._settings import ModelCalls


async def run_with(settings: ModelCalls, case: EvalCase) -> EvalResult:
    """One run of `case` whose model calls follow `settings` (a suite of one)."""
    return (await run_eval_suite([case], model_calls=settings)).results[0]


def litellm_model(server: FakeProviderServer, **kwargs) -> LiteLlm:
    return LiteLlm(
        model="openai/fake-model",
        api_base=server.openai_base,
        api_key="test-key",
        _skip_mcp_handler=True,
        **kwargs,
    )


def gemini_model(server: FakeProviderServer, **kwargs) -> Gemini:
    return Gemini(
        model="gemini-2.5-flash",
        base_url=server.gemini_base,
        client_kwargs={"api_key": "test-key"},
        **kwargs,
    )


def asking(name: str, model) -> EvalCase:
    return EvalCase(
        name=name,
        agent=LlmAgent(name="a", model=model),
        first_message="hi",
        terminate_when=TerminateWhen(max_turns=1),
    )


# The clients as users leave them: LiteLlm with its default retries (the OpenAI SDK's two) or
# more, Gemini with retry_options that retry 429s.
CLIENTS = {
    "litellm-default": lambda server: litellm_model(server),
    "litellm-num_retries=5": lambda server: litellm_model(server, num_retries=5),
    "gemini-retry_options": lambda server: gemini_model(
        server, retry_options=types.HttpRetryOptions(attempts=4, initial_delay=0.1)
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_every_429_reaches_the_report_whatever_the_clients_own_retries(client):
    with FakeProviderServer(["ok"], quota=Quota(requests=2, window=1.0)) as server:
        model = CLIENTS[client](server)
        suite = await run_eval_suite([asking(f"asks {n}", model) for n in range(6)])
    assert [result.status for result in suite.results] == ["passed"] * 6
    assert server.rejections > 0
    reported = sum(result.provider.rate_limited for result in suite.results)
    assert reported == server.rejections  # none hidden inside a client's own retries
    assert len(server.requests) == 6 + reported


async def test_litellm_prints_no_banner_of_its_own_for_a_429_the_run_reports(capsys, monkeypatch):
    monkeypatch.setattr(litellm, "suppress_debug_info", False)  # as a fresh process has it
    refusals = iter([error_reply(429, "Slow down.", headers={"retry-after": "1"})])
    with FakeProviderServer(
        responder=lambda request: next(refusals, FakeReply(text="ok"))
    ) as server:
        result = await run_eval(asking("asks", litellm_model(server)))
    assert result.status == "passed", result.explain()
    assert (result.provider.rate_limited, len(server.requests)) == (1, 2)
    assert "Give Feedback" not in capsys.readouterr().out  # litellm's four lines per error


def hostile(headers: dict[str, str], message: str = "Rate limit reached.", give_up_after: int = 60):
    """A provider that refuses everything with a wait of nothing (until `give_up_after`)."""

    def respond(request: FakeRequest) -> FakeReply:
        if len(seen) >= give_up_after:  # ends a run the old code would never end
            return FakeReply(text="ok")
        seen.append(request)
        body = {"error": {"message": message, "type": "rate_limit_exceeded", "code": None}}
        if request.api == "gemini":
            body = {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"}}
        return raw_reply(json.dumps(body), 429, headers=headers)

    seen: list[FakeRequest] = []
    return respond


HOSTILE = {
    "retry-after 0": {"retry-after": "0"},
    "retry-after -30": {"retry-after": "-30"},
    "retry-after nan": {"retry-after": "nan"},
    "retry-after-ms 0": {"retry-after-ms": "0", "retry-after": "0"},
    "retry in 0ms": {},
}


@pytest.mark.slow
@pytest.mark.parametrize("said", HOSTILE)
@pytest.mark.parametrize("client", ["litellm", "gemini"])
async def test_a_provider_that_says_retry_at_once_is_not_asked_without_end(client, said):
    message = "Rate limit reached. Please retry in 0ms." if said == "retry in 0ms" else "Slow down."
    respond = hostile(HOSTILE[said], message)
    with FakeProviderServer(responder=respond) as server:
        model = litellm_model(server) if client == "litellm" else gemini_model(server)
        result = await run_with(ModelCalls(max_wait=1.2), asking("asks", model))
    assert result.status == "error"
    assert result.error.type == "ProviderWaitError"
    # a wait of 0.5-1 s, then one of 1-2 s that the budget cannot hold: two requests, not 60
    assert len(server.requests) == 2
    assert (result.provider.rate_limited, result.provider.retries) == (2, 1)  # 1 sent again
    assert result.provider.waited_s >= 1.15  # every wait counted, to the budget
    assert "the wait budget is 1.2 s" in result.error.message


INSUFFICIENT_QUOTA = {
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }
}
ZERO_QUOTA = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota. * Quota exceeded for metric: "
        "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"}],
    }
}


@pytest.mark.parametrize("client", ["litellm", "gemini"])
async def test_a_quota_waiting_never_clears_is_an_error_at_once(client):
    body = INSUFFICIENT_QUOTA if client == "litellm" else ZERO_QUOTA
    refuse = raw_reply(json.dumps(body), 429, headers={"retry-after": "20"})
    with FakeProviderServer([refuse]) as server:
        model = litellm_model(server) if client == "litellm" else gemini_model(server)
        result = await run_with(ModelCalls(max_wait=2.0), asking("asks", model))  # (was waited)
    assert result.status == "error"
    assert len(server.requests) == 1  # not sent again, not waited for
    assert result.provider.waited_s == 0
    assert result.error.type == "ProviderWaitError"
    assert "quota is spent and waiting will not clear it" in result.error.message
    assert "billing" in result.error.message
    assert "\n" not in result.error.message
    assert result.attribution is not None
    assert result.attribution.party == "provider"


@pytest.mark.slow
async def test_the_wait_budget_is_wall_time_even_where_litellm_would_wait_inside_a_call():
    # The second call is refused with Retry-After 20: the OpenAI SDK under LiteLlm would sleep
    # 20 s inside one call and pass, where the run's budget (1 s) and its report never see it.
    quota = Quota(requests=1, window=20.0)
    with FakeProviderServer(["ok"], quota=quota) as server:
        model = litellm_model(server)
        await run_with(ModelCalls(max_wait=1.0), asking("first", model))
        started = time.monotonic()
        result = await run_with(ModelCalls(max_wait=1.0), asking("second", model))
        wall = time.monotonic() - started
    assert result.status == "error"
    assert [request.outcome for request in server.requests] == ["admitted", "rate_limited"]
    assert result.provider.rate_limited == 1
    assert 1.0 <= result.provider.waited_s < 1.5
    assert wall < 3 * 1.0 + 2  # the budget, not the 20 s Retry-After (generous: loaded CI)
    message = result.error.message
    assert message.startswith("model openai/fake-model at ")
    assert ": refused 1 time over 1." in message
    assert "the run waited 1." in message
    assert "Rate limit reached for fake-model" in message  # the provider's own words
