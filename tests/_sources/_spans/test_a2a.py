"""One conversation across two services: an agent calling another over A2A, read from their spans.

Two real ADK agents: `root`, in the test's process on a plain ADK `Runner` as
production runs it, hands the conversation to `far`, a `RemoteA2aAgent` pointing
at a real ADK agent served with ``to_a2a()`` by uvicorn on 127.0.0.1 (its own
event loop and thread: nothing reaches it but the HTTP request). Both export
their spans through the real OpenTelemetry SDK to ADK's `SqliteSpanExporter`
file. Trace context crosses the hop the way the docs tell a user to set it up:
the caller's httpx client injects the W3C ``traceparent`` header with
OpenTelemetry's propagator, the served app extracts it (`TraceContext`); without
them the two services' spans are two traces.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.adk.telemetry.sqlite_span_exporter import SqliteSpanExporter
from google.genai import types

from adk_eval.metrics import event_count_metric, never_called, trajectory_match
from adk_eval.production import open_sessions, shadow_sessions
from adk_eval.production._score import score_sessions
from adk_eval.testing import ScriptedLlm, tool_call
from tests.shapes_support import remote_agent

from .a2a_app import far_agent, inject_trace_context, served
from .test_agreement import verdicts

METRICS = [
    event_count_metric("looked_up", "tool_call", lambda c: c.name == "lookup", lambda n: n == 1),
    event_count_metric(
        "far_answered",
        "agent_message",
        lambda m: m.author == "far" and "Shipped: B7" in (m.text or ""),
        lambda n: n == 1,
    ),
    trajectory_match(
        "asked_b7",
        [("transfer_to_agent", {"agent_name": "far"}), ("lookup", {"order": "B7"})],
        args="exact",
    ),
    never_called("lookup"),
]
"""Metrics over the remote agent's call, its words, its arguments; the last one fails."""


def root_agent(far) -> LlmAgent:
    """The caller: hands the conversation to `far` (remote or local), at each turn."""
    model = ScriptedLlm([tool_call("transfer_to_agent", {"agent_name": far.name})] * 2)
    return LlmAgent(name="root", model=model, sub_agents=[far])


@contextlib.contextmanager
def served_far(carry: bool) -> Iterator[str]:
    """`far` served with ``to_a2a()`` on 127.0.0.1; yields its agent card's URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = served(port, carry)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "far did not start"
        assert thread.is_alive(), "far did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/.well-known/agent-card.json"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


async def converse(agent: LlmAgent, turns: tuple[str, ...] = ("Where is B7?",)) -> str:
    """User turns through a plain ADK runner; returns the session id."""
    runner = InMemoryRunner(agent=agent, app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="bo")
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="bo", session_id=session.id, new_message=message):
            pass
    return session.id


async def across_services(
    capture_spans,
    spans: Path,
    carry: bool,
    turns: tuple[str, ...] = ("Where is B7?",),
    called: str = "far",
) -> str:
    """`root` calls the served `far` over A2A (as `called`), both tracing to `spans`.

    Returns:
        The caller's session id.
    """
    capture_spans.add(SqliteSpanExporter(db_path=str(spans)))
    hooks = {"request": [inject_trace_context]} if carry else {}
    with served_far(carry) as card:
        async with httpx.AsyncClient(event_hooks=hooks, timeout=30) as client:
            return await converse(root_agent(remote_agent(card, called, client)), turns)


async def read(spec: str):
    source = open_sessions(spec)
    await source.check()
    try:
        return await score_sessions(source, METRICS, include_open=True)
    finally:
        source.close()


@pytest.fixture(autouse=True)
def _content(monkeypatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")


def _shape(session) -> list[tuple[str, str]]:
    shape = []
    for event in session.events:
        for call in event.get_function_calls():
            shape.append((event.author, f"call {call.name}"))
        for response in event.get_function_responses():
            shape.append((event.author, f"response {response.name}"))
        text = "".join(p.text or "" for p in (event.content.parts or []) if event.content)
        if text:
            shape.append((event.author, text))
    return shape


async def test_two_services_joined_by_trace_context_read_as_one_conversation(
    capture_spans, tmp_path
):
    session_id = await across_services(capture_spans, tmp_path / "spans.db", carry=True)
    score = await read(f"adk-spans:{tmp_path / 'spans.db'}")

    (result,) = score.results
    assert result.name.rsplit("/", 1)[-1] == session_id
    events = result.trace.events
    assert _shape(result.trace) == [
        ("user", "Where is B7?"),
        ("root", "call transfer_to_agent"),
        ("root", "response transfer_to_agent"),
        ("far", "call lookup"),
        ("far", "response lookup"),
        ("far", "Shipped: B7 left today."),
    ]
    assert len({event.invocation_id for event in events}) == 1  # the caller's invocation
    assert not [note for note in score.notes if "A2A" in note or "remote" in note]


async def test_the_remote_agents_events_are_authored_by_the_agent_it_runs(capture_spans, tmp_path):
    """The caller names it `orders`; the service runs `far`: its events are `far`'s."""
    await across_services(capture_spans, tmp_path / "spans.db", True, called="orders")
    score = await read(f"adk-spans:{tmp_path / 'spans.db'}")

    (result,) = score.results
    assert [author for author, _ in _shape(result.trace)] == ["user", "root", "root"] + ["far"] * 3
    assert _shape(result.trace)[1:4] == [
        ("root", "call transfer_to_agent"),
        ("root", "response transfer_to_agent"),
        ("far", "call lookup"),
    ]
    assert result.trace.events[1].get_function_calls()[0].args == {"agent_name": "orders"}


async def test_a_second_turn_answered_by_the_remote_agent_stays_in_the_conversation(
    capture_spans, tmp_path
):
    turns = ("Where is B7?", "And now?")
    session_id = await across_services(capture_spans, tmp_path / "spans.db", True, turns)
    score = await read(f"adk-spans:{tmp_path / 'spans.db'}")

    (result,) = score.results
    assert result.name.rsplit("/", 1)[-1] == session_id
    shape = _shape(result.trace)
    second = shape.index(("user", "And now?"))
    assert shape[second + 1 :] == [
        ("root", "call transfer_to_agent"),
        ("root", "response transfer_to_agent"),
        ("far", "call lookup"),
        ("far", "response lookup"),
        ("far", "Shipped: B7 left today."),
    ]
    assert result.metrics["looked_up"].verdict == "fail"  # two lookups, where one is asked
    assert len({event.invocation_id for event in result.trace.events}) == 2  # one a turn


async def test_across_services_scores_as_the_same_conversation_in_one_service(
    capture_spans, tmp_path
):
    across = await across_services(capture_spans, tmp_path / "spans.db", carry=True)
    one = await converse(root_agent(far_agent()))  # `far` a local sub-agent
    score = await read(f"adk-spans:{tmp_path / 'spans.db'}")

    by_id = verdicts(score)
    assert sorted(by_id) == sorted([across, one])
    in_two, in_one = by_id[across], by_id[one]
    assert in_two == in_one
    assert {name: verdict for name, (verdict, _) in in_two.items()} == {
        "looked_up": "pass",
        "far_answered": "pass",
        "asked_b7": "pass",
        "never_called(lookup)": "fail",
    }
    traces = {result.name.rsplit("/", 1)[-1]: result.trace for result in score.results}
    assert _shape(traces[across]) == _shape(traces[one])


async def test_shadow_replays_the_remote_agents_call_on_its_recorded_answer(
    capture_spans, tmp_path
):
    await across_services(capture_spans, tmp_path / "spans.db", carry=True)
    (result,) = await shadow_sessions(
        open_sessions(f"adk-spans:{tmp_path / 'spans.db'}"),
        root_agent(far_agent()),
        metrics=METRICS[:3],
    )
    assert result.divergence is None, result.divergence
    assert result.outcome == "same"
    assert list(result.recorded_calls[0]) == [
        'transfer_to_agent{"agent_name": "far"}',
        'lookup{"order": "B7"}',
    ]
    assert result.new_calls == result.recorded_calls


async def test_without_trace_context_the_services_are_two_conversations_said_once(
    capture_spans, tmp_path
):
    session_id = await across_services(capture_spans, tmp_path / "spans.db", carry=False)
    score = await read(f"adk-spans:{tmp_path / 'spans.db'}")

    by_id = {result.name.rsplit("/", 1)[-1]: result for result in score.results}
    assert len(by_id) == 2
    caller = by_id.pop(session_id)
    (served,) = by_id.values()
    assert [author for author, _ in _shape(caller.trace)] == ["user", "root", "root"]
    assert ("far", "call lookup") in _shape(served.trace)
    joined = [note for note in score.notes if "not joined" in note]
    source = f"adk-spans:{tmp_path / 'spans.db'}"
    assert joined == [
        f"{source}: a call of remote agent `far` not joined to its remote side (no trace "
        "context, or the remote side's spans are not in this source): what the remote agent "
        "did is not in this conversation",
        f"{source}: a remote agent's invocation served over A2A not joined to its caller (no "
        "trace context): scored as a conversation of its own",
    ]


@pytest.mark.slow
async def test_two_processes_sending_to_one_collector_read_as_one_conversation(
    capture_spans, tmp_path
):
    """`far` in a process of its own (service `orders`), both services sending to `collect`."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from adk_eval._sources._spans._collector import SpanCollector

    from .test_agreement import _free_port

    port, spans = _free_port(), tmp_path / "traces.db"
    with SpanCollector(spans, port=0) as collector:
        endpoint = collector.endpoint + "/v1/traces"
        capture_spans.add(OTLPSpanExporter(endpoint=endpoint))
        module = "tests._sources._spans.a2a_app"
        far = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            module,
            str(port),
            endpoint,
            env={**os.environ, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
        )
        try:
            card = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
            await _started(far, card)
            hooks = {"request": [inject_trace_context]}
            async with httpx.AsyncClient(event_hooks=hooks, timeout=30) as client:
                session_id = await converse(root_agent(remote_agent(card, "far", client)))
        finally:
            far.send_signal(signal.SIGINT)
            await asyncio.wait_for(far.wait(), 30)
        score = await read(str(spans))

    (result,) = score.results
    assert result.name == f"//{session_id}"  # the caller's service, which names none
    assert [author for author, _ in _shape(result.trace)] == ["user", *["root"] * 2, *["far"] * 3]
    assert {name: metric.verdict for name, metric in result.metrics.items()} == {
        "looked_up": "pass",
        "far_answered": "pass",
        "asked_b7": "pass",
        "never_called(lookup)": "fail",
    }
    assert collector.stats.refused == {}


async def _started(process: asyncio.subprocess.Process, card: str) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            assert process.returncode is None, "far exited"
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(card)).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError("far did not start")


async def test_a_served_invocation_whose_callers_spans_are_elsewhere_says_so(
    capture_spans, tmp_path
):
    """Trace context carried, the caller's spans sent elsewhere: the served side says what lacks."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from adk_eval._sources._spans._otlp import spans_from_proto
    from adk_eval._sources._spans._rebuild import rebuild
    from adk_eval._sources._spans._span import conversation_of

    await across_services(capture_spans, tmp_path / "spans.db", carry=True)
    spans = spans_from_proto(encode_spans(capture_spans.spans()).SerializeToString())
    (handler,) = [s for s in spans if s.name.endswith("JsonRpcDispatcher.handle_requests")]
    parents = {span.span_id: span.parent_id for span in spans}

    def served(span_id: str | None) -> bool:
        while span_id is not None and span_id != handler.span_id:
            span_id = parents.get(span_id)
        return span_id is not None

    far_side = [span for span in spans if served(span.span_id)]
    (key,) = {found for span in far_side if (found := conversation_of(span))}
    rebuilt = rebuild(key, far_side)

    assert [e.author for e in rebuilt.session.events] == ["user", "far", "far", "far"]
    assert rebuilt.notes[:2] == (
        "1 span(s) without their parent, kept as roots",
        "a remote agent's invocation served over A2A whose caller's spans are not in this "
        "source: its caller's part of the conversation is missing",
    )


async def test_a_remote_agent_that_could_not_be_reached_is_not_said_unjoined(
    capture_spans, tmp_path
):
    """Its card could not be read, so nothing was sent: there is nothing to join, nor to say."""
    from .test_agreement import _free_port

    capture_spans.add(SqliteSpanExporter(db_path=str(tmp_path / "spans.db")))
    card = f"http://127.0.0.1:{_free_port()}/.well-known/agent-card.json"  # nothing listens
    hooks = {"request": [inject_trace_context]}
    async with httpx.AsyncClient(event_hooks=hooks, timeout=5) as client:
        await converse(root_agent(remote_agent(card, "far", client)))
    score = await read(f"adk-spans:{tmp_path / 'spans.db'}")

    assert len(score.results) == 1
    assert [note for note in score.notes if "not joined" in note] == []
