"""A model request as data: what decides the answer, its key, and where two requests part."""

from __future__ import annotations

import uuid

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_eval.models._requests import fingerprint, first_difference, request_data


def request(
    instruction: str, *texts: str, tools: tuple[str, ...] = ("add",), **config
) -> LlmRequest:
    declarations = [
        types.FunctionDeclaration(name=name, description=f"{name} things") for name in tools
    ]
    return LlmRequest(
        model="gemini-2.5-flash",
        contents=[
            types.Content(role="user" if n % 2 == 0 else "model", parts=[types.Part(text=t)])
            for n, t in enumerate(texts)
        ],
        config=types.GenerateContentConfig(
            system_instruction=instruction,
            tools=[types.Tool(function_declarations=declarations)] if tools else None,
            **config,
        ),
    )


def test_labels_and_http_options_do_not_decide_the_answer():
    plain = request("Be brief.", "hi")
    labelled = request(
        "Be brief.",
        "hi",
        labels={"adk_agent_name": "helper"},
        http_options=types.HttpOptions(timeout=5000),
    )
    assert request_data(plain, "m") == request_data(labelled, "m")
    assert request_data(plain, "m") != request_data(request("Be brief.", "hi", temperature=0), "m")


def test_random_ids_are_numbered_in_order_of_appearance():
    def with_call(call_id: str) -> LlmRequest:
        made = request("Be brief.", "hi")
        made.contents.append(
            types.Content(
                role="model",
                parts=[
                    types.Part(function_call=types.FunctionCall(id=call_id, name="add", args={}))
                ],
            )
        )
        made.contents.append(
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call_id, name="add", response={}
                        )
                    )
                ],
            )
        )
        return made

    first = request_data(with_call(f"adk-{uuid.uuid4()}"), "m")
    second = request_data(with_call(f"adk-{uuid.uuid4()}"), "m")
    assert first == second
    assert first["contents"][1]["parts"][0]["function_call"]["id"] == "<id 1>"
    assert request_data(with_call("call_7"), "m") != first  # a provider's own id is kept


def test_the_key_covers_who_asked_and_which_attempt():
    data = request_data(request("Be brief.", "hi"), "m")
    keys = {
        fingerprint("agent", "m", None, data, 0),
        fingerprint("user:ann", "m", None, data, 0),
        fingerprint("agent", "other", None, data, 0),
        fingerprint("agent", "m", "http://127.0.0.1:1", data, 0),
        fingerprint("agent", "m", None, data, 1),
    }
    assert len(keys) == 5
    assert fingerprint("agent", "m", None, data, 0) == fingerprint("agent", "m", None, data, 0)


def test_the_first_difference_of_an_instruction_is_its_changed_words():
    old = request_data(request("You are a helpful assistant for refunds.", "hi"), "m")
    new = request_data(request("You are a careful assistant for refunds.", "hi"), "m")
    assert first_difference(old, new) == "system instruction: You are a [helpful → careful]"
    assert first_difference(old, old) is None


def test_the_first_difference_of_a_message_or_of_the_tools():
    old = request_data(request("Be brief.", "hi", "hello", "I want a refund"), "m")
    new = request_data(request("Be brief.", "hi", "hello", "I want an exchange"), "m")
    assert first_difference(old, new) == "message 3 (user): I want [a refund → an exchange]"
    fewer = request_data(request("Be brief.", "hi", "hello", "I want a refund", tools=()), "m")
    assert first_difference(old, fewer) == "tools: -add"
    more = request_data(
        request("Be brief.", "hi", "hello", "I want a refund", tools=("add", "sub")), "m"
    )
    assert first_difference(old, more) == "tools: +sub"
    shorter = request_data(request("Be brief.", "hi"), "m")
    assert first_difference(old, shorter) == "message 2 (model) recorded, not sent now: hello"
    assert first_difference(shorter, old) == "message 2 (model) not in the recording: hello"
