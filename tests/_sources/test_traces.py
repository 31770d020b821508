"""TraceSource: which traces are conversations; what a source lacks, said where it lacks it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from adk_eval._sources._files import refuse
from adk_eval._sources._filter import SessionFilter
from adk_eval._sources._spans._span import Span
from adk_eval._sources._spans._store import write_spans
from adk_eval._sources._specs import open_sessions
from adk_eval._sources._traces import TraceSource
from tests._sources._spans.test_read import json_lines, request
from tests._sources._spans.test_store import _web_server_spans

MESSAGES = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
ANSWER = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}])


def conversation(n: int, model: dict[str, object] | None) -> list[Span]:
    """Session ``s{n}``'s invocation: an agent span, and a model call unless `model` is None."""
    trace, session = f"{n + 1:032x}", {"gcp.vertex.agent.session_id": f"s{n}"}
    agent = Span(trace, f"{n + 1:016x}", None, "invoke_agent desk", n * 10, n * 10 + 9, session)
    if model is None:
        return [agent]
    call = Span(
        trace,
        f"{n + 1:08x}{1:08x}",
        agent.span_id,
        "generate_content m",
        n * 10 + 1,
        n * 10 + 2,
        {**session, **model},
    )
    return [agent, call]


def notes_of(tmp_path: Path, spans: list[Span]) -> tuple[list[str], dict[str, frozenset[str]]]:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "spans.db"
    with sqlite3.connect(path) as connection:
        write_spans(connection, spans)
    connection.close()
    source = TraceSource(str(path))

    async def read() -> dict[str, frozenset[str]]:
        return {s.id: lacks async for s, lacks in source.read(SessionFilter(), refuse("spans"))}

    try:
        lacks = asyncio.run(read())
        return [note.split(": ", 1)[1] for note in source.notes], lacks
    finally:
        source.close()


def test_a_web_servers_own_request_traces_are_counted_and_named_once(tmp_path: Path) -> None:
    notes, lacks = notes_of(tmp_path, _web_server_spans())
    assert list(lacks) == ["s0"]
    assert notes[0] == (
        "4 trace(s) with no agent invocation left out (not conversations): "
        "2 POST /apps/{app}/sessions, 1 GET /health, 1 GET /list-apps"
    )


def test_content_and_usage_are_said_lacking_only_where_they_lack(tmp_path: Path) -> None:
    captured = {
        "gen_ai.input.messages": MESSAGES,
        "gen_ai.output.messages": ANSWER,
        "gen_ai.usage.input_tokens": 3,
        "gen_ai.usage.output_tokens": 1,
    }
    spans = conversation(0, captured) + conversation(1, None)
    notes, lacks = notes_of(tmp_path, spans)
    assert lacks == {"s0": {"state"}, "s1": {"state"}}  # s1 made no model call: it lacks neither
    assert not [note for note in notes if "capture" in note or "token" in note]
    notes, lacks = notes_of(tmp_path / "off", [*spans, *conversation(2, {})])
    assert lacks["s2"] == {"state", "content", "usage"}
    assert (
        "content capture was off: what was said and the tools' arguments and answers are not in "
        "the spans, and metrics that read them are not applicable (1 session(s))" in notes
    )
    assert "the spans carry no token counts (1 session(s))" in notes


def test_a_folder_of_otlp_files_named_in_capitals_is_read_as_traces(tmp_path: Path) -> None:
    """Sources tell a folder of traces by the file-kind table's suffixes, whatever their case."""
    json_lines(tmp_path / "EXPORT.JSONL", request())
    source = open_sessions(str(tmp_path))
    assert isinstance(source, TraceSource)

    async def read() -> list[str]:
        return [s.id async for s, _ in source.read(SessionFilter(), refuse("spans"))]

    try:
        assert asyncio.run(read()) == ["s0", "s1"]
    finally:
        source.close()


def test_a_conversation_updated_before_since_is_left_out_unread(tmp_path: Path) -> None:
    path = tmp_path / "spans.db"
    spans = [
        span for n in range(4) for span in conversation(n, {"gen_ai.input.messages": MESSAGES})
    ]
    with sqlite3.connect(path) as connection:
        write_spans(connection, spans)
        # s0's model call is damaged: reading its spans would count a row left out
        connection.execute(
            "UPDATE spans SET attributes_json = '{' WHERE span_id = ?", (spans[1].span_id,)
        )
    connection.close()

    def read(filters: SessionFilter) -> tuple[list[str], int]:
        source = TraceSource(str(path))

        async def ids() -> list[str]:
            return [s.id async for s, _ in source.read(filters, refuse("spans"))]

        try:
            return asyncio.run(ids()), source._open().skipped  # rows read and found damaged
        finally:
            source.close()

    assert read(SessionFilter()) == (["s0", "s1", "s2", "s3"], 1)
    # since s2's last span ended (29 ns): s2 and s3, as `keeps` chooses them; s0 is not read
    assert read(SessionFilter(since=29e-9)) == (["s2", "s3"], 0)
