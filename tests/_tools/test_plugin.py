"""Every tool call of the system agent is intercepted: mock, passthrough, or error."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.adk.agents import LlmAgent
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.tools import AgentTool, FunctionTool, LongRunningFunctionTool

from adk_eval import (
    EvalCase,
    EvalSetupError,
    ScriptedUserAgent,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval._trace import ToolResponse
from adk_eval.testing import ScriptedLlm, tool_call


def make_tools(log):
    def send_email(to: str, body: str) -> dict:
        """Sends an email (a real side effect)."""
        log.record("send_email", to=to, body=body)
        return {"sent": True}

    def record_answer(key: str, value: str) -> dict:
        """Only records an answer (safe)."""
        log.record("record_answer", key=key, value=value)
        return {"recorded": key}

    def refund(order_id: str) -> dict:
        """Refunds an order (a real side effect)."""
        log.record("refund", order_id=order_id)
        return {"refunded": order_id}

    def ask(question: str) -> None:
        """Asks the patient (long-running)."""
        log.record("ask", question=question)

    return send_email, record_answer, refund, ask


def case_for(agent, **kwargs) -> EvalCase:
    kwargs.setdefault("first_message", "hello")
    return EvalCase(name="interception", agent=agent, **kwargs)


SEED_MESSAGE_PARTS = [
    "Tool `send_email` was called by agent `mailer` during eval but no mock was provided.",
    "Add a mock:",
    '"send_email": ToolMock(lambda args, ctx: {"result": ...})',
    "Or if this tool has no side effects, provide the actual tool:",
    # a function defined inside another cannot be imported: the message says what to pass
    'tool_mocks={"send_email": <the agent\'s own `send_email` tool object>}',
    "Tool was called with args:",
    '"to": "bob@example.com"',
]


async def test_unmocked_tool_stops_the_run_and_never_executes(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    model = ScriptedLlm([tool_call("send_email", {"to": "bob@example.com", "body": "hi"}), "done"])
    agent = LlmAgent(name="mailer", model=model, tools=[send_email])

    result = await run_eval(case_for(agent))

    assert result.status == "error"
    assert result.error is not None
    assert result.error.phase == "system"
    assert result.error.type == "EvalToolError"
    for part in SEED_MESSAGE_PARTS:
        assert part in result.error.message
    assert tool_log.calls == []


async def test_unmocked_tool_of_a_sub_agent_is_intercepted(tool_log):
    _, _, refund, _ = make_tools(tool_log)
    billing = LlmAgent(
        name="billing",
        description="Handles refunds.",
        model=ScriptedLlm([tool_call("refund", {"order_id": "o-1"}), "refunded"]),
        tools=[refund],
    )
    root = LlmAgent(
        name="front_desk",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "billing"})]),
        sub_agents=[billing],
    )

    result = await run_eval(case_for(root))

    assert result.status == "error"
    assert (
        "Tool `refund` was called by sub-agent `billing` of `front_desk` during eval but no "
        "mock was provided" in result.error.message
    )
    assert tool_log.calls == []
    assert [c.name for c in result.trace.tool_calls] == ["transfer_to_agent", "refund"]


async def test_unmocked_inner_tool_of_an_agent_tool_is_intercepted(tool_log):
    _, _, refund, _ = make_tools(tool_log)
    inner = LlmAgent(
        name="refunder",
        description="Refunds orders.",
        model=ScriptedLlm([tool_call("refund", {"order_id": "o-2"}), "ok"]),
        tools=[refund],
    )
    root = LlmAgent(
        name="front_desk",
        model=ScriptedLlm([tool_call("refunder", {"request": "refund o-2"}), "done"]),
        tools=[AgentTool(inner)],
    )

    result = await run_eval(case_for(root))

    assert result.status == "error"
    assert result.error.type == "EvalToolError"
    assert (
        "Tool `refund` was called by agent `refunder` inside AgentTool `refunder` of "
        "`front_desk` during eval" in result.error.message
    )
    assert tool_log.calls == []


async def test_inner_tool_of_an_agent_tool_can_be_mocked(tool_log):
    _, _, refund, _ = make_tools(tool_log)
    inner = LlmAgent(
        name="refunder",
        model=ScriptedLlm([tool_call("refund", {"order_id": "o-3"}), "refund done"]),
        tools=[refund],
    )
    root = LlmAgent(
        name="front_desk",
        model=ScriptedLlm([tool_call("refunder", {"request": "refund o-3"}), "all done"]),
        tools=[AgentTool(inner)],
    )
    mock = ToolMock(lambda args, ctx: {"refunded": args["order_id"], "mock": True})

    result = await run_eval(case_for(root, tool_mocks={"refund": mock}))

    assert result.status == "passed", result.explain()
    assert tool_log.calls == []
    assert result.trace.final_response == "all done"


async def test_passthrough_runs_the_real_tool(tool_log):
    _, record_answer, _, _ = make_tools(tool_log)
    model = ScriptedLlm([tool_call("record_answer", {"key": "k", "value": "v"}), "saved"])
    agent = LlmAgent(name="a", model=model, tools=[record_answer])

    result = await run_eval(case_for(agent, tool_mocks={"record_answer": record_answer}))

    assert result.status == "passed", result.explain()
    assert tool_log.calls == [("record_answer", {"key": "k", "value": "v"})]
    assert result.trace.tool_calls[0].response == {"recorded": "k"}


async def test_passthrough_accepts_the_tool_object(tool_log):
    _, record_answer, _, _ = make_tools(tool_log)
    tool = FunctionTool(record_answer)
    model = ScriptedLlm([tool_call("record_answer", {"key": "k", "value": "v"}), "saved"])
    agent = LlmAgent(name="a", model=model, tools=[tool])

    result = await run_eval(case_for(agent, tool_mocks={"record_answer": tool}))

    assert result.status == "passed", result.explain()
    assert tool_log.names == ["record_answer"]


@pytest.mark.parametrize("is_async", [False, True])
async def test_mock_answers_sync_or_async_with_a_limited_context(tool_log, is_async):
    send_email, _, _, _ = make_tools(tool_log)
    seen = {}

    def answer(args, ctx):
        seen.update(
            call_id=ctx.call_id,
            tool_name=ctx.tool_name,
            invocation_id=ctx.invocation_id,
            agent=ctx.agent_name,
            age=ctx.state.get("age", scope="patient"),
            now=ctx.now(),
        )
        ctx.state.set("emailed", args["to"])
        return {"sent": True, "id": "mock-123"}

    async def answer_async(args, ctx):
        return answer(args, ctx)

    model = ScriptedLlm([tool_call("send_email", {"to": "bob", "body": "x"}, id="c-1"), "sent"])
    agent = LlmAgent(name="mailer", model=model, tools=[send_email])
    fixed = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

    result = await run_eval(
        case_for(
            agent,
            tool_mocks={"send_email": ToolMock(answer_async if is_async else answer)},
            initial_state={"patient": {"age": 55}},
            clock=fixed,
        )
    )

    assert result.status == "passed", result.explain()
    assert tool_log.calls == []
    assert seen["call_id"] == "c-1"
    assert seen["tool_name"] == "send_email"
    assert seen["invocation_id"].startswith("e-")
    assert seen["agent"] == "mailer"
    assert seen["age"] == 55
    assert seen["now"] == fixed
    assert result.trace.tool_calls[0].response == {"sent": True, "id": "mock-123"}
    assert result.final_state["session"]["emailed"] == "bob"


async def test_mock_returning_a_non_dict_is_wrapped(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    model = ScriptedLlm([tool_call("send_email", {"to": "b", "body": "x"}), "ok"])
    agent = LlmAgent(name="mailer", model=model, tools=[send_email])

    result = await run_eval(
        case_for(agent, tool_mocks={"send_email": ToolMock.returning("queued")})
    )

    assert result.trace.tool_calls[0].response == {"result": "queued"}


async def test_a_mock_that_raises_is_a_system_error_naming_the_tool(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    model = ScriptedLlm([tool_call("send_email", {"to": "b", "body": "x"}), "ok"])
    agent = LlmAgent(name="mailer", model=model, tools=[send_email])

    result = await run_eval(
        case_for(agent, tool_mocks={"send_email": ToolMock.raising(ConnectionError("smtp down"))})
    )

    assert result.status == "error"
    assert result.error.phase == "system"
    assert (
        "The mock for tool `send_email` raised ConnectionError: smtp down" in result.error.message
    )


async def test_mock_name_that_matches_no_tool_is_a_setup_error_with_did_you_mean(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    agent = LlmAgent(name="mailer", model=ScriptedLlm(["x"]), tools=[send_email])

    with pytest.raises(EvalSetupError, match=r"no tool by that name\. Did you mean `send_email`\?"):
        await run_eval(case_for(agent, tool_mocks={"sendEmail": ToolMock.returning({})}))


async def test_a_function_that_is_not_the_agents_tool_is_a_setup_error(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    agent = LlmAgent(name="mailer", model=ScriptedLlm(["x"]), tools=[send_email])

    def send_email_fake(to: str, body: str) -> dict:
        return {}

    with pytest.raises(EvalSetupError, match=r"not the agent's `send_email` tool.*ToolMock\("):
        await run_eval(case_for(agent, tool_mocks={"send_email": send_email_fake}))
    with pytest.raises(EvalSetupError, match="is a dict; wrap the function in ToolMock"):
        await run_eval(case_for(agent, tool_mocks={"send_email": {"execute": send_email_fake}}))


async def test_the_hint_for_a_plain_function_is_code_that_runs(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    model = ScriptedLlm([tool_call("send_email", {"to": "bob@example.com", "body": "hi"}), "ok"])
    agent = LlmAgent(name="mailer", model=model, tools=[send_email])

    def send_email_fake(to: str, body: str) -> dict:
        return {"queued_for": to}

    with pytest.raises(EvalSetupError) as refused:
        await run_eval(case_for(agent, tool_mocks={"send_email": send_email_fake}))
    hint = str(refused.value).rsplit("wrap it: ", 1)[1]
    mock = eval(hint, {"ToolMock": ToolMock, "send_email_fake": send_email_fake})
    result = await run_eval(case_for(agent, tool_mocks={"send_email": mock}))
    assert result.passed, result.explain()
    [response] = [i for i in result.trace.items if isinstance(i, ToolResponse)]
    assert response.response == {"queued_for": "bob@example.com"}
    assert tool_log.calls == []  # the fake answered; the real tool never ran


async def test_code_executor_that_cannot_be_intercepted_fails_closed(tool_log):
    agent = LlmAgent(
        name="coder", model=ScriptedLlm(["x"]), code_executor=UnsafeLocalCodeExecutor()
    )

    with pytest.raises(EvalSetupError, match=r"code executor .*UnsafeLocalCodeExecutor"):
        await run_eval(case_for(agent))


async def test_agent_tool_without_plugins_fails_closed_unless_mocked(tool_log):
    _, _, refund, _ = make_tools(tool_log)
    inner = LlmAgent(name="refunder", model=ScriptedLlm(["ok"]), tools=[refund])
    root = LlmAgent(
        name="front_desk",
        model=ScriptedLlm([tool_call("refunder", {"request": "x"}), "done"]),
        tools=[AgentTool(inner, include_plugins=False)],
    )

    with pytest.raises(EvalSetupError, match="include_plugins=False"):
        await run_eval(case_for(root))

    result = await run_eval(
        case_for(root, tool_mocks={"refunder": ToolMock.returning("refund queued")})
    )
    assert result.status == "passed", result.explain()
    assert tool_log.calls == []


async def test_hallucinated_tool_name_is_answered_by_adk_and_the_run_continues(tool_log):
    send_email, _, _, _ = make_tools(tool_log)
    model = ScriptedLlm([tool_call("send_emial", {"to": "b"}), "sorry, done"], check_calls=False)
    agent = LlmAgent(name="mailer", model=model, tools=[send_email])

    result = await run_eval(case_for(agent))

    assert result.status == "passed", result.explain()
    [call] = result.trace.tool_calls
    assert "no tool with that name" in call.response["error"]
    assert tool_log.calls == []


@pytest.mark.parametrize("description", ["Wipes the disk", "Tool not found"])
async def test_a_bare_base_tool_with_its_own_body_is_intercepted_not_taken_for_adks_placeholder(
    tool_log, description
):
    from google.adk.tools.base_tool import BaseTool
    from google.genai import types

    async def wipe(*, args, tool_context):
        tool_log.record("wipe", **args)
        return {"wiped": True}

    tool = BaseTool(name="wipe", description=description)
    tool.run_async = wipe  # a body of its own, on a bare BaseTool
    tool._get_declaration = lambda: types.FunctionDeclaration(
        name="wipe",
        description=description,
        parameters_json_schema={"type": "object", "properties": {"disk": {"type": "string"}}},
    )
    model = ScriptedLlm([tool_call("wipe", {"disk": "c"}), "done"])
    agent = LlmAgent(name="janitor", model=model, tools=[tool])

    result = await run_eval(case_for(agent))

    assert result.status == "error"
    assert (
        "Tool `wipe` was called by agent `janitor` during eval but no mock" in result.error.message
    )
    assert tool_log.calls == []


async def test_same_named_tool_of_another_agent_is_not_covered_by_a_passthrough(tool_log):
    def lookup(q: str) -> dict:
        """Root's lookup (safe)."""
        tool_log.record("root_lookup", q=q)
        return {"root": q}

    def other_lookup(q: str) -> dict:
        """Sub-agent's lookup (a different function with the same tool name)."""
        tool_log.record("sub_lookup", q=q)
        return {"sub": q}

    sub_tool = FunctionTool(other_lookup)
    sub_tool.name = "lookup"
    sub = LlmAgent(
        name="sub",
        description="sub",
        model=ScriptedLlm([tool_call("lookup", {"q": "x"}), "ok"]),
        tools=[sub_tool],
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "sub"})]),
        tools=[lookup],
        sub_agents=[sub],
    )

    result = await run_eval(case_for(root, tool_mocks={"lookup": lookup}))

    assert result.status == "error"
    assert "two different tools share the name" in result.error.message
    assert tool_log.calls == []


async def test_unmocked_long_running_tool_without_user_agent_never_runs(tool_log):
    _, _, _, ask = make_tools(tool_log)
    model = ScriptedLlm([tool_call("ask", {"question": "How old are you?"}), "thanks"])
    agent = LlmAgent(name="clinician", model=model, tools=[LongRunningFunctionTool(ask)])

    result = await run_eval(case_for(agent))

    assert result.status == "error"
    assert result.error.phase == "user_agent"
    assert result.error.type == "EvalUserAgentError"
    assert "Tool `ask` yielded but no user agent was provided." in result.error.message
    assert '"question": "How old are you?"' in result.error.message
    assert tool_log.calls == []


async def test_tool_user_agent_for_a_tool_that_never_yields_is_a_setup_error(tool_log):
    send_email, _, _, ask = make_tools(tool_log)
    agent = LlmAgent(
        name="c", model=ScriptedLlm(["x"]), tools=[send_email, LongRunningFunctionTool(ask)]
    )
    patient = ScriptedUserAgent(name="p", script=["yes"])

    with pytest.raises(EvalSetupError, match="`send_email`, but that tool is not long-running"):
        await run_eval(case_for(agent, user_agents=UserAgents(tools={"send_email": patient})))
    with pytest.raises(EvalSetupError, match=r"does not exist.*Did you mean `ask`"):
        await run_eval(case_for(agent, user_agents=UserAgents(tools={"aks": patient})))


async def test_mocked_tool_that_requires_confirmation_keeps_the_confirmation_step(tool_log):
    def transfer(amount: int) -> dict:
        """Moves money (a real side effect)."""
        tool_log.record("transfer", amount=amount)
        return {"moved": amount}

    def run_case(approve: bool) -> EvalCase:
        model = ScriptedLlm([tool_call("transfer", {"amount": 100}), "finished"])
        agent = LlmAgent(
            name="banker", model=model, tools=[FunctionTool(transfer, require_confirmation=True)]
        )
        return case_for(
            agent,
            tool_mocks={
                "transfer": ToolMock(lambda args, ctx: {"moved": args["amount"], "mock": 1})
            },
            user_agents=UserAgents(
                tools={
                    "adk_request_confirmation": ScriptedUserAgent(name="approver", script=[approve])
                }
            ),
        )

    approved = await run_eval(run_case(True))
    assert approved.status == "passed", approved.explain()
    responses = [c.response for c in approved.trace.tool_calls if c.name == "transfer"]
    assert responses == [{"moved": 100, "mock": 1}]

    rejected = await run_eval(run_case(False))
    assert rejected.status == "passed", rejected.explain()
    responses = [c.response for c in rejected.trace.tool_calls if c.name == "transfer"]
    assert responses == [{"error": "This tool call is rejected."}]
    assert tool_log.calls == []


async def test_long_running_tool_inside_an_agent_tool_fails_closed(tool_log):
    _, _, _, ask = make_tools(tool_log)
    inner = LlmAgent(
        name="interviewer",
        model=ScriptedLlm([tool_call("ask", {"question": "q"}), "asked"]),
        tools=[LongRunningFunctionTool(ask)],
    )
    root = LlmAgent(
        name="front_desk",
        model=ScriptedLlm([tool_call("interviewer", {"request": "interview"}), "done"]),
        tools=[AgentTool(inner)],
    )
    patient = ScriptedUserAgent(name="p", script=["answer"])

    result = await run_eval(case_for(root, user_agents=UserAgents(tools={"ask": patient})))

    assert result.status == "error"
    assert "Long-running tool `ask` was called by agent `interviewer` inside an AgentTool" in (
        result.error.message
    )
    assert tool_log.calls == []


async def test_a_workflow_apps_function_node_fails_closed(tool_log):
    from google.adk.apps import App
    from google.adk.workflow import Workflow

    def step(node_input: str) -> str:
        tool_log.record("step")
        return node_input

    app = App(name="wf_app", root_agent=Workflow(name="wf", edges=[("START", step)]))
    result = await run_eval(case_for(app))
    assert result.status == "error"
    assert result.error is not None
    assert result.error.message.startswith("Node `step` of workflow `wf` would run during eval")
    assert tool_log.calls == []


async def test_an_unmocked_call_stops_the_run_without_adk_logging_a_traceback(tool_log, caplog):
    send_email, _, _, _ = make_tools(tool_log)
    billing = LlmAgent(
        name="billing",
        model=ScriptedLlm([tool_call("send_email", {"to": "a@b.c", "body": "x"}), "sent"]),
        tools=[send_email],
    )
    root = LlmAgent(
        name="desk",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "billing"})]),
        sub_agents=[billing],
    )
    with caplog.at_level("DEBUG"):
        result = await run_eval(case_for(root))
    assert result.status == "error"
    assert result.error is not None
    assert result.error.message.startswith(
        "Tool `send_email` was called by sub-agent `billing` of `desk` during eval"
    )
    assert [r.getMessage() for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")] == []
    assert [r for r in caplog.records if r.exc_info] == []
    assert tool_log.calls == []
