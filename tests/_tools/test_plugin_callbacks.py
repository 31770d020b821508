"""Only a tool's body is replaced: the agent's own tool callbacks run around a mock as around
the real tool (guardrails that refuse or answer, rewrites, error handlers, confirmations),
in sub-agents, inside AgentTools and for tools a user agent answers."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import AgentTool, FunctionTool, LongRunningFunctionTool

from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

PROFILE = {"customer_id": "c-1"}


def make_shop(log: list[str]):
    """Tools and callbacks shaped like ADK's customer-service sample."""

    def get_discount(customer_id: str, value: int) -> dict:
        """Asks the CRM for a discount (a real side effect)."""
        log.append(f"real get_discount {customer_id} {value}")
        return {"approved": True, "value": value, "by": "crm"}

    def guardrail(tool, args, tool_context):
        log.append(f"guardrail {tool.name}")
        if args.get("customer_id") != PROFILE["customer_id"]:
            return {"error": "customer_id does not match the profile"}
        if tool.name == "get_discount" and args.get("value", 0) <= 10:
            return {"approved": True, "value": args["value"], "by": "auto"}
        return None

    async def audit(tool, args, tool_context, tool_response):
        log.append(f"audit {tool.name} {tool_response}")
        if isinstance(tool_response, dict) and tool_response.get("approved"):
            return {**tool_response, "audited": True}
        return None

    def on_error(tool, args, tool_context, error):
        log.append(f"on_error {tool.name} {type(error).__name__}")
        return {"error": f"CRM unavailable: {error}"}

    return get_discount, guardrail, audit, on_error


def shop_agent(log: list[str], calls: list[dict[str, Any]], **callbacks: Any) -> LlmAgent:
    get_discount, guardrail, audit, on_error = make_shop(log)
    steps: list[Any] = [tool_call("get_discount", args) for args in calls] + ["done"]
    return LlmAgent(
        name="shop",
        model=ScriptedLlm(steps),
        tools=[get_discount],
        before_tool_callback=callbacks.get("before", guardrail),
        after_tool_callback=callbacks.get("after", audit),
        on_tool_error_callback=callbacks.get("on_error", on_error),
    )


def discount_case(name: str, agent: Any, mock: Any, **more: Any) -> EvalCase:
    """A case whose `get_discount` calls `mock` answers (it opens with "hi" unless told)."""
    more.setdefault("first_message", "hi")
    return EvalCase(name=name, agent=agent, tool_mocks={"get_discount": mock}, **more)


def responses(result, name: str = "get_discount") -> list[dict[str, Any]]:
    return [call.response for call in result.trace.tool_calls if call.name == name]


def mock_log(log: list[str]) -> ToolMock:
    def execute(args, ctx):
        log.append(f"mock get_discount {args['value']}")
        return {"approved": True, "value": args["value"], "by": "mock"}

    return ToolMock(execute)


async def test_guardrails_that_refuse_or_answer_win_over_the_mock():
    log: list[str] = []
    agent = shop_agent(
        log,
        [
            {"customer_id": "c-2", "value": 50},  # refused by the guardrail
            {"customer_id": "c-1", "value": 5},  # auto-approved by the guardrail
            {"customer_id": "c-1", "value": 50},  # the mock answers
        ],
    )
    result = await run_eval(
        discount_case("g", agent, mock_log(log), first_message="discount please")
    )
    assert result.status == "passed", result.explain()
    assert responses(result) == [
        {"error": "customer_id does not match the profile"},
        {"approved": True, "value": 5, "by": "auto", "audited": True},
        {"approved": True, "value": 50, "by": "mock", "audited": True},
    ]
    assert [line for line in log if line.startswith(("mock", "real"))] == ["mock get_discount 50"]


async def test_sync_and_async_callback_lists_run_in_adks_order():
    log: list[str] = []

    def first(tool, args, tool_context):
        log.append("first")

    async def second(tool, args, tool_context):
        log.append("second")
        return {"approved": False, "by": "second"}

    def third(tool, args, tool_context):  # never reached: `second` answered
        log.append("third")

    def rewrite(tool, args, tool_context, tool_response):
        log.append("rewrite")
        return {**tool_response, "rewritten": True}

    agent = shop_agent(
        log, [{"customer_id": "c-1", "value": 50}], before=[first, second, third], after=[rewrite]
    )
    result = await run_eval(discount_case("o", agent, mock_log(log)))
    assert responses(result) == [{"approved": False, "by": "second", "rewritten": True}]
    assert log == ["first", "second", "rewrite"]


async def test_a_raising_mock_goes_through_the_agents_error_callback():
    log: list[str] = []
    agent = shop_agent(log, [{"customer_id": "c-1", "value": 50}])
    result = await run_eval(
        discount_case("e", agent, ToolMock.raising(TimeoutError("CRM timed out")))
    )
    assert result.status == "passed", result.explain()
    assert responses(result) == [{"error": "CRM unavailable: CRM timed out"}]
    assert "on_error get_discount TimeoutError" in log


async def test_a_raising_mock_nobody_handles_is_the_mocks_error():
    log: list[str] = []
    agent = shop_agent(log, [{"customer_id": "c-1", "value": 50}], on_error=None)
    result = await run_eval(
        discount_case("e", agent, ToolMock.raising(TimeoutError("CRM timed out")))
    )
    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "EvalToolError"
    assert "The mock for tool `get_discount` raised TimeoutError: CRM timed out" in (
        result.error.message
    )


async def test_a_confirmation_is_asked_before_the_mock_answers():
    log: list[str] = []
    get_discount, guardrail, audit, _ = make_shop(log)
    agent = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("get_discount", {"customer_id": "c-1", "value": 50}), "done"]),
        tools=[FunctionTool(get_discount, require_confirmation=True)],
        before_tool_callback=guardrail,
        after_tool_callback=audit,
    )
    seen: list[str] = []

    def approve(ctx):
        seen.append(ctx.prompt)
        return True

    result = await run_eval(
        discount_case(
            "c",
            agent,
            mock_log(log),
            user_agents=UserAgents(
                tools={"adk_request_confirmation": ScriptedUserAgent(name="manager", step=approve)}
            ),
        )
    )
    assert result.status == "passed", result.explain()
    assert len(seen) == 1
    assert responses(result)[-1] == {"approved": True, "value": 50, "by": "mock", "audited": True}
    assert log.index("guardrail get_discount") < log.index("mock get_discount 50")


async def test_callbacks_of_a_sub_agent_and_of_an_agent_inside_an_agent_tool_run_too():
    log: list[str] = []
    get_discount, guardrail, _, _ = make_shop(log)

    def worker(name: str) -> LlmAgent:
        return LlmAgent(
            name=name,
            description="Gives discounts.",
            model=ScriptedLlm(
                [tool_call("get_discount", {"customer_id": "c-1", "value": 5}), "ok"]
            ),
            tools=[get_discount],
            before_tool_callback=guardrail,
        )

    deep = LlmAgent(
        name="deep",
        description="Delegates.",
        model=ScriptedLlm([tool_call("inner", {"request": "discount"}), "ok"]),
        tools=[AgentTool(worker("inner"))],
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([tool_call("deep", {"request": "discount"}), "done"]),
        tools=[AgentTool(deep)],
        sub_agents=[worker("billing")],
    )
    result = await run_eval(discount_case("n", root, mock_log(log)))
    assert result.status == "passed", result.explain()
    assert "guardrail get_discount" in log
    assert not any(line.startswith(("mock", "real")) for line in log)  # auto-approved


async def test_a_guardrail_answers_a_long_running_tool_before_its_user_agent_is_asked():
    log: list[str] = []

    def ask_manager(question: str) -> None:
        """Asks a manager and waits for the answer."""
        log.append("real ask_manager")

    def auto_answer(tool, args, tool_context):
        if "small" in args.get("question", ""):
            return {"answer": "yes, auto"}
        return None

    agent = LlmAgent(
        name="shop",
        model=ScriptedLlm(
            [
                tool_call("ask_manager", {"question": "small refund?"}),
                tool_call("ask_manager", {"question": "big refund?"}),
                "done",
            ]
        ),
        tools=[LongRunningFunctionTool(ask_manager)],
        before_tool_callback=auto_answer,
    )
    manager = ScriptedUserAgent(name="manager", script=[{"answer": "no"}])
    result = await run_eval(
        EvalCase(
            name="l",
            agent=agent,
            user_agents=UserAgents(tools={"ask_manager": manager}),
            first_message="hi",
        )
    )
    assert result.status == "passed", result.explain()
    answers = [r.response for r in result.trace.select("tool_response") if r.name == "ask_manager"]
    assert answers == [{"answer": "yes, auto"}, {"answer": "no"}]
    assert result.turns == 1  # only the big refund yielded
    assert log == []


def _shape(result) -> list[tuple[Any, ...]]:
    """What the agent and its callbacks produced, without ids and timestamps."""
    shape = []
    for event in result.events:
        calls = [(c.name, dict(c.args or {})) for c in event.get_function_calls()]
        answers = [(r.name, dict(r.response or {})) for r in event.get_function_responses()]
        text = "".join(p.text or "" for p in (event.content.parts or [])) if event.content else ""
        shape.append((event.author, text, calls, answers, dict(event.actions.state_delta)))
    return shape


@pytest.mark.parametrize(
    "calls",
    [
        [{"customer_id": "c-1", "value": 50}],
        [{"customer_id": "c-2", "value": 50}, {"customer_id": "c-1", "value": 5}],
    ],
)
async def test_a_mock_that_returns_what_the_real_tool_returns_gives_the_same_events(calls):
    def real_case(log: list[str]) -> EvalCase:
        agent = shop_agent(log, calls)
        real = next(t for t in agent.tools if getattr(t, "__name__", "") == "get_discount")
        return discount_case("d", agent, real, first_message="x")

    real_log: list[str] = []
    with_real = await run_eval(real_case(real_log))
    mocked_log: list[str] = []
    agent = shop_agent(mocked_log, calls)
    same = ToolMock(lambda args, ctx: {"approved": True, "value": args["value"], "by": "crm"})
    with_mock = await run_eval(discount_case("d", agent, same, first_message="x"))
    assert with_real.status == with_mock.status == "passed"
    assert _shape(with_real) == _shape(with_mock)
    assert [line for line in mocked_log if line.startswith("real")] == []
    assert [line for line in real_log if not line.startswith("real")] == [
        line for line in mocked_log if not line.startswith("mock")
    ]


def redacting_agent(steps: list[Any]) -> LlmAgent:
    """An agent whose after-tool callback edits the tool's response in place."""

    def redact(tool, args, tool_context, tool_response):
        tool_response["notes"].append("seen by the callback")
        tool_response["card"] = "****"
        return None

    def get_discount(customer_id: str, value: int) -> dict:
        """Asks the CRM for a discount (a real side effect)."""
        raise AssertionError("never runs")

    return LlmAgent(
        name="shop",
        model=ScriptedLlm(steps),
        tools=[get_discount],
        after_tool_callback=redact,
    )


async def test_each_call_gets_its_own_copy_of_a_mocks_answer():
    answer = {"approved": True, "card": "4111", "notes": []}
    calls = [tool_call("get_discount", {"customer_id": "c-1", "value": 5})] * 2
    case = EvalCase(
        name="copies",
        agent=redacting_agent([calls[0], calls[1], "done"]),
        first_message="hi",
        tool_mocks={"get_discount": ToolMock.returning(answer)},
    )
    first, second = await run_eval(case), await run_eval(case)
    assert answer == {"approved": True, "card": "4111", "notes": []}
    for result in (first, second):
        assert (
            responses(result)
            == [{"approved": True, "card": "****", "notes": ["seen by the callback"]}] * 2
        )


async def test_a_replayed_recording_is_not_changed_by_the_run_that_replays_it():
    recorded = {"approved": True, "card": "4111", "notes": []}
    steps = [tool_call("get_discount", {"customer_id": "c-1", "value": 5}), "done"]
    plain = LlmAgent(name="shop", model=ScriptedLlm(steps), tools=[redacting_agent([]).tools[0]])
    recording = await run_eval(
        EvalCase(
            name="record",
            agent=plain,
            first_message="hi",
            tool_mocks={"get_discount": ToolMock.returning(recorded)},
        )
    )
    replay = EvalCase(
        name="replay",
        agent=redacting_agent(steps),
        first_message="hi",
        tool_mocks={"get_discount": ToolMock.from_recording(recording, "get_discount")},
    )
    replayed = [await run_eval(replay) for _ in range(2)]
    assert responses(recording) == [recorded]
    assert [responses(r) for r in replayed] == [
        [{"approved": True, "card": "****", "notes": ["seen by the callback"]}]
    ] * 2


@pytest.mark.parametrize("value", [7, "seven", [1, 2], None])
async def test_a_mocks_plain_value_reaches_the_callbacks_as_adks_runner_hands_a_real_one(value):
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    def agent(seen: list[Any]) -> LlmAgent:
        def count(n: int):
            """Counts (returns a plain value, not a dict)."""
            return value

        def after(tool, args, tool_context, tool_response):
            seen.append(tool_response)

        return LlmAgent(
            name="counter",
            model=ScriptedLlm([tool_call("count", {"n": 1}), "counted"]),
            tools=[count],
            after_tool_callback=after,
        )

    by_adk: list[Any] = []
    runner = InMemoryRunner(agent=agent(by_adk), app_name="counter")
    session = await runner.session_service.create_session(app_name="counter", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="count")])
    adk_events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
    ]
    by_mock: list[Any] = []
    result = await run_eval(
        EvalCase(
            name="plain",
            agent=agent(by_mock),
            first_message="count",
            tool_mocks={"count": ToolMock(lambda args, ctx: value)},
        )
    )

    assert result.passed, result.explain()
    assert by_mock == by_adk == [value]
    adk_answers = [r.response for e in adk_events for r in e.get_function_responses()]
    assert responses(result, "count") == adk_answers == [{"result": value}]
