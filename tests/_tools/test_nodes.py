"""ADK 2 Workflows under test: agent and tool nodes intercepted, function nodes declared."""

from __future__ import annotations

import logging

import pytest
from google.adk.agents import LlmAgent
from google.adk.events import RequestInput
from google.adk.tools import FunctionTool
from google.adk.workflow import START, JoinNode, Workflow

from adk_eval import (
    EvalCase,
    EvalSetupError,
    ScriptedUserAgent,
    ToolMock,
    UserAgents,
    run_eval,
)
from adk_eval.goldens import eval_case_from_golden, to_golden
from adk_eval.testing import ScriptedLlm, tool_call

RAN: list[str] = []  # which real functions ran


def lookup(topic: str) -> dict:
    """Looks a topic up (a side effect: always mocked here)."""
    RAN.append("lookup")
    return {"facts": "real"}


def publish(node_input: str) -> str:
    """Publishes the reviewed text (a side effect)."""
    RAN.append("publish")
    return f"published: {node_input}"


def shout(node_input: str) -> str:
    """Upper-cases the draft (pure)."""
    RAN.append("shout")
    return str(node_input).upper()


def pipeline() -> Workflow:
    """The simple_sequential_agent shape as a Workflow: write, then review, then publish."""
    writer = LlmAgent(
        name="writer",
        model=ScriptedLlm([tool_call("lookup", {"topic": "owls"}), "owls hunt at night"]),
        tools=[lookup],
    )
    reviewer = LlmAgent(name="reviewer", model=ScriptedLlm(["Reviewed: fine."]))
    return Workflow(name="pipeline", edges=[(START, writer, shout, reviewer, publish)])


@pytest.fixture(autouse=True)
def forget_runs():
    RAN.clear()


def case(**overrides) -> EvalCase:
    fields = {
        "name": "pipeline",
        "agent": pipeline(),
        "first_message": "Write about owls.",
        "tool_mocks": {"lookup": ToolMock.returning({"facts": "mocked"})},
        "node_mocks": {"shout": shout, "publish": lambda node_input: f"MOCK {node_input}"},
    }
    return EvalCase(**{**fields, **overrides})


async def test_a_sequential_workflow_runs_with_its_tools_and_function_nodes_declared():
    result = await run_eval(case())

    assert result.status == "passed", result.explain()
    assert RAN == ["shout"]  # the mocked tool and node never ran; the passed node did
    assert [(c.name, c.response) for c in result.trace.tool_calls] == [
        ("lookup", {"facts": "mocked"})
    ]
    texts = [(m.author, m.text) for m in result.trace.messages if m.role == "agent"]
    assert texts == [("writer", "owls hunt at night"), ("reviewer", "Reviewed: fine.")]
    outputs = {e.node_info.path: e.output for e in result.events if e.output is not None}
    assert outputs["pipeline@1/shout@1"] == "OWLS HUNT AT NIGHT"
    assert outputs["pipeline@1/publish@1"] == "MOCK Reviewed: fine."


async def test_an_unlisted_function_node_stops_the_run_before_it_runs(caplog):
    with caplog.at_level(logging.DEBUG):
        result = await run_eval(case(node_mocks={"shout": shout}))

    assert result.status == "error"
    assert RAN == ["shout"]  # publish never ran
    assert result.error is not None
    assert result.error.type == "EvalToolError"
    message = result.error.message
    assert message.startswith(
        "Node `publish` of workflow `pipeline` would run during eval but no mock was provided"
    )
    assert f"from {__name__} import publish" in message
    assert "Node arguments:" in message
    assert "Reviewed: fine." in message
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


async def test_node_mocks_name_real_nodes():
    with pytest.raises(EvalSetupError, match="Did you mean `publish`"):
        await run_eval(case(node_mocks={"shout": shout, "publsh": "x"}))
    with pytest.raises(EvalSetupError, match="`node_mocks` are for Workflow nodes"):
        EvalCase(
            name="x",
            agent=LlmAgent(name="a", model=ScriptedLlm(["hi"])),
            first_message="hi",
            node_mocks={"n": 1},
        )


async def test_an_unmocked_tool_of_an_agent_node_is_refused_as_anywhere(caplog):
    with caplog.at_level(logging.DEBUG):
        result = await run_eval(case(tool_mocks={}))
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []
    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "EvalToolError"
    assert "Tool `lookup` was called by node `writer` of workflow `pipeline`" in (
        result.error.message
    )
    assert RAN == []


async def test_a_tool_node_goes_through_the_interception_plugin():
    def fetch(node_input: str) -> dict:
        """Fetches a page (a side effect)."""
        RAN.append("fetch")
        return {"page": "real"}

    graph = Workflow(name="fetcher", edges=[(START, FunctionTool(fetch))])
    mocked = await run_eval(
        EvalCase(
            name="tool-node",
            agent=graph,
            first_message="go",
            tool_mocks={"fetch": ToolMock.returning({"page": "mocked"})},
        )
    )
    assert mocked.status == "passed", mocked.explain()
    assert [e.output for e in mocked.events if e.output is not None] == [{"page": "mocked"}]

    refused = await run_eval(EvalCase(name="tool-node", agent=graph, first_message="go"))
    assert refused.status == "error"
    assert refused.error.type == "EvalToolError"
    assert RAN == []


async def test_branches_join_and_keep_their_semantics():
    left = LlmAgent(name="left", model=ScriptedLlm(["from the left"]))
    right = LlmAgent(name="right", model=ScriptedLlm(["from the right"]))
    join = JoinNode(name="join")

    def combine(node_input: dict) -> str:
        """Combines both branches."""
        RAN.append("combine")
        return " + ".join(sorted(str(v) for v in node_input.values()))

    graph = Workflow(name="fork", edges=[(START, (left, right), join, combine)])
    result = await run_eval(
        EvalCase(
            name="fork",
            agent=graph,
            first_message="go",
            node_mocks={"combine": lambda node_input: sorted(node_input)},
        )
    )

    assert result.status == "passed", result.explain()
    assert RAN == []
    outputs = {e.node_info.path: e.output for e in result.events if e.output is not None}
    assert outputs["fork@1/combine@1"] == ["left", "right"]  # the join's input, both branches


async def test_a_request_input_interrupt_is_answered_by_a_scripted_user_agent():
    def ask_name(node_input: str) -> RequestInput:
        return RequestInput(message="What is your name?")

    def greet(node_input: str) -> str:
        return f"hello {node_input}"

    graph = Workflow(name="greeter", edges=[(START, ask_name, greet)])
    user = ScriptedUserAgent(name="visitor", script=["Ada"])
    result = await run_eval(
        EvalCase(
            name="greeter",
            agent=graph,
            first_message="hi",
            node_mocks={"ask_name": ask_name, "greet": greet},
            user_agents=UserAgents(tools={"adk_request_input": user}),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.turns == 1
    (asked,) = [c for c in result.trace.tool_calls if c.name == "adk_request_input"]
    assert asked.args["message"] == "What is your name?"
    assert [e.output for e in result.events if e.output is not None][-1] == "hello Ada"


async def test_a_workflow_run_exports_and_replays_as_a_golden():
    original = await run_eval(case())
    golden = to_golden(original, eval_id="owls")
    assert [u.name for u in golden.conversation[0].intermediate_data.tool_uses] == ["lookup"]

    replay = await run_eval(
        eval_case_from_golden(
            golden,
            pipeline(),
            tool_mocks={"lookup": ToolMock.returning({"facts": "mocked"})},
            node_mocks={"shout": shout, "publish": lambda node_input: f"MOCK {node_input}"},
        )
    )
    assert replay.status == "passed", replay.explain()
    assert replay.metrics["golden_trajectory"].passed
    assert replay.metrics["golden_final_state"].passed


async def test_per_case_models_reach_agents_inside_the_workflow():
    graph = pipeline()
    result = await run_eval(
        case(
            agent=graph,
            models={"reviewer": ScriptedLlm(["Reviewed by the case's model."])},
        )
    )
    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.messages if m.author == "reviewer"] == [
        "Reviewed by the case's model."
    ]
    reviewer = next(n for n in graph.graph.nodes if n.name == "reviewer")
    assert reviewer.model.steps == ["Reviewed: fine."]  # the user's agent is untouched


async def test_a_node_declared_harmless_starts_only_declared_dynamic_nodes():
    from google.adk.agents.context import Context

    def child(node_input: str) -> str:
        RAN.append("child")
        return f"child saw {node_input}"

    async def parent(ctx: Context, node_input: str) -> str:
        RAN.append("parent")
        return await ctx.run_node(child, node_input="hello")

    from google.adk.workflow import FunctionNode

    node = FunctionNode(func=parent, rerun_on_resume=True)  # ADK requires it of a parent
    graph = Workflow(name="dynamic", edges=[(START, node)])

    def run(node_mocks):
        RAN.clear()
        return run_eval(
            EvalCase(name="dynamic", agent=graph, first_message="go", node_mocks=node_mocks)
        )

    refused = await run({"parent": parent})
    assert refused.status == "error"
    assert RAN == ["parent"]  # the undeclared child never ran
    assert refused.error.message.startswith("Node `child` of workflow `dynamic`")
    assert "started by node `parent` with ctx.run_node" in refused.error.message

    passed = await run({"parent": parent, "child": child})
    assert passed.status == "passed", passed.explain()
    assert RAN == ["parent", "child"]  # both declared harmless: as in production
    outputs = [e.output for e in passed.events if e.output is not None]
    assert outputs[-1] == "child saw hello"

    mocked_child = await run({"parent": parent, "child": lambda node_input: "MOCK"})
    assert mocked_child.status == "passed", mocked_child.explain()
    assert RAN == ["parent"]
    assert [e.output for e in mocked_child.events if e.output is not None][-1] == "MOCK"

    mocked = await run({"parent": "mocked"})
    assert mocked.status == "passed", mocked.explain()
    assert RAN == []  # a mocked node never starts its dynamic children


def api_key_auth():
    from fastapi.openapi.models import APIKey, APIKeyIn
    from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
    from google.adk.auth.auth_tool import AuthConfig

    return AuthConfig(
        auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Key"}),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY),
        credential_key="fetch_key",  # (without one, ADK calls its own deprecated method)
    )


def fetch(node_input: str) -> str:
    """Fetches from a service that needs a key (a side effect)."""
    RAN.append("fetch")
    return "fetched"


async def test_an_auth_gated_node_is_refused_before_its_credential_is_asked_for():
    from google.adk.workflow import FunctionNode

    node = FunctionNode(func=fetch, auth_config=api_key_auth(), rerun_on_resume=True)
    graph = Workflow(name="gated", edges=[(START, node)])
    result = await run_eval(EvalCase(name="gated", agent=graph, first_message="go"))
    assert result.status == "error"
    assert result.error.message.startswith("Node `fetch` of workflow `gated`")
    assert RAN == []
    assert not [c for c in result.trace.tool_calls if c.name == "adk_request_credential"]


async def test_a_credential_request_is_answered_by_its_user_agent():
    from google.adk.workflow import FunctionNode

    node = FunctionNode(func=fetch, auth_config=api_key_auth(), rerun_on_resume=True)
    graph = Workflow(name="gated", edges=[(START, node)])
    result = await run_eval(
        EvalCase(
            name="gated",
            agent=graph,
            first_message="go",
            node_mocks={"fetch": lambda node_input: "MOCK fetched"},
            user_agents=UserAgents(
                tools={"adk_request_credential": ScriptedUserAgent(name="it", script=["k-123"])}
            ),
        )
    )
    assert result.status == "passed", result.explain()
    (asked,) = [c for c in result.trace.tool_calls if c.name == "adk_request_credential"]
    assert result.trace.source_of(asked) == "user_agent"
    assert [e.output for e in result.events if e.output is not None][-1] == "MOCK fetched"
    assert RAN == []


async def test_a_refused_nodes_confirmation_predicate_never_runs():
    from google.adk.workflow import FunctionNode

    def ask(node_input: str) -> bool:
        RAN.append("asked")
        return True

    node = FunctionNode(func=publish, require_confirmation=ask, rerun_on_resume=True)
    graph = Workflow(name="confirmed", edges=[(START, node)])
    result = await run_eval(EvalCase(name="confirmed", agent=graph, first_message="go"))
    assert result.status == "error"
    assert result.error.message.startswith("Node `publish` of workflow `confirmed`")
    assert RAN == []


async def test_a_custom_agent_node_runs_code_so_it_is_declared_or_refused():
    from google.adk.agents import BaseAgent
    from google.adk.events import Event
    from google.genai import types

    class Stamp(BaseAgent):
        async def _run_async_impl(self, ctx):
            RAN.append("stamp")
            yield Event(author=self.name, content=types.Content(parts=[types.Part(text="x")]))

    def graph(stamp):
        return Workflow(name="stamped", edges=[(START, stamp)])

    stamp = Stamp(name="stamp")
    refused = await run_eval(EvalCase(name="s", agent=graph(stamp), first_message="go"))
    assert refused.status == "error"
    assert refused.error.message.startswith("Node `stamp` of workflow `stamped`")
    assert RAN == []

    declared = Stamp(name="stamp")
    passed = await run_eval(
        EvalCase(
            name="s", agent=graph(declared), first_message="go", node_mocks={"stamp": declared}
        )
    )
    assert passed.status == "passed", passed.explain()
    assert RAN == ["stamp"]


async def test_a_parallel_worker_function_node_is_mocked_once_per_item():
    from google.adk.workflow import node as make_node

    seen = []

    def split(node_input: str) -> list[str]:
        return ["a", "b", "c"]

    def mock(node_input: str) -> str:
        seen.append(node_input)
        return node_input.upper()

    worker = make_node(publish, parallel_worker=True)
    graph = Workflow(name="fanout", edges=[(START, split, worker)])
    result = await run_eval(
        EvalCase(
            name="fanout",
            agent=graph,
            first_message="go",
            node_mocks={"split": split, "publish": mock},
        )
    )
    assert result.status == "passed", result.explain()
    assert sorted(seen) == ["a", "b", "c"]  # once per item, not once with the list
    assert [e.output for e in result.events if e.output is not None][-1] == ["A", "B", "C"]
    assert RAN == []


async def test_an_agent_parallel_worker_is_an_agent_whose_tools_are_mocked():
    finder = LlmAgent(
        name="finder",
        model=ScriptedLlm([tool_call("lookup", {"topic": "x"}), "found"]),
        tools=[lookup],
        parallel_worker=True,
    )

    def split(node_input: str) -> list[str]:
        return ["owls", "bats"]

    graph = Workflow(name="fanout", edges=[(START, split, finder)])
    result = await run_eval(
        EvalCase(
            name="fanout",
            agent=graph,
            first_message="go",
            node_mocks={"split": split},
            tool_mocks={"lookup": ToolMock.returning({"facts": "mocked"})},
        )
    )
    assert result.status == "passed", result.explain()
    assert RAN == []
    calls = [c for c in result.trace.tool_calls if c.name == "lookup"]
    assert len(calls) == 2
    assert {result.trace.source_of(c) for c in calls} == {"mock"}


async def test_an_unmocked_tool_node_is_named_as_a_tool_node_of_its_workflow():
    graph = Workflow(name="tooled", edges=[(START, FunctionTool(lookup))])
    result = await run_eval(EvalCase(name="t", agent=graph, first_message="go"))
    assert result.status == "error"
    assert result.error.message.startswith(
        "Tool `lookup` was called by tool node `lookup` of workflow `tooled` during eval"
    )
    assert RAN == []


def _broken_mock(node_input: str) -> str:
    raise RuntimeError("CMS down")


def broken(node_input: str) -> str:
    """A node of the workflow's own that fails."""
    raise ValueError(f"cannot shout {node_input!r}")


@pytest.mark.parametrize("whose", ["a node mock", "the node's own code"])
async def test_a_node_that_raises_is_one_clean_error_without_adks_traceback(caplog, capfd, whose):
    import sys

    if whose == "a node mock":
        ran = case(node_mocks={"shout": shout, "publish": _broken_mock})
        error_type, said = "EvalToolError", "The mock for node `publish` raised RuntimeError: CMS"
    else:
        flow = Workflow(name="flow", edges=[(START, broken)])
        ran = EvalCase(name="own", agent=flow, first_message="owls", node_mocks={"broken": broken})
        error_type, said = "ValueError", "cannot shout"
    with caplog.at_level(logging.DEBUG):
        result = await run_eval(ran)

    assert result.status == "error", result.explain()
    assert result.error.type == error_type
    assert said in result.error.message
    assert [r for r in caplog.records if r.exc_info] == []
    sys.stderr.flush()
    assert "Traceback" not in capfd.readouterr().err


def confirm(node_input: str):
    """A generator node, as ADK's samples write one: it yields its message."""
    from google.adk import Event

    RAN.append("confirm")
    yield Event(message=f"Confirmed: {node_input}")


async def test_a_generator_node_declared_harmless_or_mocked_by_one_yields_its_events():
    from google.adk import Event

    def mocked(node_input: str):
        yield Event(message=f"Mocked: {node_input}")

    async def streamed(node_input: str):
        yield Event(message=f"Streamed: {node_input}")

    texts = {}
    for label, mock in [("itself", confirm), ("sync mock", mocked), ("async mock", streamed)]:
        writer = LlmAgent(name="writer", model=ScriptedLlm(["owls"]))
        graph = Workflow(name="confirming", edges=[(START, writer, confirm)])
        result = await run_eval(
            EvalCase(name="g", agent=graph, first_message="go", node_mocks={"confirm": mock})
        )
        assert result.status == "passed", result.explain()
        assert all(e.output is None or isinstance(e.output, str) for e in result.events)
        texts[label] = [m.text for m in result.trace.messages if m.author == "confirming"]
    assert texts == {
        "itself": ["Confirmed: owls"],
        "sync mock": ["Mocked: owls"],
        "async mock": ["Streamed: owls"],
    }
    assert RAN == ["confirm"]
