"""Seeded fuzzing of agent trees: nothing neither mocked nor provided ever runs, every run ends.

Each tree mixes roots (LlmAgent, Sequential, Parallel, Loop, a custom agent), sub-agents
with transfers, AgentTools up to three deep, AgentTool subclasses with their own side
effects, toolsets, tools sharing one name, and agents with a code executor that a
custom agent runs without listing them. Each case mocks some tools and provides
others; the models call a random mix of every tool they have.
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.code_executors import UnsafeLocalCodeExecutor
from google.adk.events import Event
from google.adk.tools import AgentTool, BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext

from adk_eval import EvalCase, TerminateWhen, ToolMock, run_eval_suite
from adk_eval.testing import ScriptedLlm, tool_call

TREES = 320
STATUSES = {"passed", "failed", "error", "terminated"}

pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow")


class Ledger:
    """Which real tool bodies ran, and which of them the case allowed."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []  # (case, tool key)
        self.allowed: dict[str, set[str]] = {}

    def tool(self, case: str, key: str, name: str) -> FunctionTool:
        def body(value: str = "") -> dict:
            self.ran.append((case, key))
            return {"ran": key}

        body.__name__ = name
        body.__doc__ = f"Tool {name}."
        return FunctionTool(body)


class SideEffectAgentTool(AgentTool):
    """An AgentTool subclass whose own run has a side effect."""

    ledger: Any = None
    key: str = ""
    case: str = ""

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        self.ledger.ran.append((self.case, self.key))
        return await super().run_async(args=args, tool_context=tool_context)


class Toolset(BaseToolset):
    """A toolset that hands out its tools late (at request time)."""

    def __init__(self, tools: list[BaseTool]) -> None:
        super().__init__()
        self._tools = tools

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return list(self._tools)


class Runner(BaseAgent):
    """A custom agent that runs helpers it does not list in `sub_agents`."""

    helpers: list[Any] = []  # noqa: RUF012 - a pydantic field (copied per instance)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for helper in self.helpers:
            async for event in helper.run_async(ctx):
                yield event


class TreeBuilder:
    """Builds one random tree, its mocks and what it allows to run."""

    def __init__(self, rng: random.Random, ledger: Ledger, case: str) -> None:
        self.rng, self.ledger, self.case = rng, ledger, case
        self.count = 0
        self.mocks: dict[str, Any] = {}
        self.allowed: set[str] = set()
        self.names: list[str] = []

    def _name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def _function_tool(self) -> BaseTool:
        # a shared name now and then: two different tools called alike
        name = self.rng.choice(self.names) if self.names and self.rng.random() < 0.2 else None
        name = name or self._name("tool_")
        self.names.append(name)
        key = self._name("key_")
        tool = self.ledger.tool(self.case, key, name)
        fate = self.rng.random()
        if fate < 0.35 and name not in self.mocks:
            self.mocks[name] = ToolMock.returning({"mocked": name})
        elif fate < 0.55 and name not in self.mocks:
            self.mocks[name] = tool  # provided: this exact tool may run
            self.allowed.add(key)
        return tool

    def agent(self, depth: int) -> LlmAgent:
        tools: list[Any] = [self._function_tool() for _ in range(self.rng.randint(0, 3))]
        if depth < 3 and self.rng.random() < 0.4:
            inner = self.agent(depth + 1)
            if self.rng.random() < 0.3:
                noisy = SideEffectAgentTool(agent=inner)
                noisy.ledger, noisy.key, noisy.case = self.ledger, self._name("key_"), self.case
                tools.append(noisy)
            else:
                tools.append(AgentTool(agent=inner))
        if self.rng.random() < 0.2:
            tools.append(Toolset([self._function_tool()]))
        subs = [self.agent(depth + 1) for _ in range(self.rng.randint(0, 2))] if depth < 2 else []
        name = self._name("agent_")
        callable_names = [t.name for t in tools if isinstance(t, BaseTool)] + [
            t._tools[0].name for t in tools if isinstance(t, Toolset)
        ]
        steps: list[Any] = [
            tool_call(n, {"request": "x"} if "agent_" in n else {"value": "v"})
            for n in self.rng.sample(callable_names, k=min(len(callable_names), 2))
        ]
        if subs and self.rng.random() < 0.5:
            steps.append(tool_call("transfer_to_agent", {"agent_name": subs[0].name}))
        steps.append(f"{name} is done")
        return LlmAgent(
            name=name,
            model=ScriptedLlm(steps + ["again"] * 4),
            tools=tools,
            sub_agents=subs,
        )

    def hidden_coder(self) -> LlmAgent:
        code = f"```python\nopen('/tmp/adk_eval_fuzz_{self.case}', 'w').write('ran')\n```"
        return LlmAgent(
            name=self._name("coder_"),
            model=ScriptedLlm([code, "coded"]),
            code_executor=UnsafeLocalCodeExecutor(),
        )

    def root(self) -> BaseAgent:
        kind = self.rng.choice(["llm", "sequential", "parallel", "loop", "custom"])
        if kind == "llm":
            return self.agent(0)
        if kind == "custom":
            helpers: list[Any] = [self.agent(1)]
            if self.rng.random() < 0.5:
                helpers.insert(self.rng.randint(0, 1), self.hidden_coder())
            # the set-up walk cannot see the helpers, so the case names none of their tools:
            # everything they call must be refused at run time
            self.mocks.clear()
            self.allowed.clear()
            return Runner(name=self._name("custom_"), helpers=helpers)
        subs = [self.agent(1) for _ in range(self.rng.randint(1, 3))]
        if kind == "sequential":
            return SequentialAgent(name=self._name("seq_"), sub_agents=subs)
        if kind == "parallel":
            return ParallelAgent(name=self._name("par_"), sub_agents=subs)
        return LoopAgent(name=self._name("loop_"), sub_agents=subs, max_iterations=1)


@pytest.mark.slow  # a few seconds of processes: make test runs it
@pytest.mark.parametrize("half", [0, 1])  # the same cases, in two halves that run apart
async def test_random_trees_never_run_what_is_neither_mocked_nor_provided(tmp_path, half):
    import pathlib

    rng = random.Random(20261123)
    ledger = Ledger()
    cases = []
    for index in range(TREES):
        name = f"tree{index}"
        builder = TreeBuilder(rng, ledger, name)
        root = builder.root()
        ledger.allowed[name] = builder.allowed
        cases.append(
            EvalCase(
                name=name,
                agent=root,
                first_message="go",
                tool_mocks=builder.mocks,
                terminate_when=TerminateWhen(max_turns=1, max_duration=30, max_model_calls=20),
            )
        )

    cases = cases[half * len(cases) // 2 : (half + 1) * len(cases) // 2]  # all from one seed
    suite = await run_eval_suite(cases, max_concurrency=16)

    assert len(suite.results) == len(cases)
    assert {r.status for r in suite.results} <= STATUSES  # every run ended with a status
    forbidden = [(case, key) for case, key in ledger.ran if key not in ledger.allowed[case]]
    assert forbidden == []
    executed = [p.name for p in pathlib.Path("/tmp").glob("adk_eval_fuzz_tree*")]  # noqa: ASYNC240
    assert executed == []  # no hidden code executor ran the model's code
    statuses = {s: sum(r.status == s for r in suite.results) for s in STATUSES}
    assert statuses["error"] > 0  # refusals were exercised
    hidden = sum("has a code executor" in r.error.message for r in suite.results if r.error)
    assert hidden > 0  # and hidden code executors
    assert statuses["passed"] > 0  # and clean runs
