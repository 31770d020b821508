"""ScriptedLlm: steps chosen from the request, safe to share, honest about running out."""

from __future__ import annotations

import anyio
import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_eval import EvalCase, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.testing import ScriptedLlm, ScriptExhaustedError, model_turn_index, tool_call


def request(*roles: str) -> LlmRequest:
    return LlmRequest(
        contents=[types.Content(role=role, parts=[types.Part(text=role)]) for role in roles]
    )


async def first_response(model: ScriptedLlm, req: LlmRequest) -> LlmResponse:
    async for response in model.generate_content_async(req):
        return response
    raise AssertionError("no response")


def test_needs_steps_or_responder():
    with pytest.raises(ValueError, match="exactly one of `steps` or `responder`"):
        ScriptedLlm()


def test_model_turn_index_counts_model_turns_in_the_request():
    assert model_turn_index(request("user")) == 0
    assert model_turn_index(request("user", "model", "user", "model", "user")) == 2


async def test_step_comes_from_the_request_not_from_a_counter():
    model = ScriptedLlm(["first", "second"])
    # asking twice for the same request gives the same step
    for _ in range(2):
        response = await first_response(model, request("user"))
        assert response.content.parts[0].text == "first"
    response = await first_response(model, request("user", "model", "user"))
    assert response.content.parts[0].text == "second"


async def test_a_step_can_hold_text_and_calls_together():
    model = ScriptedLlm(
        [["Let me check.", tool_call("read", {"id": 1}, id="c1")]], check_calls=False
    )
    response = await first_response(model, request("user"))
    text, call = response.content.parts
    assert text.text == "Let me check."
    assert (call.function_call.name, call.function_call.args, call.function_call.id) == (
        "read",
        {"id": 1},
        "c1",
    )


async def test_exhausted_script_says_what_to_do():
    model = ScriptedLlm(["only"])
    with pytest.raises(ScriptExhaustedError, match=r"has 1 steps but was asked for step #2"):
        await first_response(model, request("user", "model", "user"))


async def test_exception_steps_are_raised():
    model = ScriptedLlm([TimeoutError("slow provider")])
    with pytest.raises(TimeoutError, match="slow provider"):
        await first_response(model, request("user"))


async def test_reports_token_usage_and_model_version():
    response = await first_response(ScriptedLlm(["abcdefgh"], model="scripted-x"), request("user"))
    assert response.usage_metadata.candidates_token_count == 2
    assert response.usage_metadata.prompt_token_count == 1
    assert response.model_version == "scripted-x"


async def test_one_instance_serves_concurrent_cases():
    shared = ScriptedLlm(["Hi, what hurts?", "How long?", "Call 999."])
    agent = LlmAgent(name="clinician", model=shared)
    results = []

    async def run(i: int) -> None:
        patient = ScriptedUserAgent(name="patient", script=[f"chest ({i})", f"{i} minutes"])
        results.append(
            await run_eval(
                EvalCase(
                    name=f"c{i}",
                    agent=agent,
                    first_message="hello",
                    user_agents=UserAgents(loop=patient),
                )
            )
        )

    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(run, i)

    for result in results:
        assert result.status == "passed", result.explain()
        assert [m.text for m in result.trace.select("agent_message")] == [
            "Hi, what hurts?",
            "How long?",
            "Call 999.",
        ]
