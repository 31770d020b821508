"""A model request as data: what decides the answer, its key, and where two requests part."""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_eval.models._gateway._requests import (
    canonical,
    fingerprint,
    first_difference,
    request_data,
)


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


ORDER = "3f2b8c1e-9a4d-4e6b-8f0a-1c2d3e4f5a6b"
OTHER_ORDER = "7c9e6679-7425-40de-944b-e07fc1f90ae7"


def cancelling(order: str = ORDER, call_id: str = "adk-0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"):
    """A request after one tool call: a user's order id in text, args and the tool's answer."""
    return LlmRequest(
        model="gemini-2.5-flash",
        contents=[
            types.Content(role="user", parts=[types.Part(text=f"Cancel order {order}.")]),
            types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            id=call_id, name="cancel_order", args={"order_id": order}
                        )
                    )
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call_id, name="cancel_order", response={"cancelled": order}
                        )
                    )
                ],
            ),
        ],
        config=types.GenerateContentConfig(
            system_instruction=f"You manage orders; the shop is {ORDER[:8]}.",
            temperature=0.25,
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="cancel_order",
                            description="Cancels an order.",
                            parameters=types.Schema(
                                type="OBJECT", properties={"order_id": types.Schema(type="STRING")}
                            ),
                        )
                    ]
                )
            ],
        ),
    )


def key_of(request: LlmRequest) -> str:
    return fingerprint("agent", "gemini-2.5-flash", None, request_data(request, "m"), 0)


def test_the_ids_adk_makes_are_numbered_where_adk_puts_them():
    first = request_data(cancelling(call_id=f"adk-{uuid.uuid4()}"), "m")
    assert request_data(cancelling(call_id=f"adk-{uuid.uuid4()}"), "m") == first
    assert request_data(cancelling(call_id="adk-7"), "m") == first  # whatever their shape
    assert request_data(cancelling(call_id="call_7"), "m") != first  # a provider's is kept
    assert first["contents"][1]["parts"][0]["function_call"]["id"] == "<id 1>"
    assert first["contents"][2]["parts"][0]["function_response"]["id"] == "<id 1>"
    unpaired = cancelling()
    unpaired.contents[2].parts[0].function_response.id = "adk-another"
    assert request_data(unpaired, "m") != first  # which call a response answers still counts


def test_a_users_uuid_is_kept_wherever_it_is():
    data = request_data(cancelling(), "m")
    assert data["contents"][0]["parts"][0]["text"] == f"Cancel order {ORDER}."
    assert data["contents"][1]["parts"][0]["function_call"]["args"] == {"order_id": ORDER}
    assert key_of(cancelling(OTHER_ORDER)) != key_of(cancelling())


def _mutations(data, path=()):
    """Every request that differs from `data` in one user-visible byte (or number)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "id" and path[-1:] in (("function_call",), ("function_response",)):
                continue  # ADK's own ids: by position, not the user's
            for changed in _mutations(value, (*path, key)):
                yield {**data, key: changed}
            for index in range(len(key)):
                renamed = key[:index] + chr(ord(key[index]) ^ 1) + key[index + 1 :]
                yield {(renamed if k == key else k): v for k, v in data.items()}
    elif isinstance(data, list):
        for index, value in enumerate(data):
            for changed in _mutations(value, (*path, index)):
                yield [*data[:index], changed, *data[index + 1 :]]
    elif isinstance(data, str):
        for index in range(len(data)):
            yield data[:index] + chr(ord(data[index]) ^ 1) + data[index + 1 :]
    elif isinstance(data, float):
        yield data + 0.5


def test_no_two_requests_that_differ_in_a_user_visible_byte_share_a_key():
    base = cancelling()
    dumped = {
        "contents": [
            content.model_dump(mode="json", exclude_none=True) for content in base.contents
        ],
        "config": base.config.model_dump(mode="json", exclude_none=True),
    }
    keys = {key_of(base)}
    made = 0
    for changed in _mutations(dumped):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                request = LlmRequest(
                    model=base.model,
                    contents=[types.Content.model_validate(item) for item in changed["contents"]],
                    config=types.GenerateContentConfig.model_validate(changed["config"]),
                )
        except (
            ValueError,
            KeyError,
            UserWarning,
        ):  # not a request (an enum's value, a field's name)
            continue
        keys.add(key_of(request))
        made += 1
    assert made > 200  # every character of the texts, arguments, answers and declarations
    assert len(keys) == made + 1


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


def test_no_key_of_the_former_format_is_made_again():
    # a request with nothing to number and no address had the same data then: only the
    # format's version keeps an entry kept under the former keys from ever being found
    data = request_data(request("Be brief.", "hi"), "m")
    former = {"role": "agent", "model": "m", "base_url": None, "request": data, "attempt": 0}
    text = json.dumps(former, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert fingerprint("agent", "m", None, data, 0) != hashlib.sha256(text.encode()).hexdigest()


def test_the_address_of_a_server_on_this_machine_counts_without_its_port():
    data = request_data(request("Be brief.", "hi"), "m")

    def key(base_url: str | None) -> str:
        return fingerprint("agent", "m", base_url, data, 0)

    here = key("http://127.0.0.1:41234/v1")
    assert key("http://127.0.0.1:50007/v1") == here
    assert key("http://localhost:8080/v1") == here
    assert key("http://[::1]:9/v1") == here
    assert key("http://127.0.0.1:41234/v1beta") != here
    assert key(None) != here
    assert key("https://gateway.example.com/v1") != here
    assert key("https://gateway.example.com:8443/v1") != key("https://gateway.example.com/v1")
    assert key("http://10.0.0.5:8000/v1") != key("http://10.0.0.5:8001/v1")


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


KEYED = {
    "model": "gemini-2.5-flash",
    "contents": [{"role": "user", "parts": [{"text": 'Grüße, 東京 "quoted" \\ back'}]}],
    "config": {
        "temperature": 0.0,
        "tools": [
            {"function_declarations": [{"name": "lookup", "parameters": {"type": "OBJECT"}}]}
        ],
    },
}


def test_a_key_keeps_its_value_and_is_the_same_from_the_request_already_written():
    # Values made by the key's first writing (one json.dumps of the whole payload): the
    # keys of caches on disk stay valid.
    keys = {
        ("user:asker", "gemini-2.5-flash", "http://127.0.0.1:8123/v1/", 2): (
            "c9bce82672146554279b5bc3b88e674006a85cefdbb2a8a25368cf146dbdb68b"
        ),
        ("agent", "openai/fake", None, 0): (
            "e56f889ff5cf9030b5ebf4f3ef41411442d505e5079def66a66efde31d9dfb73"
        ),
    }
    for (role, model, base_url, attempt), key in keys.items():
        assert fingerprint(role, model, base_url, KEYED, attempt) == key
        written = canonical(KEYED)
        assert fingerprint(role, model, base_url, KEYED, attempt, written=written) == key
    empty = {"model": "m", "contents": [], "config": {}}
    assert fingerprint("judge:x", "m", "https://example.com/v1", empty, 1) == (
        "66bbe0ac47ab80e0ce6144b98fec6dd38502194d939ec717894244b60402cc6a"
    )
