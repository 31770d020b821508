"""Sessions rebuilt from the spans of real ADK runs, compared with what ADK's store holds.

Each conversation runs through ADK's `Runner` on ADK's `DatabaseSessionService`
(SQLite), the models played by `ScriptedLlm`; its spans go through the real OTLP
protobuf encoder and adk-eval's decoder. The rebuilt session's events are
compared field by field with the stored ones: equal where the spans carry the
fact, and the known differences listed (`KNOWN`), so that a change shows up.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService, Session
from google.adk.tools import LongRunningFunctionTool
from google.adk.tools.agent_tool import AgentTool
from google.genai import types
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from adk_eval._sources._spans._otlp import spans_from_proto
from adk_eval._sources._spans._rebuild import rebuild
from adk_eval._sources._spans._span import Span, conversation_of
from adk_eval.testing import ScriptedLlm, tool_call

APP, USER = "app", "ann"


def lookup(key: str) -> dict:
    """Looks an order up."""
    return {"status": "shipped", "key": key}


def ask_manager(question: str) -> dict:
    """Asks a manager; the answer comes later."""
    return {"status": "pending", "question": question}


def boom(key: str) -> dict:
    """Always fails."""
    raise RuntimeError("the tool broke")


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def _run(agent: LlmAgent, db: Path, messages: list[Any]) -> Session:
    service = DatabaseSessionService(f"sqlite+aiosqlite:///{db}")
    runner = Runner(agent=agent, app_name=APP, session_service=service)
    try:
        session = await service.create_session(app_name=APP, user_id=USER)
        for message in messages:
            if callable(message):
                message = message(
                    await service.get_session(app_name=APP, user_id=USER, session_id=session.id)
                )
            try:
                async for _ in runner.run_async(
                    user_id=USER, session_id=session.id, new_message=message
                ):
                    pass
            except RuntimeError:
                pass
        stored = await service.get_session(app_name=APP, user_id=USER, session_id=session.id)
        assert stored is not None
        return stored
    finally:
        await service.close()


def _decoded(capture: Any) -> list[Span]:
    return spans_from_proto(encode_spans(capture.spans()).SerializeToString())


def _run_and_rebuild(capture: Any, tmp_path: Path, agent: LlmAgent, messages: list[Any]):
    stored = asyncio.run(_run(agent, tmp_path / "s.db", messages))
    spans = _decoded(capture)
    mine = [
        s
        for s in spans
        if s.trace_id in {t.trace_id for t in spans if conversation_of(t) == stored.id}
    ]
    return stored, rebuild(stored.id, mine)


def _parts(event: Event) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for part in (event.content.parts or []) if event.content else []:
        if part.text is not None:
            out.append(("text", part.text))
        if part.function_call:
            call = part.function_call
            out.append(("call", call.name, call.args, call.id))
        if part.function_response:
            reply = part.function_response
            out.append(("response", reply.name, reply.response, reply.id))
    return out


def _usage(event: Event) -> tuple[Any, ...] | None:
    usage = event.usage_metadata
    if usage is None:
        return None
    return (usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count)


FIELDS = {
    "author": lambda e: e.author,
    "invocation_id": lambda e: e.invocation_id,
    "id": lambda e: e.id,
    "branch": lambda e: e.branch,
    "parts": _parts,
    "transfer": lambda e: e.actions.transfer_to_agent,
    "usage": _usage,
    "error": lambda e: (e.error_code, e.error_message),
    "long_running": lambda e: sorted(e.long_running_tool_ids or []),
}


def differences(stored: Session, rebuilt: Session) -> set[tuple[int, str]]:
    """(event index, field) pairs where the rebuilt session differs from the store."""
    assert len(rebuilt.events) == len(stored.events), (
        [(e.author, _parts(e)) for e in rebuilt.events],
        [(e.author, _parts(e)) for e in stored.events],
    )
    found = set()
    for index, (want, got) in enumerate(zip(stored.events, rebuilt.events, strict=True)):
        for name, read in FIELDS.items():
            if read(want) != read(got):
                found.add((index, name))
    return found


@pytest.fixture
def content_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")


def _user_ids(stored: Session) -> set[tuple[int, str]]:
    """User events: ADK's own event id is in no span."""
    return {(i, "id") for i, e in enumerate(stored.events) if e.author == "user"}


def test_plain_text_turns_match_but_for_user_event_ids(capture_spans, tmp_path, content_on):
    agent = LlmAgent(name="desk", model=ScriptedLlm(["Hello.", "Bye."]))
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("hi"), _user("bye")])
    assert [e.author for e in stored.events] == ["user", "desk", "user", "desk"]
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    assert rebuilt.lacks == {"state"}
    assert rebuilt.session.id == stored.id
    assert rebuilt.session.state == {}
    assert rebuilt.session.user_id == ""
    assert rebuilt.session.app_name == ""


def test_parallel_calls_become_one_merged_response_event(capture_spans, tmp_path, content_on):
    steps = [[tool_call("lookup", {"key": "A1"}), tool_call("lookup", {"key": "A2"})], "Done."]
    agent = LlmAgent(name="desk", model=ScriptedLlm(steps), tools=[lookup])
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("two")])
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    merged = rebuilt.session.events[2]
    assert [p[2] for p in _parts(merged)] == [
        {"status": "shipped", "key": "A1"},
        {"status": "shipped", "key": "A2"},
    ]


def test_transfer_to_a_sub_agent(capture_spans, tmp_path, content_on):
    billing = LlmAgent(name="billing", model=ScriptedLlm(["Refund issued."]))
    steps = [tool_call("transfer_to_agent", {"agent_name": "billing"})]
    agent = LlmAgent(name="desk", model=ScriptedLlm(steps), sub_agents=[billing])
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("refund")])
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    assert rebuilt.session.events[2].actions.transfer_to_agent == "billing"
    assert rebuilt.session.events[3].author == "billing"


def test_agent_tool_two_deep_keeps_only_the_outer_call(capture_spans, tmp_path, content_on):
    finder = LlmAgent(
        name="finder",
        model=ScriptedLlm([tool_call("lookup", {"key": "B"}), "B shipped."]),
        tools=[lookup],
    )
    researcher = LlmAgent(
        name="researcher",
        model=ScriptedLlm([tool_call("finder", {"request": "B"}), "Done: B."]),
        tools=[AgentTool(agent=finder)],
    )
    agent = LlmAgent(
        name="desk",
        model=ScriptedLlm([tool_call("researcher", {"request": "B"}), "B shipped."]),
        tools=[AgentTool(agent=researcher)],
    )
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("deep")])
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    assert {e.author for e in rebuilt.session.events} == {"user", "desk"}
    assert any("other sessions" in n for n in rebuilt.notes) or len(rebuilt.session.events) == 4


def _answer(session: Session) -> types.Content:
    call = next(
        c for e in session.events for c in e.get_function_calls() if c.name == "ask_manager"
    )
    reply = types.FunctionResponse(id=call.id, name=call.name, response={"approved": True})
    return types.Content(role="user", parts=[types.Part(function_response=reply)])


def test_long_running_tool_answered_later(capture_spans, tmp_path, content_on):
    steps = [tool_call("ask_manager", {"question": "refund?"}), "Asked.", "Approved."]
    agent = LlmAgent(
        name="desk", model=ScriptedLlm(steps), tools=[LongRunningFunctionTool(ask_manager)]
    )
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("refund"), _answer])
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    later = rebuilt.session.events[4]
    assert later.author == "user"
    assert _parts(later)[0][2] == {"approved": True}
    assert rebuilt.session.events[1].long_running_tool_ids == stored.events[1].long_running_tool_ids


def test_a_tool_that_raises_leaves_the_error_event(capture_spans, tmp_path, content_on):
    agent = LlmAgent(
        name="desk", model=ScriptedLlm([tool_call("boom", {"key": "1"}), "x"]), tools=[boom]
    )
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("go")])
    assert stored.events[-1].error_code == "RuntimeError"
    # the failing call has no id on its span ("<not specified>"); the error event id is ADK's
    assert differences(stored, rebuilt.session) == _user_ids(stored) | {(1, "parts"), (2, "id")}
    assert _parts(rebuilt.session.events[1]) == [("call", "boom", {"key": "1"}, None)]


def test_content_capture_off_keeps_structure_not_words(capture_spans, tmp_path):
    steps = [[tool_call("lookup", {"key": "A1"}), tool_call("lookup", {"key": "A2"})], "Done."]
    agent = LlmAgent(name="desk", model=ScriptedLlm(steps), tools=[lookup])
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("two")])
    assert rebuilt.lacks == {"state", "content"}
    assert differences(stored, rebuilt.session) == _user_ids(stored) | {
        (0, "parts"),
        (1, "parts"),
        (2, "parts"),
        (3, "parts"),
    }
    calls = _parts(rebuilt.session.events[1])
    assert [(c[1], c[3]) for c in calls] == [(c[1], c[3]) for c in _parts(stored.events[1])]


def test_schema_1_with_legacy_content_matches_too(capture_spans, tmp_path, monkeypatch):
    monkeypatch.setenv("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", "1")
    steps = [[tool_call("lookup", {"key": "A1"}), tool_call("lookup", {"key": "A2"})], "Done."]
    agent = LlmAgent(name="desk", model=ScriptedLlm(steps), tools=[lookup])
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("two")])
    assert any(s.name == "call_llm" for s in _decoded(capture_spans))
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    assert rebuilt.lacks == {"state"}


def test_duplicated_and_orphaned_spans(capture_spans, tmp_path, content_on):
    agent = LlmAgent(name="desk", model=ScriptedLlm(["Hello."]))
    stored = asyncio.run(_run(agent, tmp_path / "s.db", [_user("hi")]))
    spans = _decoded(capture_spans)
    root = next(s for s in spans if s.parent_id is None)
    kept = [s for s in spans if s is not root] + spans  # root lost once, everything twice
    kept = [s for s in kept if s.span_id != root.span_id]
    rebuilt = rebuild(stored.id, kept)
    assert any("duplicated" in n for n in rebuilt.notes)
    assert any("without their parent" in n for n in rebuilt.notes)
    assert [e.author for e in rebuilt.session.events] == ["user", "desk"]


def _all_fields(stored: Session, rebuilt: Session) -> set[tuple[str, str]]:
    found = set()
    for want, got in zip(stored.events, rebuilt.events, strict=True):
        left, right = want.model_dump(), got.model_dump()
        found |= {(want.author, k) for k in left if left[k] != right[k]}
    return found


def test_every_event_field_that_differs(capture_spans, tmp_path, content_on):
    steps = [tool_call("lookup", {"key": "A1"}), "Done."]
    agent = LlmAgent(name="desk", model=ScriptedLlm(steps), tools=[lookup])
    stored, rebuilt = _run_and_rebuild(capture_spans, tmp_path, agent, [_user("one")])
    assert _all_fields(stored, rebuilt.session) == {
        ("user", "id"),  # ADK's user event id is on no span
        ("user", "timestamp"),  # span times, not the store's clock
        ("desk", "timestamp"),
        ("desk", "node_info"),  # ADK 2's node path is on no span
        ("desk", "model_version"),  # schema 2 has only the requested model
    }


def _oi(span_id: str, parent: str | None, start: int, **attributes: Any) -> Span:
    return Span(
        "a" * 32, span_id, parent, str(attributes.get("name", "x")), start, start + 1, attributes
    )


CALL = "llm.output_messages.0.message.tool_calls.0.tool_call"


def test_openinference_spans():
    spans = [
        _oi(
            "1" * 16,
            None,
            1,
            **{
                "openinference.span.kind": "AGENT",
                "agent.name": "desk",
                "session.id": "s1",
                "user.id": "ann",
            },
        ),
        _oi(
            "2" * 16,
            "1" * 16,
            2,
            **{
                "openinference.span.kind": "LLM",
                "session.id": "s1",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "where is A1?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup",
                f"{CALL}.function.arguments": '{"key": "A1"}',
                "llm.token_count.prompt": 10,
                "llm.token_count.completion": 3,
            },
        ),
        _oi(
            "3" * 16,
            "1" * 16,
            3,
            **{
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "input.value": '{"key": "A1"}',
                "output.value": '{"status": "shipped"}',
            },
        ),
        _oi(
            "4" * 16,
            "1" * 16,
            4,
            **{
                "openinference.span.kind": "LLM",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Shipped.",
            },
        ),
    ]
    rebuilt = rebuild("s1", spans)
    events = rebuilt.session.events
    assert [e.author for e in events] == ["user", "desk", "desk", "desk"]
    assert _parts(events[0]) == [("text", "where is A1?")]
    assert _parts(events[1]) == [("call", "lookup", {"key": "A1"}, "c1")]
    assert _parts(events[2]) == [("response", "lookup", {"status": "shipped"}, "c1")]
    assert _parts(events[3]) == [("text", "Shipped.")]
    assert _usage(events[1]) == (10, 3, 13)
    assert rebuilt.session.user_id == "ann"
    assert rebuilt.lacks == {"state"}


def delete_account(user: str) -> dict:
    """Deletes an account (mocked by nothing here: the spans only record the call)."""
    return {"deleted": user}


def _deleting_run(capture: Any, tmp_path: Path) -> tuple[Session, list[Span]]:
    steps = [tool_call("delete_account", {"user": "ann"}), "Done."]
    agent = LlmAgent(name="desk", model=ScriptedLlm(steps), tools=[delete_account])
    stored = asyncio.run(_run(agent, tmp_path / "s.db", [_user("delete me")]))
    return stored, _decoded(capture)


def _called(rebuilt: Any) -> list[str]:
    return [c.name or "" for e in rebuilt.session.events for c in e.get_function_calls()]


@pytest.mark.parametrize("parent", ["its own agent", "itself"])
def test_a_cycle_of_parents_is_broken_and_said(capture_spans, tmp_path, content_on, parent):
    stored, spans = _deleting_run(capture_spans, tmp_path)
    workflow = next(s for s in spans if s.name.startswith("invoke_workflow"))
    agent = next(s for s in spans if s.name == "invoke_agent desk")
    assert agent.parent_id == workflow.span_id
    looped = dataclasses.replace(
        workflow, parent_id=agent.span_id if parent == "its own agent" else workflow.span_id
    )
    rebuilt = rebuild(stored.id, [looped if s is workflow else s for s in spans])
    assert _called(rebuilt) == ["delete_account"]
    assert differences(stored, rebuilt.session) == _user_ids(stored)
    assert f"a cycle of parent ids broken at {workflow.name} (kept as a root)" in rebuilt.notes


def test_a_chain_of_3000_nested_spans_is_read_without_recursion(capture_spans, tmp_path):
    stored, spans = _deleting_run(capture_spans, tmp_path)
    workflow = next(s for s in spans if s.name.startswith("invoke_workflow"))
    trace, start = workflow.trace_id, workflow.start_ns
    chain = [  # an HTTP-like root naming no session, then 2,999 spans below it
        Span(trace, f"{n + 1:016x}", f"{n:016x}" if n else None, f"step {n}", start - 1, start)
        for n in range(3000)
    ]
    below = dataclasses.replace(workflow, parent_id=chain[-1].span_id)
    rebuilt = rebuild(stored.id, [*chain, *(below if s is workflow else s for s in spans)])
    assert _called(rebuilt) == ["delete_account"]
    assert [e.author for e in rebuilt.session.events] == [e.author for e in stored.events]
    oi = [
        _oi(f"{n + 1:016x}", f"{n:016x}" if n else None, n, **{"openinference.span.kind": "CHAIN"})
        for n in range(3000)
    ]
    oi.append(
        _oi(
            "f" * 16,
            oi[-1].span_id,
            3001,
            **{
                "openinference.span.kind": "LLM",
                "session.id": "s1",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "Deep.",
            },
        )
    )
    assert _parts(rebuild("s1", oi).session.events[-1]) == [("text", "Deep.")]
