"""Live invariants on real agent shapes: AgentTools two deep, transfers, workflows, confirmation."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import AgentTool, FunctionTool

from adk_eval import EvalCase, ScriptedUserAgent, ToolMock, UserAgents, run_eval
from adk_eval.metrics import at_most, never, never_called
from adk_eval.testing import ScriptedLlm, tool_call


def delete_account(user: str) -> dict:
    """Deletes an account."""
    raise AssertionError("mocked")


def lookup(user: str) -> dict:
    """Looks a user up."""
    raise AssertionError("mocked")


def agent_tools_two_deep() -> LlmAgent:
    cleaner = LlmAgent(
        name="cleaner",
        model=ScriptedLlm([tool_call("delete_account", {"user": "u1"}), "Deleted."]),
        tools=[delete_account],
    )
    middle = LlmAgent(
        name="middle",
        model=ScriptedLlm([tool_call("cleaner", {"request": "tidy u1"}), "Tidied."]),
        tools=[AgentTool(agent=cleaner)],
    )
    return LlmAgent(
        name="boss",
        model=ScriptedLlm([tool_call("middle", {"request": "tidy up"}), "All tidy."]),
        tools=[AgentTool(agent=middle)],
    )


async def test_a_forbidden_call_two_agent_tools_deep_stops_the_run_before_its_mock():
    deleted: list = []
    rule = never_called("delete_account")
    case = EvalCase(
        name="deep",
        agent=agent_tools_two_deep(),
        first_message="tidy up",
        tool_mocks={"delete_account": ToolMock(lambda a, c: deleted.append(a) or {"ok": True})},
        invariants=[rule],
    )

    result = await run_eval(case)

    assert result.status == "failed", result.explain()
    assert deleted == []
    live = result.metrics[rule.name]
    assert live.value["event"] == '`delete_account` called by `cleaner` with {"user": "u1"}'
    assert rule.evaluate(result.trace).value == live.value  # post hoc, nested calls included
    assert "All tidy." not in [m.text for m in result.trace.messages]


async def test_a_sub_agent_reached_by_transfer_is_watched_too():
    billing = LlmAgent(
        name="billing",
        model=ScriptedLlm(
            [tool_call("lookup", {"user": "u1"}), tool_call("lookup", {"user": "u1"}), "Ok."]
        ),
        tools=[lookup],
    )
    root = LlmAgent(
        name="root",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "billing"})]),
        sub_agents=[billing],
    )
    rule = at_most("lookup", 1)
    result = await run_eval(
        EvalCase(
            name="transfer",
            agent=root,
            first_message="my bill",
            tool_mocks={"lookup": ToolMock.returning({"plan": "basic"})},
            invariants=[rule],
        )
    )
    assert result.status == "failed"
    assert result.metrics[rule.name].value["event"] == (
        'call 2 of `lookup` (at most 1), args {"user": "u1"}'
    )
    assert rule.evaluate(result.trace).value == result.metrics[rule.name].value


async def test_a_confirmed_call_happens_after_the_confirmation_a_refused_one_never():
    def wire(amount: int) -> dict:
        """Wires money."""
        raise AssertionError("mocked")

    def case(confirmed: bool) -> EvalCase:
        tool = FunctionTool(wire, require_confirmation=True)
        model = ScriptedLlm([tool_call("wire", {"amount": 900}), "Done."])
        return EvalCase(
            name=f"confirmed-{confirmed}",
            agent=LlmAgent(name="bank", model=model, tools=[tool]),
            first_message="wire 900",
            tool_mocks={"wire": ToolMock.returning({"sent": True})},
            user_agents=UserAgents(
                tools={
                    "adk_request_confirmation": ScriptedUserAgent(
                        name="holder", script=[{"confirmed": confirmed}]
                    )
                }
            ),
            invariants=[never_called("wire", on_breach="record")],
        )

    accepted, refused = await run_eval(case(True)), await run_eval(case(False))

    assert not accepted.metrics["never_called(wire)"].passed  # it reached the tool
    assert refused.metrics["never_called(wire)"].passed, refused.explain()  # it never did


async def test_a_rule_over_the_order_of_a_workflow_s_tool_calls():
    from google.adk.workflow import Workflow

    verify = LlmAgent(name="verify", model=ScriptedLlm(["verified"]))
    payer = LlmAgent(
        name="payer",
        model=ScriptedLlm([tool_call("lookup", {"user": "u1"}), "paid"]),
        tools=[lookup],
    )
    flow = Workflow(name="flow", edges=[("START", verify), (verify, payer)])
    rule = never("lookup", before="verify_identity")
    result = await run_eval(
        EvalCase(
            name="workflow",
            agent=flow,
            first_message="pay",
            tool_mocks={"lookup": ToolMock.returning({"plan": "basic"})},
            invariants=[rule],
        )
    )
    assert result.status == "failed", result.explain()
    assert result.metrics[rule.name].value["event"].startswith("`lookup` called by `payer`")


async def test_a_second_forbidden_call_in_the_same_model_turn_never_runs_its_real_body():
    ran: list = []

    def erase(user: str) -> dict:
        """Deletes an account (the real function, passed in)."""
        ran.append(user)
        return {"deleted": user}

    model = ScriptedLlm(
        [[tool_call("erase", {"user": "1"}), tool_call("erase", {"user": "2"})], "Both gone."]
    )
    rule = never_called("erase")
    result = await run_eval(
        EvalCase(
            name="parallel-forbidden",
            agent=LlmAgent(name="admin", model=model, tools=[erase]),
            first_message="delete 1 and 2",
            tool_mocks={"erase": erase},
            invariants=[rule],
        )
    )

    assert ran == [], result.explain()
    assert result.status == "failed"
    sources = sorted(result.trace.source_of(call) for call in result.trace.tool_calls)
    assert sources == ["invariant", "stopped"]
    assert rule.evaluate(result.trace).value == result.metrics[rule.name].value


async def test_a_counting_rule_admits_parallel_calls_one_at_a_time():
    answered: list = []
    model = ScriptedLlm([[tool_call("lookup", {"user": str(i)}) for i in range(3)], "Found."])
    rule = at_most("lookup", 1)
    result = await run_eval(
        EvalCase(
            name="parallel-count",
            agent=LlmAgent(name="finder", model=model, tools=[lookup]),
            first_message="find 0, 1 and 2",
            tool_mocks={"lookup": ToolMock(lambda a, c: answered.append(a) or {"ok": True})},
            invariants=[rule],
        )
    )

    assert len(answered) == 1, result.explain()
    assert result.metrics[rule.name].value["event"].startswith("call 2 of `lookup`")
    assert rule.evaluate(result.trace).value == result.metrics[rule.name].value


async def test_a_real_tool_in_the_turn_of_a_refused_call_does_not_run():
    ran: list = []

    def note(text: str) -> dict:
        """Writes a note (the real function, passed in)."""
        ran.append(text)
        return {"ok": True}

    model = ScriptedLlm(
        [[tool_call("delete_account", {"user": "1"}), tool_call("note", {"text": "x"})], "Ok."]
    )
    result = await run_eval(
        EvalCase(
            name="unmocked-then-real",
            agent=LlmAgent(name="admin", model=model, tools=[delete_account, note]),
            first_message="go",
            tool_mocks={"note": note},
        )
    )

    assert result.status == "error"
    assert ran == []
    assert "delete_account" in result.error.message


async def test_a_real_tool_calling_a_mocked_tool_s_own_object_is_refused():
    deleted: list = []

    def erase(user: str) -> dict:
        """Deletes an account (the real function: mocked below)."""
        deleted.append(user)
        return {"deleted": user}

    erase_tool = FunctionTool(erase)

    async def tidy(user: str, tool_context) -> dict:
        """Tidies an account up (runs for real, and calls `erase` itself)."""
        return await erase_tool.run_async(args={"user": user}, tool_context=tool_context)

    mocked: list = []
    model = ScriptedLlm([tool_call("tidy", {"user": "u1"}), "Tidied."])
    rule = never_called("erase")
    result = await run_eval(
        EvalCase(
            name="direct",
            agent=LlmAgent(name="admin", model=model, tools=[erase_tool, tidy]),
            first_message="tidy u1",
            tool_mocks={
                "erase": ToolMock(lambda a, c: mocked.append(a) or {"ok": True}),
                "tidy": tidy,
            },
            invariants=[rule],
        )
    )

    assert deleted == []
    assert mocked == []
    assert result.status == "error", result.explain()
    assert "tool `tidy`, which runs for real, called `erase` directly" in result.error.message
    # outside a run the tool's own object is itself
    assert await erase_tool.run_async(args={"user": "u2"}, tool_context=None) == {"deleted": "u2"}
