"""A querying llm_judge through ADK's real clients (google-genai, LiteLLM) to a fake provider.

The judge is named the way users name it ("gemini-2.5-flash", "openai/...") and resolved by
ADK's registry; only the provider is fake. What crosses the wire is read back from the
provider's log: the query tools declared, the function call, its answer sent back.
"""

from __future__ import annotations

import json

import pytest

from adk_eval import EvalTrace
from adk_eval.fake_provider import FakeProviderServer, FakeReply, FakeRequest, text_reply
from adk_eval.fake_provider import tool_reply as provider_tool_reply
from adk_eval.metrics import llm_judge
from adk_eval.testing import text_event, user_event

QUERIES = {"get_state", "list_state_keys", "list_tool_calls", "get_tool_call"}


def refund_trace(issued: bool) -> EvalTrace:
    return EvalTrace(
        events=[user_event("refund order A1 please"), text_event("shop", "Done!")],
        final_state={"session": {"refund_issued": issued}},
    )


def answer_in(request: FakeRequest) -> dict:
    """The query's answer as the client sent it back, in its provider's shape."""
    if request.api == "gemini":
        last = request.body["contents"][-1]
        assert last["role"] == "user"
        return last["parts"][0]["functionResponse"]["response"]
    last = request.body["messages"][-1]
    assert last["role"] == "tool"
    return json.loads(last["content"])


def judge_provider(request: FakeRequest) -> FakeReply:
    """First asks get_state("refund_issued"); then passes only if the answer says True."""
    if request.turn == 0:
        return provider_tool_reply("get_state", {"key": "refund_issued"})
    answer = answer_in(request)
    passed = answer == {"key": "refund_issued", "found": True, "value": True}
    return text_reply(json.dumps({"passed": passed, "score": float(passed), "reasoning": "read"}))


@pytest.fixture
def gemini_judge(monkeypatch):
    def named(server: FakeProviderServer) -> str:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.gemini_base)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        return "gemini-2.5-flash"

    for name in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
    return named


@pytest.fixture
def litellm_judge(monkeypatch):
    def named(server: FakeProviderServer) -> str:
        monkeypatch.setenv("OPENAI_API_BASE", server.openai_base)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        return "openai/fake-judge"

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return named


def sent_tools(request: FakeRequest) -> set[str]:
    if request.api == "gemini":
        return {d["name"] for t in request.body["tools"] for d in t["functionDeclarations"]}
    return {tool["function"]["name"] for tool in request.body["tools"]}


@pytest.mark.parametrize("client", ["gemini_judge", "litellm_judge"])
@pytest.mark.parametrize("issued", [True, False])
async def test_a_querying_judge_round_trips_its_function_call_over_the_wire(
    client, issued, request
):
    with FakeProviderServer(responder=judge_provider) as server:
        model = request.getfixturevalue(client)(server)
        judge = llm_judge(
            "refund_ok", "Was it refunded?", model=model, sees=("transcript", "query")
        )
        result = await judge.evaluate(refund_trace(issued))

    assert result.passed is issued, result.evidence  # the state's value reached the model
    first, second = server.requests
    assert [first.turn, second.turn] == [0, 1]
    assert sent_tools(first) == sent_tools(second) == QUERIES
    assert answer_in(second) == {"key": "refund_issued", "found": True, "value": issued}
    if first.api == "gemini":
        assert "responseMimeType" not in first.body.get("generationConfig", {})
        call = second.body["contents"][-2]
        assert call["role"] == "model"
        assert call["parts"][0]["functionCall"] == {
            "name": "get_state",
            "args": {"key": "refund_issued"},
        }
        assert second.body["contents"][-1]["parts"][0]["functionResponse"]["name"] == "get_state"
    else:
        assert "response_format" not in first.body
        (call,) = second.body["messages"][-2]["tool_calls"]
        assert call["function"] == {"name": "get_state", "arguments": '{"key": "refund_issued"}'}
        assert second.body["messages"][-1]["tool_call_id"] == call["id"]
