"""Tokens and cost per role: what the provider reported, priced from litellm's own table.

The agent under test talks to a `FakeProviderServer` through ADK's real clients
(LiteLlm, Gemini), which report usage blocks with cached tokens; a user agent and
a judge run on `ScriptedLlm`s named after priced and unpriced models. The expected
costs are computed here from litellm's price file, read independently.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm

from adk_eval import STOP_SIGNAL, EvalCase, TerminateWhen, UserAgents, run_eval, run_eval_suite
from adk_eval.fake_provider import FakeProviderServer, text_reply
from adk_eval.metrics import llm_judge
from adk_eval.models._gateway._usage import cost_of, total_cost
from adk_eval.reporting import suite_report
from adk_eval.testing import ScriptedLlm


def price(model: str) -> dict:
    folder = Path(next(iter(find_spec("litellm").submodule_search_locations)))
    table = json.loads((folder / "model_prices_and_context_window_backup.json").read_text())
    return table[model]


def expected_cost(model: str, prompt: int, completion: int, cached: int) -> float:
    entry = price(model)
    return (
        (prompt - cached) * entry["input_cost_per_token"]
        + cached * entry["cache_read_input_token_cost"]
        + completion * entry["output_cost_per_token"]
    )


def verdict_judge(model: str) -> ScriptedLlm:
    return ScriptedLlm(['{"passed": true, "reason": "polite"}'], model=model)


def user(model: str) -> LlmAgent:
    return LlmAgent(name="patient", model=ScriptedLlm(["Thanks, bye.", STOP_SIGNAL], model=model))


def client_model(client: str, server: FakeProviderServer):
    if client == "litellm":  # ADK's LiteLlm: litellm and the OpenAI SDK
        return "gpt-4o-mini", LiteLlm(
            model="openai/gpt-4o-mini",
            api_base=server.openai_base,
            api_key="test-key",
            _skip_mcp_handler=True,
        )
    return "gemini-2.5-flash", Gemini(  # ADK's Gemini: google-genai
        model="gemini-2.5-flash", base_url=server.gemini_base, client_kwargs={"api_key": "k"}
    )


@pytest.mark.parametrize("client", ["litellm", "gemini"])
async def test_each_role_records_what_its_provider_reported_and_what_it_cost(client):
    script = [
        text_reply(
            "Hello, how can I help?", prompt_tokens=1000, completion_tokens=50, cached_tokens=400
        ),
        text_reply("Goodbye.", prompt_tokens=1200, completion_tokens=20, cached_tokens=900),
    ]
    with FakeProviderServer(script) as server:
        name, model = client_model(client, server)
        result = await run_eval(
            EvalCase(
                name="greets",
                agent=LlmAgent(name="front_desk", model=model),
                first_message="hi",
                user_agents=UserAgents(loop=user("gemini-2.5-flash")),
                terminate_when=TerminateWhen(max_turns=2),
                metrics=[llm_judge("polite", "Is it polite?", model=verdict_judge("gpt-4o-mini"))],
            )
        )

    assert result.status == "passed", result.explain()
    by_role = {item.role: item for item in result.usage}
    assert set(by_role) == {"agent", "user:patient", "judge:polite"}
    agent = by_role["agent"]
    assert (agent.calls, agent.input_tokens, agent.output_tokens, agent.cached_tokens) == (
        2,
        2200,
        70,
        1300,
    )
    assert agent.model == name  # as the provider's replies name it
    assert agent.cost_usd == pytest.approx(expected_cost(name, 2200, 70, 1300))
    judge = by_role["judge:polite"]
    assert judge.calls == 1
    assert judge.cost_usd == pytest.approx(
        expected_cost("gpt-4o-mini", judge.input_tokens, judge.output_tokens, 0)
    )
    patient = by_role["user:patient"]
    assert patient.model == "gemini-2.5-flash"
    assert patient.cost_usd == pytest.approx(
        expected_cost("gemini-2.5-flash", patient.input_tokens, patient.output_tokens, 0)
    )
    assert result.cost_usd == pytest.approx(sum(item.cost_usd for item in result.usage))
    assert type(result).from_data(result.to_data()).usage == result.usage


async def test_an_unpriced_model_makes_the_cost_unknown_never_zero():
    case = EvalCase(
        name="greets",
        agent=LlmAgent(name="front_desk", model=ScriptedLlm(["Hello."], model="gpt-4o-mini")),
        first_message="hi",
        metrics=[llm_judge("polite", "Is it polite?", model=verdict_judge("my-own-judge"))],
    )
    suite = await run_eval_suite([case])

    (result,) = suite.results
    unpriced = next(item for item in result.usage if item.role == "judge:polite")
    assert unpriced.cost_usd is None
    assert unpriced.total_tokens > 0
    assert result.cost_usd is None
    assert suite.cost_usd is None
    assert suite.unpriced_models == ["my-own-judge"]
    report = suite_report(suite)
    assert report["cost"]["total_usd"] is None
    assert report["cost"]["unpriced_models"] == ["my-own-judge"]
    assert report["results"][0]["cost_usd"] is None


async def test_the_suite_counts_cost_per_passing_run():
    def case(name: str, reply: str) -> EvalCase:
        from adk_eval.metrics import event_count_metric

        return EvalCase(
            name=name,
            agent=LlmAgent(name="a", model=ScriptedLlm([reply], model="gpt-4o-mini")),
            first_message="hi",
            metrics=[
                event_count_metric("greets", "agent_message", lambda m: "Hello" in m.text, bool)
            ],
        )

    suite = await run_eval_suite([case("good", "Hello."), case("bad", "Go away.")])

    assert [r.status for r in suite.results] == ["passed", "failed"]
    total = sum(r.cost_usd for r in suite.results)
    assert suite.cost_usd == pytest.approx(total)
    assert suite.cost_per_passing_run == pytest.approx(total / 1)  # one passing run pays for both
    assert suite.tokens == sum(i.total_tokens for r in suite.results for i in r.usage)
    assert suite_report(suite)["cost"]["per_passing_run_usd"] == pytest.approx(total)


def test_prices_come_from_the_table_and_unknown_models_have_none():
    assert cost_of("openai/gpt-4o-mini", 1000, 100) == pytest.approx(
        expected_cost("gpt-4o-mini", 1000, 100, 0)
    )
    assert cost_of("no-such-model", 1000, 100) is None
    assert total_cost([]) == 0.0


def test_a_model_the_table_does_not_name_is_priced_without_parsing_the_table():
    from adk_eval.models._gateway import _usage

    _usage._price_table.cache_clear()
    _usage._price.cache_clear()
    assert cost_of("gemini-scripted", 1000, 100) is None
    assert _usage._price_table.cache_info().currsize == 0  # 3.5 MB of JSON left unparsed
    assert cost_of("gpt-4o-mini", 1000, 100) == pytest.approx(
        expected_cost("gpt-4o-mini", 1000, 100, 0)
    )
    assert _usage._price_table.cache_info().currsize == 1


def test_a_model_is_looked_up_in_the_table_once_whatever_the_calls():
    from adk_eval.models._gateway import _usage

    _usage._price.cache_clear()
    for _ in range(50):  # a suite prices each model call's model
        cost_of("openai/fake", 1000, 100)
        cost_of("gpt-4o-mini", 1000, 100)
    info = _usage._price.cache_info()
    assert (info.misses, info.hits) == (2, 98)  # the 3.5 MB text searched once per model
