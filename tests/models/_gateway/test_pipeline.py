"""The gateway: every model call of a run paced and retried, through ADK's real clients.

The provider is `FakeProviderServer` in quota mode: real 429 bodies (OpenAI's
with ``Retry-After``, Gemini's ``RESOURCE_EXHAUSTED`` with ``RetryInfo``) and
503s; the clients are ADK's `LiteLlm` (litellm and the OpenAI SDK) and `Gemini`
(google-genai), which sends no retry of its own.
"""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_eval import EvalCase, TerminateWhen, UserAgents, run_eval, run_eval_suite
from adk_eval.fake_provider import (
    FakeProviderServer,
    FakeReply,
    FakeRequest,
    Quota,
    error_reply,
    text_reply,
    tool_reply,
)
from adk_eval.metrics import llm_judge
from adk_eval.models._gateway._gate import RunGate, gating
from adk_eval.models._gateway._pipeline import GatedLlm
from adk_eval.models._gateway._settings import ModelCalls
from adk_eval.models._pacing._limits import RateLimit
from adk_eval.models._pacing._pacer import LocalPacer


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


def gemini_model(server: FakeProviderServer) -> Gemini:
    return Gemini(
        model="gemini-2.5-flash", base_url=server.gemini_base, client_kwargs={"api_key": "k"}
    )


CLIENTS = {"litellm": litellm_model, "gemini": gemini_model}
TWO_CALLS = [tool_reply("add", {"a": 2, "b": 2}), text_reply("4")]


def adding(name: str, model, **kwargs) -> EvalCase:
    defaults = dict(
        name=name,
        agent=LlmAgent(name="calculator", model=model, tools=[add]),
        tool_mocks={"add": add},
        first_message="What is 2+2?",
        terminate_when=TerminateWhen(max_turns=1),
    )
    return EvalCase(**{**defaults, **kwargs})


# -- the summarizer's wrapper -----------------------------------------------------------------


class Counting(BaseLlm):
    """A model that counts its calls in a field of its own."""

    calls: int = 0

    async def generate_content_async(self, llm_request, stream=False):
        self.calls += 1
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="hi")]))


async def test_a_gated_models_calls_run_on_the_model_object_itself_through_a_gate():
    model = Counting(model="counting")
    wrapped = GatedLlm.of(GatedLlm.of(model, "agent"), "summarizer")  # never nested
    assert (wrapped.inner, wrapped.role, wrapped.model) == (model, "summarizer", "counting")
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])])
    gate = RunGate(ModelCalls(), LocalPacer())
    with gating(gate):
        answers = [r async for r in wrapped.generate_content_async(request)]
    assert answers[0].content.parts[0].text == "hi"
    assert model.calls == 1  # the state is the model's own
    assert gate.stats().calls == 1  # and the call was the gate's


# -- pacing and retries ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_a_429_is_waited_out_and_retried_not_an_error(client):
    quota = Quota(requests=1, window=1.5)  # longer than a loaded machine takes to the next call
    with FakeProviderServer(TWO_CALLS, quota=quota) as server:
        model = CLIENTS[client](server, **({"num_retries": 0} if client == "litellm" else {}))
        result = await run_eval(adding("adds", model))
    assert result.status == "passed", result.explain()
    assert server.rejections >= 1  # the provider did refuse
    assert result.provider.rate_limited == server.rejections
    assert result.provider.retries == server.rejections
    assert result.provider.calls == 2
    assert result.provider.waited_s > 0


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_a_known_limit_paces_calls_so_the_provider_refuses_none(client):
    quota = Quota(requests=3, window=0.5)
    limits = {"*": RateLimit(rpm=3 * 60 / 0.5, window=0.5)}
    with FakeProviderServer(TWO_CALLS, quota=quota) as server:
        model = CLIENTS[client](server)
        cases = [adding(f"adds {n}", model) for n in range(6)]
        known = ModelCalls(limits=limits)
        suite = await run_eval_suite(cases, max_concurrency=6, model_calls=known)
    assert [r.status for r in suite.results] == ["passed"] * 6
    assert server.rejections == 0
    assert server.max_admitted_in_any_window(0.5) <= 3
    assert len(server.requests) == 12


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_without_a_limit_the_429s_teach_it_and_every_run_passes(client):
    quota = Quota(requests=4, window=0.5)
    with FakeProviderServer(TWO_CALLS, quota=quota) as server:
        model = CLIENTS[client](server, **({"num_retries": 0} if client == "litellm" else {}))
        suite = await run_eval_suite(
            [adding(f"adds {n}", model) for n in range(10)], max_concurrency=10
        )
    assert [r.status for r in suite.results] == ["passed"] * 10
    assert server.rejections > 0
    assert sum(r.provider.rate_limited for r in suite.results) == server.rejections
    assert server.max_admitted_in_any_window(0.5) <= 4


def failing(status: int, times: int, then: list[FakeReply]):
    seen: list[FakeRequest] = []

    def respond(request: FakeRequest) -> FakeReply:
        seen.append(request)
        if len(seen) <= times:
            return error_reply(status, "overloaded")
        return then[min(request.turn, len(then) - 1)]

    return respond


@pytest.mark.slow
async def test_server_errors_are_retried_a_bounded_number_of_times():
    with FakeProviderServer(responder=failing(503, 2, TWO_CALLS)) as server:
        result = await run_eval(adding("adds", gemini_model(server)))
    assert result.status == "passed", result.explain()
    assert (result.provider.server_errors, result.provider.retries) == (2, 2)
    assert result.provider.rate_limited == 0

    with FakeProviderServer(responder=failing(503, 9, TWO_CALLS)) as server:
        once = ModelCalls(server_retries=1)
        suite = await run_eval_suite([adding("adds", gemini_model(server))], model_calls=once)
    [result] = suite.results
    assert result.status == "error"
    assert len(server.requests) == 2  # the call and its one retry
    assert result.attribution is not None
    assert result.attribution.party == "provider"
    assert (result.provider.server_errors, result.provider.retries) == (2, 1)


async def test_a_run_gives_up_on_the_provider_only_when_its_wait_budget_is_spent():
    quota = Quota(requests=1, window=30.0)  # the second call would wait half a minute
    with FakeProviderServer(TWO_CALLS, quota=quota) as server:
        brief = ModelCalls(max_wait=0.3)
        suite = await run_eval_suite([adding("adds", gemini_model(server))], model_calls=brief)
    [result] = suite.results
    assert result.status == "error"
    assert "wait budget is 0.3 s" in result.error.message
    assert "RESOURCE_EXHAUSTED" in result.error.message or "quota" in result.error.message
    assert result.error.type == "ProviderWaitError"
    assert result.attribution is not None
    assert result.attribution.party == "provider"
    assert len(server.requests) == 2  # one answer, one 429: nothing sent after the budget


@pytest.mark.slow
async def test_waiting_for_quota_does_not_count_against_max_duration():
    quota = Quota(requests=1, window=1.2)  # the second call waits over a second
    with FakeProviderServer(TWO_CALLS, quota=quota) as server:
        result = await run_eval(
            adding("adds", gemini_model(server), terminate_when=TerminateWhen(max_duration=0.8))
        )
    assert result.status == "passed", result.explain()
    assert result.termination is None
    assert result.provider.waited_s > 0.8  # longer than the whole limit


# -- every role ------------------------------------------------------------------------------


@pytest.mark.slow
async def test_user_agents_and_judges_go_through_the_gateway_too():
    quota = Quota(requests=1, window=0.4)
    with (
        FakeProviderServer([text_reply("Hello, how can I help?")]) as agent_server,
        FakeProviderServer([text_reply("Thanks, bye.")], quota=quota) as user_server,
        FakeProviderServer(
            [text_reply('{"passed": true, "score": 1, "reasoning": "fine"}')], quota=quota
        ) as judge,
    ):
        user = LlmAgent(name="ann", model=gemini_model(user_server), instruction="You are Ann.")
        case = EvalCase(
            name="chat",
            agent=LlmAgent(name="helper", model=gemini_model(agent_server)),
            user_agents=UserAgents(loop=user),
            first_message="Hi",
            terminate_when=TerminateWhen(max_turns=2),
            metrics=[
                llm_judge("polite", "Was it polite?", model=gemini_model(judge)),
                llm_judge("brief", "Was it brief?", model=gemini_model(judge)),
            ],
        )
        result = await run_eval(case)
    assert result.error is None, result.explain()
    assert result.termination_reason == "max_turns"  # the user agent talked until the limit
    assert all(metric.passed for metric in result.metrics.values()), result.explain()
    refused = user_server.rejections + judge.rejections
    assert refused >= 2  # the user agent's second turn and the second judge were refused once
    assert result.provider.rate_limited == refused
    assert {usage.role for usage in result.usage} >= {"agent", "user:ann", "judge:polite"}


def test_a_kept_answers_bytes_come_back_as_the_same_bytes():
    from adk_eval.models._gateway._pipeline import _responses

    signed = types.Part(
        function_call=types.FunctionCall(name="add", args={"a": 1}), thought_signature=b"\x00\xff"
    )
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\r\n"))
    response = LlmResponse(content=types.Content(role="model", parts=[signed, image]))
    kept = response.model_dump(mode="json", exclude_none=True)  # as the cache and cassettes keep it
    assert _responses([kept]) == [response]
