"""Opening trace sources: sniffing, spooling OTLP files, and hostile input."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict, MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from adk_eval._errors import EvalSetupError
from adk_eval._sources._spans._read import open_spans, sniff
from adk_eval._sources._spans._store import write_spans
from tests._sources._spans.test_otlp import hex_ids, make_spans
from tests._sources._spans.test_store import decoded

ROOT = Path(__file__).resolve().parents[3]


def request(conversations: int = 2):  # type: ignore[no-untyped-def]
    return encode_spans(make_spans(conversations))


def json_lines(path: Path, *requests) -> Path:  # type: ignore[no-untyped-def]
    path.write_text("".join(json.dumps(hex_ids(MessageToDict(r))) + "\n" for r in requests))
    return path


def framed(path: Path, *requests) -> Path:  # type: ignore[no-untyped-def]
    data = b""
    for r in requests:
        message = r.SerializeToString()
        data += len(message).to_bytes(4, "big") + message
    path.write_bytes(data)
    return path


def read_all(spec: str) -> tuple[list[str], int, list[str], int]:
    with open_spans(spec) as store:
        keys = store.conversations()
        count = sum(len(store.spans_of(key)) for key in keys)
        return keys, count, store.notes, store.skipped_input


def test_sniff_tells_each_kind_from_its_first_bytes(tmp_path: Path) -> None:
    r = request()
    sqlite_file = tmp_path / "a.db"
    write_spans(connection := sqlite3.connect(sqlite_file), [])
    connection.close()
    (tmp_path / "doc.json").write_text(MessageToJson(r))
    (tmp_path / "plain.bin").write_bytes(r.SerializeToString())
    (tmp_path / "text.txt").write_text("hello\n")
    (tmp_path / "empty").write_bytes(b"")
    os.mkfifo(tmp_path / "fifo")
    assert sniff(sqlite_file) == "adk-spans"
    assert sniff(json_lines(tmp_path / "x.jsonl", r)) == "otlp-json"
    assert sniff(tmp_path / "doc.json") == "otlp-json"
    assert sniff(tmp_path / "plain.bin") == "otlp-proto"
    assert sniff(framed(tmp_path / "framed.bin", r)) == "otlp-proto"
    assert [sniff(tmp_path / name) for name in ("text.txt", "empty", "fifo")] == [None] * 3


def test_every_otlp_layout_gives_the_same_conversations(tmp_path: Path) -> None:
    r = request()
    (tmp_path / "doc.json").write_text(MessageToJson(r, indent=2))
    (tmp_path / "plain.binpb").write_bytes(r.SerializeToString())
    framed(tmp_path / "framed.pb", r)
    json_lines(tmp_path / "lines.jsonl", r)
    expected = (["s0", "s1"], 6, [], 0)
    for name in ("doc.json", "plain.binpb", "framed.pb", "lines.jsonl"):
        assert read_all(f"otlp:{tmp_path / name}") == expected, name
        assert read_all(str(tmp_path / name)) == expected, name


def test_a_folder_is_read_in_name_order_and_duplicates_are_kept_once(tmp_path: Path) -> None:
    early, late = request(1), request(1)  # late's conversation starts later
    json_lines(tmp_path / "b.jsonl", late, early)  # out of order, and early twice
    framed(tmp_path / "a.pb", early)
    (tmp_path / "notes.txt").write_text("not read")
    (tmp_path / "sub").mkdir()
    assert read_all(f"otlp:{tmp_path}") == (["s0"], 6, [], 0)
    with open_spans(str(tmp_path)) as store:
        assert store.count() == 6
        assert store.conversations() == ["s0"]  # both runs name session s0
        spans = store.spans_of("s0")
    starts = [span.start_ns for span in spans]
    assert starts == sorted(starts)
    assert len({span.trace_id for span in spans}) == 2


def test_spans_without_their_parents_are_kept(tmp_path: Path) -> None:
    r = request(1)
    spans = r.resource_spans[0].scope_spans[0].spans
    root = next(span for span in spans if not span.parent_span_id)
    spans.remove(root)
    keys, count, _, _ = read_all(str(framed(tmp_path / "orphans.pb", r)))
    assert (keys, count) == (["s0"], 2)


def test_a_truncated_last_line_is_left_out_and_said_once(tmp_path: Path) -> None:
    path = json_lines(tmp_path / "x.jsonl", request(1), request(1))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    _, count, notes, skipped = read_all(f"otlp:{path}")
    assert (count, skipped) == (3, 1)
    assert notes == [f"1 truncated line at the end of {path} left out"]


def test_a_truncated_last_message_is_left_out(tmp_path: Path) -> None:
    path = framed(tmp_path / "x.pb", request(1), request(1))
    path.write_bytes(path.read_bytes()[:-10])
    _, count, notes, skipped = read_all(f"otlp:{path}")
    assert (count, skipped) == (3, 1)
    assert "truncated message" in notes[0]


def test_an_empty_file_is_no_spans_and_a_note(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("\n\n")
    assert read_all(f"otlp:{path}") == ([], 0, [f"{path} is empty"], 0)
    path.write_text("")
    with pytest.raises(EvalSetupError, match=r"cannot tell what .* holds: empty"):
        open_spans(str(path))


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"resourceSpans": []}\nhello\n', "x.jsonl:2: not JSON"),
        ("\n[1, 2]\n", "x.jsonl:2: the document is list, not an object"),
        ('{"resourceMetrics": []}\n', "x.jsonl:1: no resourceSpans"),
        ('{\n "resourceSpans": [\n', "x.jsonl:3: not JSON"),
        ("hello", "x.jsonl:1: not JSON"),
    ],
)
def test_bad_json_is_one_line_naming_file_and_line(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    with pytest.raises(EvalSetupError) as raised:
        open_spans(f"otlp:{path}")
    assert says in str(raised.value)
    assert "accepted: adk-spans:PATH" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_folder_with_one_bad_file_names_it_and_leaves_no_spool(tmp_path: Path) -> None:
    json_lines(tmp_path / "a.jsonl", request(1))
    (tmp_path / "b.pb").write_bytes(b"\xff\xff\xff\xff garbage")
    spools = set(Path(tempfile.gettempdir()).glob("adk-eval-spans-*"))
    with pytest.raises(EvalSetupError, match=r"b\.pb"):
        open_spans(f"otlp:{tmp_path}")
    assert set(Path(tempfile.gettempdir()).glob("adk-eval-spans-*")) == spools


def test_the_spool_is_private_temporary_and_deleted_on_close(tmp_path: Path) -> None:
    path = json_lines(tmp_path / "x.jsonl", request(1))
    listing = sorted(os.listdir(tmp_path))
    store = open_spans(f"otlp:{path}")
    assert store.path.is_relative_to(Path(tempfile.gettempdir()).resolve())
    assert not store.path.is_relative_to(tmp_path)
    assert store.path.exists()
    store.close()
    assert not store.path.parent.exists()
    assert sorted(os.listdir(tmp_path)) == listing


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    for spec in (f"otlp:{fifo}", str(fifo), f"adk-spans:{fifo}", f"otlp:{tmp_path}"):
        with pytest.raises(EvalSetupError, match="FIFO"):
            open_spans(spec)
    assert time.monotonic() - started < 5


def test_missing_paths_zstd_and_unknown_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(EvalSetupError, match="no such OTLP file"):
        open_spans(f"otlp:{tmp_path / 'nope'}")
    with pytest.raises(EvalSetupError, match="no such trace file"):
        open_spans(str(tmp_path / "nope"))
    (tmp_path / "x.pb").write_bytes(b"\x28\xb5\x2f\xfd\x00\x00")
    with pytest.raises(EvalSetupError, match="zstd"):
        open_spans(f"otlp:{tmp_path / 'x.pb'}")
    (tmp_path / "x.txt").write_text("hello\n")
    with pytest.raises(EvalSetupError, match="neither SQLite"):
        open_spans(str(tmp_path / "x.txt"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvalSetupError, match="holds no"):
        open_spans(f"otlp:{empty}")


def test_adk_spans_prefix_and_plain_path_open_the_file_in_place(tmp_path: Path) -> None:
    path = tmp_path / "spans.db"
    with sqlite3.connect(path) as connection:
        write_spans(connection, decoded(2))
    connection.close()
    for spec in (f"adk-spans:{path}", str(path)):
        with open_spans(spec) as store:
            assert store.path == path.resolve()
            assert store.conversations() == ["s0", "s1"]


@pytest.mark.slow
def test_the_memory_bench_runs(tmp_path: Path) -> None:
    out = tmp_path / "trace_memory.json"
    script = str(ROOT / "bench" / "trace_memory.py")
    subprocess.run(
        [sys.executable, script, "--spans", "2000", "--json", str(out)],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    result = json.loads(out.read_text())
    assert [row["spans"] for row in result["sizes"]] == [200, 2000]
    assert result["sizes"][-1]["conversations"] == 100
    assert "flat_mib" in result


def _conversation_request(index: int) -> dict:
    """One export request: 20 spans of one conversation, with ADK's attributes."""
    trace, spans = f"{index + 1:032x}", []
    for n in range(20):
        attributes = {"gcp.vertex.agent.session_id": f"s{index}", "content": f"{n}" * 300}
        span = {
            "traceId": trace,
            "spanId": f"{index + 1:08x}{n + 1:08x}",
            "name": "invocation" if n == 0 else "execute_tool lookup",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + index * 10**9 + n),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        }
        if n:
            span["parentSpanId"] = f"{index + 1:08x}{1:08x}"
        spans.append(span)
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def _peak_reading(spec: str) -> tuple[int, int]:
    """Python's peak memory while reading every conversation, and how many spans."""
    tracemalloc.start()
    try:
        _, count, _, _ = read_all(spec)
        return tracemalloc.get_traced_memory()[1], count
    finally:
        tracemalloc.stop()


def test_a_pretty_printed_document_is_read_span_by_span(tmp_path: Path) -> None:
    requests = [_conversation_request(index) for index in range(100)]
    whole = {"resourceSpans": [part for r in requests for part in r["resourceSpans"]]}
    (tmp_path / "doc.json").write_text(json.dumps(whole, indent=2))
    (tmp_path / "lines.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    del requests, whole
    document, spans = _peak_reading(f"otlp:{tmp_path / 'doc.json'}")
    lines, same = _peak_reading(f"otlp:{tmp_path / 'lines.jsonl'}")
    assert spans == same == 2000
    assert (tmp_path / "doc.json").stat().st_size > 2_000_000
    assert document < 1.5 * lines, (document, lines)
