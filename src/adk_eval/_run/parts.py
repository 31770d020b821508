"""`RunParts`: everything one run of one case needs, built complete in one place.

In the order they depend on one another: the run's gate at its suite's gateway
(the settings and pacer of its model calls, its cassette, the meter of its
judges' and simulated tools' calls), under which the rest is built, starting
with the models the run is certain to reach, so that a missing key is a setup
error before anything runs (and none is missing while a cassette answers every
call); the run's seed and clock, the record the interception writes and the
watch of its invariants, the meter of the user agents' calls, the user agents'
runner, and the system under test with its first main session, its tool policy
resolved before its interception plugin exists. Nothing is assigned into a part
afterwards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.apps import App
from google.adk.sessions import Session
from google.adk.workflow import Workflow

from .._agent_tree import check_model, code_labels, object_labels
from .._case import EvalCase
from .._sandbox._scope import RunScope
from .._seeds import new_seed
from .._state import flatten_state
from .._termination import UsageTap
from .._tools._answers import MockCalls
from .._tools._clock import CaseClock
from .._tools._deployed import UNOBSERVED, as_under_test, check_reachable, is_deployed
from .._tools._record import RunRecord
from .._tools._watch import Watch
from ..models._gateway._gate import Gateway, RunGate, gating
from ..models._gateway._settings import cache_roles
from ..models._gateway._usage import cost_of
from .contract import ContractWatch
from .system import System, SystemSpec
from .users import UserAgentRunner

__all__ = ["RunParts", "scope_of"]


def scope_of(case: EvalCase, boundary: object) -> RunScope:
    """The sandbox's view of a run of `case` (`boundary`: the code the run is called from)."""
    plugins = case.agent.plugins if isinstance(case.agent, App) else ()
    return RunScope(
        case.name,
        sandbox=case.sandbox,
        telemetry=case.telemetry,
        labels=code_labels(case.root_agent, plugins),
        objects=object_labels(case.root_agent, plugins),
        boundary=boundary,
    )


@dataclass(frozen=True)
class RunParts:
    """The parts of one run (see the module doc).

    Attributes:
        case: The case.
        seed: The seed injected faults are drawn from.
        attempt: Which repetition of the case this is.
        clock: The case clock; injected latency advances it.
        record: What the interception notes about the run.
        watch: The run's live invariants.
        gate: The run's model calls on their way to providers (pacing, retries,
            the cache, a cassette), and the usage of its judges' and simulated
            tools' (`RunGate.meter`).
        users: The user agents, on their shared session.
        contracts: The live check of the case's user contracts.
        system: The agent under test.
        session: Its main session.
    """

    case: EvalCase
    seed: int
    attempt: int
    clock: CaseClock
    record: RunRecord
    watch: Watch
    gate: RunGate
    users: UserAgentRunner
    contracts: ContractWatch
    system: System
    session: Session
    session_users: tuple[UserAgentRunner, ...] = ()

    @property
    def interim(self) -> frozenset[str]:
        """Long-running calls whose own answer is interim: a user agent gives the final one.

        A deployed agent's are the calls its user agents answer: it relays each
        call with its own interim answer, then waits (A2A ``input-required``).
        """
        if is_deployed(self.system.root_agent):
            return self.system.policy.interim | frozenset(self.case.user_agents.tools)
        return self.system.policy.interim

    @property
    def lacks(self) -> frozenset[str]:
        """What the trace does not show (a deployed agent's tools, state, usage)."""
        return UNOBSERVED if is_deployed(self.system.root_agent) else frozenset()

    @classmethod
    async def build(
        cls, case: EvalCase, *, seed: int | None, attempt: int, gateway: Gateway
    ) -> RunParts:
        """The parts of a run of `case`, its model calls through `gateway`.

        Raises:
            EvalSetupError: A model the run is certain to reach cannot run here, a
                simulator's model has no key, or the tool mocks do not fit the tree.
        """
        roles = cache_roles(case.cache) if case.cache is not None else None
        gate = gateway.gate(case.name, attempt, cache=roles)
        with gating(gate):
            return await cls._build(case, seed if seed is not None else new_seed(), attempt, gate)

    @classmethod
    async def _build(cls, case: EvalCase, seed: int, attempt: int, gate: RunGate) -> RunParts:
        agent = case.agent_under_test
        _check_models(case, agent.root_agent if isinstance(agent, App) else agent)
        root = case.root_agent
        if isinstance(root, BaseAgent) and is_deployed(root):  # a bad URL, a server down: one line
            card = await check_reachable(root, case=case.name)
            agent = as_under_test(agent, card)  # named after its card
        case = _knowing_the_agent(case, agent)
        clock = CaseClock(case.resolve_clock())
        record = RunRecord()
        watch = Watch.of(case.live_invariants, flatten_state(case.initial_state))
        spending = UsageTap(cost_of, name="adk_eval_user_usage")  # the user agents'
        contracts = ContractWatch.of(case)
        users = UserAgentRunner(case.user_agents, case=case.name, plugins=[spending])
        session_users = tuple(
            UserAgentRunner(one.user_agents or case.user_agents, case=case.name, plugins=[spending])
            for one in case.sessions
        )
        system, session = await System.start(
            _spec(case, agent),
            case.initial_state,
            record=record,
            watch=watch,
            mock_calls=MockCalls(seed, attempt, clock),
            spenders=(spending, gate.meter),
        )
        return cls(
            case,
            seed,
            attempt,
            clock,
            record,
            watch,
            gate,
            users,
            contracts,
            system,
            session,
            session_users,
        )


def _knowing_the_agent(case: EvalCase, agent: BaseAgent | App | Workflow) -> EvalCase:
    """`case` with the agent under test given to each metric that reads it.

    A metric reads it when it has ``for_agent(agent)`` (`claimed_actions`: its
    tools' descriptions). The case itself is left unchanged.
    """

    def reads(metric: Any) -> bool:
        return callable(getattr(metric, "for_agent", None))

    def given(metrics: Sequence[Any]) -> list[Any]:
        return [metric.for_agent(agent) if reads(metric) else metric for metric in metrics]

    every = [*case.metrics, *case.invariants, *(m for one in case.sessions for m in one.metrics)]
    if not any(reads(metric) for metric in every):
        return case
    return dataclasses.replace(
        case,
        metrics=given(case.metrics),
        invariants=given(case.invariants),
        sessions=[dataclasses.replace(one, metrics=given(one.metrics)) for one in case.sessions],
    )


def _spec(case: EvalCase, agent: BaseAgent | App | Workflow) -> SystemSpec:
    limits = case.terminate_when
    root = agent.root_agent if isinstance(agent, App) else agent
    remote_mocks, yielding = case.remote_mocks, tuple(case.user_agents.tools)
    if isinstance(root, BaseAgent) and is_deployed(root):  # runs for real; it has what yields
        remote_mocks, yielding = {**remote_mocks, root.name: root}, ()
    return SystemSpec(
        agent,
        case.tool_mocks,
        case.node_mocks,
        yielding,
        case.unmocked_simulator,
        max_model_calls=limits.max_model_calls,
        budget=limits.budget,
        case=case.name,
        models=case.models,
        memory_service=case.memory_service,
        remote_mocks=remote_mocks,
    )


def _check_models(case: EvalCase, root: object) -> None:
    """The models a run of `case` is certain to reach, checked before anything runs."""
    if isinstance(root, BaseAgent):
        check_model(root, case=case.name)
    if case.first_message is None and case.user_agents.loop is not None and not case.sessions:
        check_model(case.user_agents.loop, case=case.name)  # it opens the conversation
    for one in case.sessions:  # the loop user agents that open a session
        loop = (one.user_agents or case.user_agents).loop
        if one.first_message is None and loop is not None:
            check_model(loop, case=case.name)
    for mock in case.simulators():  # a simulator's model without its key: a setup error
        assert mock.simulator is not None
        mock.simulator.llm()
