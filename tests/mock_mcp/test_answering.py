"""What a mock MCP server serves and how it answers one call: default-deny, in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_eval import EvalSetupError, ToolMock
from adk_eval.mock_mcp._answering import Conversation, answer_call
from adk_eval.mock_mcp._declared import load_tools, served_tools
from adk_eval.mock_mcp._server import _security

TOOLS_FILE = Path(__file__).with_name("shop_tools.py")


def get_order(order_id: str) -> dict:
    """Looks an order up by its id."""
    raise NotImplementedError


def served(**mocks: ToolMock) -> dict:
    return {tool.name: tool for tool in served_tools([get_order], mocks)}


def test_a_tools_file_declares_each_tool_with_its_schema_and_mock():
    tools = load_tools(TOOLS_FILE)
    assert [tool.name for tool in tools] == ["get_order", "cancel_order", "refund"]
    get, _, refund = tools
    assert get.description == "Looks an order up by its id."
    assert get.input_schema["required"] == ["order_id"]
    assert get.input_schema["properties"]["order_id"]["type"] == "string"
    assert refund.input_schema == {
        "type": "object",
        "properties": {"amount": {"type": "number"}},
        "required": ["amount"],
    }


def test_declarations_and_mocks_must_match_both_ways():
    with pytest.raises(EvalSetupError, match="declared with no mock in `tool_mocks`: get_order"):
        served_tools([get_order], {})
    with pytest.raises(EvalSetupError, match="mocked but not declared in `tools`: refund"):
        served_tools(
            [get_order], {"get_order": ToolMock.returning(1), "refund": ToolMock.returning(2)}
        )
    with pytest.raises(EvalSetupError, match=r"ToolMock.returning\(\{'ok': True\}\)"):
        served_tools([get_order], {"get_order": {"ok": True}})
    with pytest.raises(EvalSetupError, match="never runs a real tool"):
        served_tools([get_order], {"get_order": ToolMock.real(get_order)})
    with pytest.raises(EvalSetupError, match=r"is a function, not a ToolMock.*ToolMock\(fn\)"):
        served_tools([get_order], {"get_order": get_order})
    with pytest.raises(EvalSetupError, match="declared twice"):
        served_tools([get_order, get_order], {"get_order": ToolMock.returning(1)})


def test_a_tools_file_without_its_names_is_one_clear_error(tmp_path):
    empty = tmp_path / "mock_tools_empty.py"
    empty.write_text("tools = []\n")
    with pytest.raises(EvalSetupError, match="defines no `tool_mocks`; a mock MCP tools file"):
        load_tools(empty)
    with pytest.raises(EvalSetupError, match="is not a file"):
        load_tools(tmp_path / "absent.py")


async def test_a_declared_tool_is_answered_by_its_mock_with_the_call_count():
    tools = served(get_order=ToolMock(lambda args, ctx: {"seen": ctx.occurrence}))
    conversation = Conversation(client="agent")
    first = await answer_call(
        tools, conversation, "get_order", {"order_id": "A1"}, call_id="1", seed=0
    )
    again = await answer_call(
        tools, conversation, "get_order", {"order_id": "A1"}, call_id="2", seed=0
    )
    assert (first.is_error, first.structured, again.structured) == (False, {"seen": 0}, {"seen": 1})
    assert again.call.response == {"seen": 1}
    assert again.call.answered_by == "mock"


async def test_an_unknown_tool_is_refused_naming_it_and_the_served_ones():
    tools = served(get_order=ToolMock.returning({"status": "shipped"}))
    answer = await answer_call(tools, Conversation("agent"), "wipe_db", {}, call_id="1", seed=0)
    assert answer.is_error
    assert answer.structured is None
    assert "unknown tool `wipe_db`: this mock MCP server serves only `get_order`" in answer.text
    assert answer.call.response == {"error": answer.text}
    assert answer.call.answered_by == "refused"


async def test_args_that_do_not_fit_and_a_raising_mock_are_error_results():
    tools = served(get_order=ToolMock.raising(LookupError("no such order")))
    conversation = Conversation("agent")
    unfit = await answer_call(tools, conversation, "get_order", {"id": 7}, call_id="1", seed=0)
    assert unfit.is_error
    assert "do not fit its schema" in unfit.text
    raised = await answer_call(
        tools, conversation, "get_order", {"order_id": "x"}, call_id="2", seed=0
    )
    assert raised.is_error
    assert raised.text == "`get_order` raised LookupError: no such order"


async def test_seeded_faults_answer_as_they_do_in_a_case():
    mock = ToolMock.returning({"status": "shipped"}).with_faults(error_rate=1.0)
    answer = await answer_call(
        served(get_order=mock),
        Conversation("a"),
        "get_order",
        {"order_id": "A"},
        call_id="1",
        seed=3,
    )
    assert answer.structured is not None
    assert answer.structured["error_code"] == 500
    assert answer.call.answered_by == "fault"


def test_each_call_is_echoed_with_what_answered_it(capsys):
    from adk_eval.mock_mcp._log import LoggedCall
    from adk_eval.mock_mcp._server import echo_call

    echo_call(LoggedCall("1", "get_order", {"order_id": "A"}, {}, answered_by="fault"))
    echo_call(LoggedCall("2", "get_order", {"order_id": "B"}, {"status": "shipped"}))
    echo_call(LoggedCall("3", "wipe", {}, {}, error="unknown tool", answered_by="refused"))

    assert capsys.readouterr().err.splitlines() == [
        "adk-eval mock-mcp: get_order(order_id='A') -> a fault injected",
        "adk-eval mock-mcp: get_order(order_id='B') -> answered",
        "adk-eval mock-mcp: wipe() -> error: unknown tool",
    ]


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_every_loopback_host_gets_dns_rebinding_protection(host):
    settings = _security(host)
    named = f"[{host}]" if ":" in host else host
    assert settings.enable_dns_rebinding_protection
    assert f"{named}:*" in settings.allowed_hosts
    assert not any("evil" in allowed for allowed in settings.allowed_hosts)
    assert _security("0.0.0.0") is None  # remote: any name may reach it


async def test_a_recorded_run_answers_as_it_was_answered():
    from google.adk.agents import LlmAgent

    from adk_eval import EvalCase, run_eval
    from adk_eval.testing import ScriptedLlm, tool_call

    agent = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("get_order", {"order_id": "A1"}), "Shipped."]),
        tools=[get_order],
    )
    recorded = {"get_order": ToolMock.returning({"status": "shipped", "eta": "tomorrow"})}
    result = await run_eval(EvalCase(name="r", agent=agent, tool_mocks=recorded, first_message="?"))
    tools = served(get_order=ToolMock.from_recording(result, "get_order"))
    replayed = await answer_call(
        tools, Conversation("a"), "get_order", {"order_id": "A1"}, call_id="1", seed=0
    )
    assert replayed.structured == {"status": "shipped", "eta": "tomorrow"}
    missing = await answer_call(
        tools, Conversation("a"), "get_order", {"order_id": "B2"}, call_id="2", seed=0
    )
    assert missing.is_error
    assert "the recording has no call of `get_order`" in missing.text


async def test_a_mocks_answer_is_the_call_tool_result_the_in_process_stand_in_gives():
    from adk_eval._tools._mcp import mcp_result

    for value in ({"status": "shipped"}, "shipped", 7, None):
        tools = served(get_order=ToolMock.returning(value))
        answer = await answer_call(
            tools, Conversation("a"), "get_order", {"order_id": "A1"}, call_id="1", seed=0
        )
        assert answer.result == mcp_result(value)
    failed = {"content": [{"type": "text", "text": "no such order"}], "isError": True}
    tools = served(get_order=ToolMock.returning(failed))
    answer = await answer_call(
        tools, Conversation("a"), "get_order", {"order_id": "A1"}, call_id="1", seed=0
    )
    assert answer.result == failed  # already a result: sent as it is
    assert answer.is_error
