"""ADK's real model clients (LiteLlm, Gemini) against fake providers on 127.0.0.1.

Everything but the provider is real: ADK's `LiteLlm` (litellm and the OpenAI
SDK underneath) and `Gemini` (google-genai) send real HTTP requests to a
`FakeProviderServer` that speaks their wire formats.
"""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from google.genai import types

from adk_eval import (
    EvalCase,
    ScriptedUserAgent,
    TerminateWhen,
    UserAgents,
    run_eval,
    run_eval_suite,
)
from adk_eval.fake_provider import (
    FakeProviderServer,
    FakeReply,
    FakeRequest,
    error_reply,
    raw_reply,
    text_reply,
    tool_reply,
)
from adk_eval.models import ModelCalls


def add(a: int, b: int) -> dict:
    """Adds two integers."""
    return {"result": a + b}


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


CLIENTS = {"litellm": litellm_model, "gemini": gemini_model}


def calculator(model) -> LlmAgent:
    return LlmAgent(
        name="calculator", model=model, tools=[add], instruction="You add numbers with `add`."
    )


def tool_responses(result) -> list:
    return [
        p.function_response.response
        for e in result.events
        for p in (e.content.parts if e.content else [])
        if p.function_response
    ]


def case(model, **kwargs) -> EvalCase:
    defaults = dict(
        name="adds",
        agent=calculator(model),
        tool_mocks={"add": add},
        first_message="What is 2+2?",
        terminate_when=TerminateWhen(max_turns=1),
    )
    return EvalCase(**{**defaults, **kwargs})


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_multi_turn_run_with_tool_calls_and_token_usage(client):
    script = [
        tool_reply("add", {"a": 2, "b": 2}, prompt_tokens=100, completion_tokens=7),
        text_reply("2 + 2 = 4.", prompt_tokens=120, completion_tokens=5),
        tool_reply("add", {"a": 4, "b": 1}, prompt_tokens=140, completion_tokens=7),
        text_reply("Plus one is 5.", prompt_tokens=160, completion_tokens=5),
    ]
    with FakeProviderServer(script) as server:
        result = await run_eval(
            case(
                CLIENTS[client](server),
                user_agents=UserAgents(loop=ScriptedUserAgent(name="u", script=["And plus 1?"])),
                terminate_when=TerminateWhen(max_turns=2),
            )
        )
    assert result.status == "passed", result.explain()
    responses = tool_responses(result)
    assert responses == [{"result": 4}, {"result": 5}]  # the real tool ran on the parsed args
    assert result.events[-1].content.parts[0].text == "Plus one is 5."
    assert result.token_usage.input_tokens == 100 + 120 + 140 + 160
    assert result.token_usage.output_tokens == 7 + 5 + 7 + 5
    # what went over the wire: the tool result came back to the provider as data
    assert [r.turn for r in server.requests] == [0, 1, 2, 3]
    second = server.requests[1].body
    if client == "litellm":
        assert second["messages"][-1]["role"] == "tool"
        assert second["tools"][0]["function"]["name"] == "add"
    else:
        assert second["contents"][-1]["parts"][0]["functionResponse"]["name"] == "add"
        assert second["tools"][0]["functionDeclarations"][0]["name"] == "add"


def failing_then(status: int, failures: int, message: str):
    seen: list[FakeRequest] = []

    def respond(request: FakeRequest) -> FakeReply:
        seen.append(request)
        return error_reply(status, message) if len(seen) <= failures else text_reply("ok")

    return respond


@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.slow
async def test_litellm_rate_limits_and_server_errors_are_retried_by_the_gateway(status):
    with FakeProviderServer(responder=failing_then(status, 2, "try again")) as server:
        result = await run_eval(case(litellm_model(server)))  # its default retries
    assert result.status == "passed", result.explain()
    assert len(server.requests) == 3  # two failures, then the answer
    assert result.provider.retries == 2  # each one the gateway's, none hidden in the client
    assert (result.provider.rate_limited, result.provider.server_errors) == (
        (2, 0) if status == 429 else (0, 2)
    )


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.slow
async def test_gemini_with_retry_options_is_retried_by_the_gateway(status):
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.05, max_delay=0.2)
    with FakeProviderServer(responder=failing_then(status, 2, "try again")) as server:
        result = await run_eval(case(gemini_model(server, retry_options=retry)))
    assert result.status == "passed", result.explain()
    assert len(server.requests) == 3
    assert result.provider.retries == 2


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_provider_error_that_persists_is_an_error_result_with_its_message(client):
    with FakeProviderServer([error_reply(400, "model `fake-model` does not exist")]) as server:
        result = await run_eval(case(CLIENTS[client](server)))
    assert result.status == "error"
    assert result.error.phase == "system"
    assert "model `fake-model` does not exist" in result.error.message


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_malformed_reply_is_an_error_result(client):
    once = ModelCalls(server_retries=0)  # retried, it fails the same, 3.5 s later
    with FakeProviderServer([raw_reply("<html>bad gateway</html>")]) as server:
        result = (await run_eval_suite([case(CLIENTS[client](server))], model_calls=once)).results[
            0
        ]
    assert result.status == "error"
    assert result.error.phase == "system"
    assert "Expecting value" in result.error.message  # the JSON decoder's complaint, passed on


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.slow
async def test_a_provider_that_hangs_is_cut_by_max_duration(client):
    with FakeProviderServer([text_reply("too late", delay=60)]) as server:
        started = time.monotonic()
        result = await run_eval(
            case(CLIENTS[client](server), terminate_when=TerminateWhen(max_duration=1.0))
        )
        elapsed = time.monotonic() - started
    assert result.status == "terminated"
    assert result.termination_reason == "max_duration"
    assert elapsed < 30  # cut at the limit, not after the provider's 60 s


# -- what cheap models do ----------------------------------------------------------------


async def test_a_hallucinated_tool_name_goes_back_to_the_model_as_an_error():
    with FakeProviderServer([tool_reply("multiply", {"a": 2, "b": 3}), "Sorry."]) as server:
        result = await run_eval(case(litellm_model(server)))
    assert result.status == "passed", result.explain()
    errors = tool_responses(result)
    assert len(errors) == 1
    assert "multiply" in str(errors[0])
    assert server.requests[1].body["messages"][-1]["role"] == "tool"


async def test_a_model_that_keeps_calling_a_missing_tool_is_stopped():
    with FakeProviderServer([tool_reply("multiply", {"a": 2, "b": 3})]) as server:
        result = await run_eval(
            case(litellm_model(server), terminate_when=TerminateWhen(max_model_calls=3))
        )
    assert (result.status, result.termination_reason) == ("terminated", "max_model_calls")


async def test_wrong_argument_types_end_with_a_status_and_reason():
    with FakeProviderServer([tool_reply("add", {"a": "two", "b": [2]}), "done"]) as server:
        result = await run_eval(case(litellm_model(server)))
    assert result.status == "error"
    assert "add" in result.error.message or "list" in result.error.message


async def test_an_endless_tool_loop_is_stopped_by_max_model_calls():
    with FakeProviderServer([tool_reply("add", {"a": 1, "b": 1})]) as server:  # forever
        result = await run_eval(
            case(litellm_model(server), terminate_when=TerminateWhen(max_model_calls=5))
        )
    assert result.status == "terminated"
    assert result.termination_reason == "max_model_calls"
    assert str(result.termination) == "max_model_calls: 5 system model calls (limit 5)"
    assert len(server.requests) == 5


@pytest.mark.parametrize("client", CLIENTS)
async def test_an_empty_reply_ends_the_turn_and_the_run_completes(client):
    with FakeProviderServer([FakeReply(text="")]) as server:
        result = await run_eval(case(CLIENTS[client](server)))
    assert result.status in ("passed", "error"), result.explain()
    assert result.status == "error" or result.turns == 0


@pytest.mark.slow
async def test_jitter_spreads_the_delay_around_its_mean_and_repeats_with_its_seed():
    waits = []
    for _ in range(2):  # the same seed draws the same waits
        with FakeProviderServer(["hi"], delay=0.02, jitter=0.5, seed=7) as server:
            for _ in range(6):
                result = await run_eval(
                    EvalCase(name="j", agent=calculator(litellm_model(server)), first_message="1")
                )
                assert result.status == "passed", result.explain()
            waits.append([request.waited for request in server.requests])
    assert waits[0] == waits[1]
    assert all(0.01 <= wait <= 0.03 for wait in waits[0])
    assert len(set(waits[0])) == len(waits[0])  # spread, not one fixed delay
    with pytest.raises(ValueError, match="jitter must be between 0 and 1"):
        FakeProviderServer(["hi"], jitter=1.5)


async def test_stop_returns_at_once_and_drops_a_delayed_reply():
    asked = threading.Event()

    def respond(request: FakeRequest) -> FakeReply:
        asked.set()
        return text_reply("too late", delay=60)

    server = FakeProviderServer(responder=respond).start()
    url = f"{server.openai_base}/chat/completions"
    async with httpx.AsyncClient() as client:
        pending = asyncio.create_task(client.post(url, json={"messages": []}))
        assert await asyncio.to_thread(asked.wait, 10)
        await asyncio.to_thread(server.stop)
        response = await pending  # a stop that waited out the delay would answer 200
        assert response.status_code == 503
        assert response.json()["error"]["message"] == "the fake provider stopped"
        with pytest.raises(httpx.ConnectError):  # the port is closed
            await client.post(url, json={"messages": []})
