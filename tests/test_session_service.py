"""EvalSessionService: ADK's in-memory semantics without the copies, proven side by side.

Two kinds of proof:

* the service itself: the same calls on `InMemorySessionService` and on
  `EvalSessionService` give the same sessions, states and errors;
* every agent shape the suite already has (the clinician example, seeded random
  trees with sub-agents, transfers and AgentTools three deep, workflow and custom
  roots, a long-running tool, a tool confirmation, a resumable App with a plugin
  and callbacks, state changes from user-agent tools) runs once on each service,
  and the events (authors, contents, actions, state deltas) and final states
  are compared one by one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event, EventActions
from google.adk.plugins import BasePlugin
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools import AgentTool, ToolContext

import adk_eval._run.system
import adk_eval._run.users
from adk_eval import (
    STOP,
    EvalCase,
    EvalResult,
    EvalSessionService,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval,
    with_state_change,
)
from adk_eval.testing import ScriptedLlm, tool_call, user_event

from ._tools.test_fuzz_trees import Ledger, TreeBuilder
from ._tools.test_nodes import case as workflow_case
from .goldens.test_replay_yields import TRANSFER_MOCK, banker, hitl_case

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*is deprecated in favor of Workflow"),
    pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL.*ResumabilityConfig"),
]


# ---------------------------------------------------------------- the service


def delta_event(delta: dict[str, Any], event_id: str, timestamp: float) -> Event:
    return Event(
        id=event_id,
        author="agent",
        invocation_id="inv",
        timestamp=timestamp,
        actions=EventActions(state_delta=dict(delta)),
    )


async def script(service) -> list[Any]:
    """The same calls on either service; what each returns, in a comparable form."""
    seen: list[Any] = []

    def view(session) -> Any:
        if session is None:
            return None
        return (session.id, dict(session.state), [e.id for e in session.events])

    first = await service.create_session(
        app_name="app",
        user_id="u",
        session_id="s1",
        state={"k": 1, "app:a": 1, "user:b": 1, "temp:t": 1, "nested": {"x": [1]}},
    )
    seen.append(view(first))
    other = await service.create_session(app_name="app", user_id="u", session_id="s2")
    seen.append(view(other))  # app: and user: state is shared with it
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name="app", user_id="u", session_id="s1")

    live = await service.get_session(app_name="app", user_id="u", session_id="s1")
    live.state["nested"]["x"].append(2)  # a change in place through a copy stays there
    for index, delta in enumerate(
        [{"k": 2, "temp:t": 2}, {"app:a": 2, "user:b": 2}, {"new": "v"}, {}]
    ):
        event = delta_event(delta, f"e{index}", 100.0 + index)
        await service.append_event(live, event)
        seen.append(dict(live.state))  # temp: stays in the copy of the invocation
    await service.append_event(live, live.events[-1])  # an equal re-delivery is kept once
    await service.append_event(live, Event(author="x", partial=True, invocation_id="p"))
    said = user_event("my card is 4111", invocation_id="said")
    said.id, said.timestamp = "said", 104.0
    await service.append_event(live, said)

    # an agent redacts an earlier turn in place, in the session it was handed
    handed = await service.get_session(app_name="app", user_id="u", session_id="s1")
    handed.events[-1].content.parts[0].text = "my card is ****"
    handed.events[0].actions.state_delta["k"] = "redacted"
    seen.append([e.content.parts[0].text for e in handed.events if e.content])
    again = await service.get_session(app_name="app", user_id="u", session_id="s1")
    seen.append([e.content.parts[0].text for e in again.events if e.content])  # the original
    seen.append(again.events[0].actions.state_delta)

    for config in (
        None,
        GetSessionConfig(num_recent_events=2),
        GetSessionConfig(num_recent_events=0),
        GetSessionConfig(after_timestamp=101.5),
    ):
        fetched = await service.get_session(
            app_name="app", user_id="u", session_id="s1", config=config
        )
        seen.append(view(fetched))
        seen.append(fetched.last_update_time)
    seen.append(view(await service.get_session(app_name="app", user_id="u", session_id="s2")))
    seen.append(await service.get_session(app_name="app", user_id="u", session_id="nope"))
    seen.append(await service.get_user_state(app_name="app", user_id="u"))
    listed = await service.list_sessions(app_name="app")
    seen.append([(s.id, s.events, dict(s.state)) for s in listed.sessions])
    seen.append(len((await service.list_sessions(app_name="app", user_id="other")).sessions))

    stale = await service.get_session(app_name="app", user_id="u", session_id="s2")
    await service.delete_session(app_name="app", user_id="u", session_id="s2")
    with pytest.raises(SessionNotFoundError):
        await service.append_event(stale, delta_event({"k": 9}, "late", 200.0))
    seen.append(view(await service.get_session(app_name="app", user_id="u", session_id="s2")))
    return seen


async def test_the_service_answers_every_call_as_adks_in_memory_service_does():
    assert await script(EvalSessionService()) == await script(InMemorySessionService())


async def test_an_event_is_copied_once_while_unchanged_and_a_copy_never_reaches_storage():
    service = EvalSessionService()
    session = await service.create_session(app_name="app", user_id="u", state={"k": [1]})
    await service.append_event(session, user_event("hi"))
    first = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    second = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert first.events[0] is second.events[0]  # the same record: no copy of events
    assert first.events is not second.events
    first.events.append(user_event("stray"))
    first.state["k"].append(2)
    again = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert len(again.events) == 1
    assert again.state == {"k": [1]}


# ------------------------------------------------------- the harness, twice


@pytest.fixture
def on_adks_service(monkeypatch):
    """Runs the harness on ADK's InMemorySessionService inside the `with` block."""

    class Switch:
        def __enter__(self) -> None:
            monkeypatch.setattr(adk_eval._run.system, "EvalSessionService", InMemorySessionService)
            monkeypatch.setattr(adk_eval._run.users, "EvalSessionService", InMemorySessionService)

        def __exit__(self, *exc: object) -> None:
            monkeypatch.undo()

    return Switch()


_GENERATED = re.compile(
    r"(adk-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|e-[0-9a-f-]{36}"
    r"|adk_eval-[0-9a-f]{8,12}"
)


def comparable(result: EvalResult) -> list[Any]:
    """The run with generated ids and times replaced by their order of appearance."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"<id{len(names)}>")

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {_GENERATED.sub(rename, str(k)): clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, str):
            return _GENERATED.sub(rename, value)
        return value

    events = [
        clean(event.model_dump(mode="json", exclude_none=True, exclude={"id", "timestamp"}))
        for event in result.events
    ]
    return [
        result.status,
        result.error.message if result.error else None,
        events,
        clean(result.final_state),
        result.turns,
        {name: (m.passed, m.value) for name, m in result.metrics.items()},
    ]


async def assert_same_on_both(build: Callable[[], EvalCase], switch) -> EvalResult:
    ours = await run_eval(build())
    with switch:
        theirs = await run_eval(build())
    assert comparable(ours) == comparable(theirs)
    return ours


def clinician_cases() -> list[Callable[[], EvalCase]]:
    from examples.clinician import evals

    return [lambda case=case: case for case in evals.CASES]


def random_tree(seed: int) -> Callable[[], EvalCase]:
    def build() -> EvalCase:
        rng = random.Random(seed)
        builder = TreeBuilder(rng, Ledger(), f"tree{seed}")
        root = builder.root()
        return EvalCase(
            name=f"tree{seed}",
            agent=root,
            tool_mocks=builder.mocks,
            first_message="go",
            terminate_when=TerminateWhen(max_turns=2, max_model_calls=40),
        )

    return build


def confirmation_case() -> EvalCase:
    return EvalCase(
        name="confirm",
        agent=banker(),
        tool_mocks=TRANSFER_MOCK,
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="client", script=["Now 900 please"]),
            tools={"adk_request_confirmation": ScriptedUserAgent(name="manager", script=[True])},
        ),
        first_message="Send 100",
    )


class Notes(BasePlugin):
    """An App's own plugin that writes state before every model call."""

    def __init__(self) -> None:
        super().__init__(name="notes")

    async def before_model_callback(self, *, callback_context, llm_request):
        calls = callback_context.state.get("model_calls", 0)
        callback_context.state["model_calls"] = calls + 1
        callback_context.state["temp:scratch"] = calls


def look_up(topic: str, tool_context: ToolContext) -> dict:
    """Looks a topic up."""
    raise AssertionError("mocked")


def resumable_app_case() -> EvalCase:
    """A resumable App with a plugin, callbacks, a transfer, AgentTools two deep and state."""
    deepest = LlmAgent(
        name="deepest",
        model=ScriptedLlm([tool_call("look_up", {"topic": "deep"}), "deep answer"]),
        tools=[look_up],
    )
    middle = LlmAgent(
        name="middle",
        model=ScriptedLlm([tool_call("deepest", {"request": "dig"}), "middle answer"]),
        tools=[AgentTool(agent=deepest)],
    )
    specialist = LlmAgent(
        name="specialist",
        model=ScriptedLlm(
            [tool_call("middle", {"request": "ask"}), "specialist done", "again", "again"]
        ),
        tools=[AgentTool(agent=middle)],
        output_key="specialist_said",
    )

    def stamp(callback_context):
        callback_context.state["user:visits"] = callback_context.state.get("user:visits", 0) + 1

    front = LlmAgent(
        name="front",
        model=ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": "specialist"})]),
        sub_agents=[specialist],
        before_agent_callback=stamp,
    )
    app = App(
        name="resumable",
        root_agent=front,
        plugins=[Notes()],
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    customer = ScriptedUserAgent(
        name="customer",
        script=[
            with_state_change("thanks", {"app": {"mood": "happy"}, "session": {"rated": 5}}),
            "STOP",
        ],
    )
    return EvalCase(
        name="resumable",
        agent=app,
        tool_mocks={"look_up": ToolMock(lambda args, ctx: {"found": args["topic"]})},
        user_agents=UserAgents(loop=customer),
        initial_state={"app": {"tier": "gold"}, "user": {"name": "Ana"}},
        first_message="Help me",
    )


def redacting_case() -> EvalCase:
    """An agent whose callback redacts card numbers of earlier turns in the session it is handed."""

    def redact(callback_context, llm_request):
        now = callback_context.invocation_id
        for event in callback_context.session.events:
            if event.invocation_id != now and event.content and event.content.parts:
                for part in event.content.parts:
                    if part.text:
                        part.text = part.text.replace("4111", "****")

    agent = LlmAgent(
        name="careful",
        model=ScriptedLlm(["noted", "noted again", "done"]),
        before_model_callback=redact,
    )
    customer = ScriptedUserAgent(name="customer", script=["and 4111 again", STOP])
    return EvalCase(
        name="redacts",
        agent=agent,
        user_agents=UserAgents(loop=customer),
        first_message="my card is 4111",
    )


async def test_an_agent_that_redacts_an_earlier_turn_leaves_the_stored_trace_as_adks(
    on_adks_service,
):
    ours = await assert_same_on_both(redacting_case, on_adks_service)
    said = [m.text for m in ours.trace.select("user_message")]
    assert said == ["my card is 4111", "and 4111 again"]  # the stored events keep the original


SHAPES: list[tuple[str, Callable[[], EvalCase]]] = [
    ("long-running tool", hitl_case),
    ("tool confirmation", confirmation_case),
    ("workflow", workflow_case),
    ("resumable app", resumable_app_case),
    *((f"tree {seed}", random_tree(seed)) for seed in range(40)),
]


@pytest.mark.parametrize(("shape", "build"), SHAPES, ids=[shape for shape, _ in SHAPES])
async def test_every_agent_shape_runs_the_same_on_both_services(shape, build, on_adks_service):
    await assert_same_on_both(build, on_adks_service)


async def test_the_examples_run_the_same_on_both_services(on_adks_service):
    results = [await assert_same_on_both(b, on_adks_service) for b in clinician_cases()]
    assert len(results) == 6
    assert {r.status for r in results} <= {"passed", "failed"}


async def test_the_resumable_app_shape_exercises_what_it_claims(on_adks_service):
    result = await assert_same_on_both(resumable_app_case, on_adks_service)
    assert result.status == "passed", result.explain()
    assert [c.name for c in result.trace.tool_calls if c.name != "transfer_to_agent"] == ["middle"]
    assert result.final_state["session"]["rated"] == 5
    assert result.final_state["app"]["mood"] == "happy"
    assert result.final_state["user"]["visits"] >= 1
    assert "temp:scratch" not in result.final_state.get("session", {})
