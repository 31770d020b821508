"""Seeded fuzzing of ADK 2 workflow graphs: no undeclared node body runs, every run ends.

Each graph chains random nodes: function nodes (sync and async, some behind a
confirmation predicate or an `auth_config`), tool nodes, `LlmAgent` nodes that call a
tool, custom `BaseAgent` nodes, parallel workers (function and agent ones, after a
node that splits its input), and nodes that start another node with
``ctx.run_node`` (a function or a custom agent). Each code node is, at random,
declared harmless (its real body may run), mocked, or left out (it must not run,
nor its confirmation predicate); each tool is mocked or left out.
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.auth.auth_tool import AuthConfig
from google.adk.events import Event
from google.adk.tools import FunctionTool
from google.adk.workflow import START, FunctionNode, Workflow
from google.adk.workflow import node as make_node
from google.genai import types

from adk_eval import (
    EvalCase,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval_suite,
)
from adk_eval.testing import ScriptedLlm, tool_call

GRAPHS = 150
STATUSES = {"passed", "failed", "error", "terminated"}


class Ledger:
    """Which real bodies (nodes, predicates, tools) ran, and which the case allowed."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []
        self.allowed: dict[str, set[str]] = {}


class Custom(BaseAgent):
    """A custom agent node: its body is code the plugins do not see."""

    ledger: Any = None
    case: str = ""

    async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Event, None]:
        self.ledger.ran.append((self.case, self.name))
        yield Event(author=self.name, content=types.Content(parts=[types.Part(text="done")]))


class GraphBuilder:
    """One random graph, its `node_mocks`, `tool_mocks` and the bodies it allows."""

    def __init__(self, rng: random.Random, ledger: Ledger, case: str) -> None:
        self.rng, self.ledger, self.case = rng, ledger, case
        self.node_mocks: dict[str, Any] = {}
        self.tool_mocks: dict[str, Any] = {}
        self.allowed: set[str] = set()
        self.count = 0

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def _body(self, name: str, *, is_async: bool = False, output: Any = "out") -> Any:
        ledger, case = self.ledger, self.case

        def run(node_input: Any = None) -> Any:
            ledger.ran.append((case, name))
            return output

        async def run_async(node_input: Any = None) -> Any:
            ledger.ran.append((case, name))
            return output

        body = run_async if is_async else run
        body.__name__ = body.__qualname__ = name
        return body

    def _declare(self, name: str, itself: Any) -> None:
        """Harmless (it runs as itself), mocked, or left out (it must not run)."""
        choice = self.rng.choice(["harmless", "mocked", "left out"])
        if choice == "harmless":
            self.node_mocks[name] = itself
            self.allowed.add(name)
            self.allowed.add(f"predicate:{name}")
        elif choice == "mocked":
            self.node_mocks[name] = self.rng.choice([lambda **kwargs: "mocked", ["a", "b"]])
            self.allowed.add(f"predicate:{name}")

    def _tool(self) -> FunctionTool:
        name = self._name("tool")
        ledger, case = self.ledger, self.case

        def body(value: str = "") -> dict:
            ledger.ran.append((case, name))
            return {"ran": name}

        body.__name__, body.__doc__ = name, f"Tool {name}."
        if self.rng.random() < 0.7:
            self.tool_mocks[name] = ToolMock.returning({"mocked": name})
        return FunctionTool(body)

    def node(self) -> Any:
        kind = self.rng.choice(
            ["function", "gated", "tool", "agent", "custom", "worker", "agent worker", "dynamic"]
        )
        return getattr(self, "_" + kind.replace(" ", "_"))()

    def _function(self) -> Any:
        name = self._name("fn")
        body = self._body(name, is_async=self.rng.random() < 0.5)
        self._declare(name, body)
        return body

    def _gated(self) -> Any:
        name = self._name("gated")
        body = self._body(name)
        ledger, case = self.ledger, self.case

        def predicate(node_input: Any = None) -> bool:
            ledger.ran.append((case, f"predicate:{name}"))
            return False

        if self.rng.random() < 0.5:
            gate: dict[str, Any] = {"require_confirmation": predicate}
        else:
            auth = AuthConfig(
                auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Key"}),
                raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY),
                credential_key=f"{name}_key",
            )
            gate = {"auth_config": auth}
        node = FunctionNode(func=body, rerun_on_resume=True, **gate)
        self._declare(name, body)
        return node

    def _tool_node(self) -> Any:
        return self._tool()

    def _agent(self) -> Any:
        tool = self._tool()
        model = ScriptedLlm([tool_call(tool.name, {"value": "x"}), "agent done"])
        return LlmAgent(name=self._name("agent"), model=model, tools=[tool])

    def _custom(self) -> Any:
        custom = Custom(name=self._name("custom"), ledger=self.ledger, case=self.case)
        self._declare(custom.name, custom)
        return custom

    def _split(self) -> Any:
        name = self._name("split")
        body = self._body(name, output=["a", "b"])
        self.node_mocks[name] = body  # harmless: it only splits
        self.allowed.add(name)
        return body

    def _worker(self) -> list[Any]:
        name = self._name("worker")
        body = self._body(name)
        self._declare(name, body)
        return [self._split(), make_node(body, parallel_worker=True)]

    def _agent_worker(self) -> list[Any]:
        tool = self._tool()
        model = ScriptedLlm([tool_call(tool.name, {"value": "x"}), "worker done"])
        agent = LlmAgent(
            name=self._name("agentworker"), model=model, tools=[tool], parallel_worker=True
        )
        return [self._split(), agent]

    def _dynamic(self) -> Any:
        name = self._name("parent")
        child = self.rng.choice([self._function, self._custom])()
        ledger, case = self.ledger, self.case

        async def parent(ctx: Any, node_input: Any = None) -> Any:
            ledger.ran.append((case, name))
            return await ctx.run_node(child, node_input="from parent")

        parent.__name__ = parent.__qualname__ = name
        self._declare(name, parent)
        return FunctionNode(func=parent, rerun_on_resume=True)

    def graph(self) -> Workflow:
        chain: list[Any] = []
        for _ in range(self.rng.randint(1, 4)):
            node = self.node()
            chain.extend(node if isinstance(node, list) else [node])
        return Workflow(name=f"wf_{self.case}", edges=[(START, *chain)])


@pytest.mark.parametrize("half", [0, 1])  # the same cases, in two halves that run apart
@pytest.mark.slow
async def test_random_workflows_never_run_an_undeclared_body(half):
    rng = random.Random(20261125)
    ledger = Ledger()
    cases = []
    for index in range(GRAPHS):
        name = f"graph{index}"
        builder = GraphBuilder(rng, ledger, name)
        graph = builder.graph()
        ledger.allowed[name] = builder.allowed
        answers = ScriptedUserAgent(name="person", script=["k-1", "k-2", "k-3"])
        cases.append(
            EvalCase(
                name=name,
                agent=graph,
                first_message="go",
                node_mocks=builder.node_mocks,
                tool_mocks=builder.tool_mocks,
                user_agents=UserAgents(tools={"adk_request_credential": answers})
                if rng.random() < 0.5
                else UserAgents(),
                terminate_when=TerminateWhen(max_turns=3, max_duration=30, max_model_calls=30),
            )
        )

    cases = cases[half * len(cases) // 2 : (half + 1) * len(cases) // 2]  # all from one seed
    suite = await run_eval_suite(cases, max_concurrency=16)

    assert len(suite.results) == len(cases)
    assert {r.status for r in suite.results} <= STATUSES  # every run ended with a status
    forbidden = [(case, key) for case, key in ledger.ran if key not in ledger.allowed[case]]
    assert not forbidden, forbidden[:10]
    # the fuzz reaches what it claims: bodies ran, runs were refused, and some passed
    assert ledger.ran
    assert any(r.status == "passed" for r in suite.results)
    refusals = [r for r in suite.results if r.error and "would run during eval" in r.error.message]
    assert refusals
    assert any("started by node" in r.error.message for r in refusals)
