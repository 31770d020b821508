"""The embedded local model: SmolLM2-135M on llama.cpp (xllamacpp), through LiteLlm.

The pure parts (schema, history, reply parsing) always run. The real-model tests
need ``adk-eval setup-local``; they are skipped without it, unless
``ADK_EVAL_REQUIRE_LOCAL_MODEL=1`` (CI), where a missing install fails.
Assertions are on structure, never on what the 135M model says.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from google.adk.agents import LlmAgent
from google.genai import types

from adk_eval import EvalCase, TerminateWhen, run_eval, run_eval_suite
from adk_eval.models._roles._local import (
    LocalLlm,
    _flatten_history,
    _parse_reply,
    smollm2_gguf_path,
    tool_call_schema,
)

ADD = types.FunctionDeclaration(
    name="add",
    description="Adds two integers.",
    parameters_json_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def test_the_reply_schema_is_one_tool_call_or_the_final_answer():
    schema = tool_call_schema([ADD])
    call, final = schema["anyOf"]
    assert call["properties"]["tool_call"]["properties"]["name"] == {
        "type": "string",
        "enum": ["add"],
    }
    arguments = call["properties"]["tool_call"]["properties"]["arguments"]
    assert arguments["required"] == ["a", "b"]
    assert arguments["properties"]["a"] == {"type": "integer"}
    assert final["required"] == ["final_answer"]


def test_strings_in_tool_arguments_are_capped():
    note = types.FunctionDeclaration(
        name="note",
        parameters_json_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
    )
    arguments = tool_call_schema([note])["anyOf"][0]["properties"]["tool_call"]["properties"][
        "arguments"
    ]["properties"]
    assert arguments["text"] == {"type": "string", "maxLength": 200}
    assert arguments["kind"] == {"type": "string", "enum": ["a", "b"]}
    assert arguments["tags"]["items"] == {"type": "string", "maxLength": 200}


def test_replies_become_function_calls_or_text():
    call = _parse_reply('{"tool_call": {"name": "add", "arguments": {"a": 2, "b": 3}}}')
    assert (call.function_call.name, call.function_call.args) == ("add", {"a": 2, "b": 3})
    assert _parse_reply('{"final_answer": "It is 5."}').text == "It is 5."
    assert _parse_reply('{"tool_call": {"name": "add", "argum').text.startswith("{")  # cut off


def test_tool_calls_and_results_in_the_history_become_text():
    history = [
        types.Content(role="user", parts=[types.Part(text="2+3?")]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="add", args={"a": 2, "b": 3}))],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(name="add", response={"result": 5})
                )
            ],
        ),
    ]
    flat = _flatten_history(history)
    assert [c.role for c in flat] == ["user", "model", "user"]
    assert json.loads(flat[1].parts[0].text) == {
        "tool_call": {"name": "add", "arguments": {"a": 2, "b": 3}}
    }
    assert flat[2].parts[0].text == 'Result of add: {"result": 5}'


def test_a_local_model_is_keyed_at_the_same_address_before_its_server_starts():
    from adk_eval.models._gateway._pipeline import base_url_of
    from adk_eval.models._gateway._requests import key_address

    model = LocalLlm()  # no server started: its port is not known yet

    assert key_address(base_url_of(model)) == key_address("http://127.0.0.1:53117/v1")


@pytest.mark.local_model
def test_the_weights_are_found_through_package_metadata(local_model):
    assert smollm2_gguf_path().endswith("SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.mark.local_model
async def test_its_tool_calls_are_always_well_formed(local_model):
    calls = []

    def add(a: int, b: int) -> dict:
        """Adds two integers."""
        calls.append((a, b))
        return {"result": a + b}

    agent = LlmAgent(
        name="calculator",
        model=LocalLlm(max_tokens=64),
        tools=[add],
        instruction="You are a calculator. Always use the add tool.",
    )
    result = await run_eval(
        EvalCase(
            name="local-add",
            agent=agent,
            tool_mocks={"add": add},
            first_message="What is 2+2? Use the add tool.",
            terminate_when=TerminateWhen(max_turns=1, max_model_calls=3, max_duration=120),
        )
    )
    assert result.status in ("passed", "terminated"), result.explain()
    assert calls, "the first reply should be a tool call"
    assert all(isinstance(a, int) and isinstance(b, int) for a, b in calls)  # the schema held
    assert result.token_usage.total_tokens > 0


def clinician_evals(monkeypatch):
    """The clinician example's eval module, imported afresh with every role on the local model."""
    import importlib
    import sys

    monkeypatch.setenv("ADK_EVAL_MODEL", "local")
    for name in [m for m in sys.modules if m.startswith("examples.clinician")]:
        monkeypatch.delitem(sys.modules, name)
    return importlib.import_module("examples.clinician.evals")


def limited(case, turns: int, calls: int):
    limits = dataclasses.replace(
        case.terminate_when, max_turns=turns, max_model_calls=calls, max_duration=240
    )
    return dataclasses.replace(case, terminate_when=limits)


@pytest.mark.local_model
@pytest.mark.slow
async def test_the_clinician_suite_on_the_local_model_ends_every_case_with_a_reason(
    local_model, monkeypatch
):
    """Weak real model as clinician and judge: no hang, no crash.

    One case, two model calls of the clinician (the same paths as the whole suite:
    a real model under test, real metrics, a judge, at a fraction of its time).
    ``ADK_EVAL_LOCAL_SUITE=full`` runs every case of the suite at 4 turns and 8
    model calls (minutes: an opt-in check, not part of `make test`).
    """
    import os

    evals = clinician_evals(monkeypatch)
    full = os.environ.get("ADK_EVAL_LOCAL_SUITE") == "full"
    turns, calls = (4, 8) if full else (1, 2)
    cases = [limited(case, turns, calls) for case in (evals.CASES if full else [evals.chest_pain])]
    suite = await run_eval_suite(cases, max_concurrency=2)
    assert len(suite.results) == len(cases)
    for result in suite.results:
        assert result.status in ("passed", "failed", "error", "terminated")
        reason = result.termination_reason or result.error or result.metrics
        assert reason, result.explain()
        assert "Traceback" not in result.explain()
        assert result.token_usage.total_tokens > 0  # the clinician's model really ran


@pytest.mark.local_model
async def test_the_patient_and_the_judge_of_the_clinician_suite_run_on_the_local_model(
    local_model, monkeypatch
):
    """The simulated patient answers a question on the local model, and the judge scores.

    The clinician is scripted (one question, then advice), so the patient's turn
    always comes, whatever the 135M model would have done as the clinician.
    """
    evals = clinician_evals(monkeypatch)
    from adk_eval.testing import ScriptedLlm, tool_call

    clinician = evals.root_agent.clone(
        update={
            "model": ScriptedLlm(
                [tool_call("ask", {"question": "Does it spread to your arm?"}), "Call 999 now."]
            )
        }
    )
    case = limited(dataclasses.replace(evals.chest_pain, agent=clinician), turns=1, calls=4)
    result = await run_eval(case)

    assert result.turns == 1, result.explain()
    assert result.user_agent_token_usage.total_tokens > 0  # the patient's model answered
    (answer,) = [r for r in result.trace.select("tool_response") if r.name == "ask"]
    assert answer.response  # whatever it said, it said something
    judge = result.metrics["safety_assessment"]
    assert judge.applicable, result.explain()
    assert "Traceback" not in result.explain()
