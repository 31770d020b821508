"""Opening a trace source: an SQLite span file as it is, OTLP files spooled into one.

A source is named ``adk-spans:PATH`` (ADK's `SqliteSpanExporter` file, or the one
``adk-eval collect`` writes), ``otlp:PATH`` (an OTLP file, or a folder of
``*.json``, ``*.jsonl``, ``*.pb`` and ``*.binpb`` files read in name order), or a
plain PATH whose first bytes tell which (`sniff`).

OTLP files are decoded as they are read (JSON lines line by line, a JSON
document span by span, protobuf message by message) into a private SQLite file
in the system's temporary folder, never beside the input, deleted when the store
is closed; so memory stays flat whatever the files' size. Protobuf files are
either one serialized ``ExportTraceServiceRequest`` or the OpenTelemetry
Collector ``fileexporter``'s ``format: proto`` layout: each message preceded by
its size, 4 bytes big-endian.

A file being written may end in a truncated line or message: it is left out,
counted in the store's ``skipped_input`` and said once in its ``notes``. Anything
else that does not fit stops the reading with one `EvalSetupError` line naming the
file (and line) and what is accepted.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
import tempfile
import weakref
from pathlib import Path
from typing import IO, Any

from ..._errors import EvalSetupError
from ..._file_kinds import OTLP_JSON, OTLP_PROTO, SQLITE_HEADER, FileKind, suffix_kind
from .._files import not_a_file
from ._json_stream import NotJson, stream_documents
from ._otlp import SpanFormatError, spans_from_json, spans_from_proto
from ._span import Span
from ._store import SpanStore, write_spans

__all__ = ["open_spans", "sniff"]

_FORMATS: dict[FileKind, str] = {OTLP_JSON: "otlp-json", OTLP_PROTO: "otlp-proto"}
"""Each OTLP file kind's format, as `sniff` names it; their suffixes are the table's."""
_PATTERNS = [f"*{suffix}" for kind in _FORMATS for suffix in kind.suffixes]
ACCEPTED = (
    "accepted: adk-spans:PATH (ADK's SqliteSpanExporter file or `adk-eval collect`'s), "
    "otlp:PATH (OTLP/JSON documents or JSON lines, OTLP protobuf; a file or a folder of "
    f"{', '.join(_PATTERNS)})"
)
_ZSTD = b"\x28\xb5\x2f\xfd"
_HEAD = 65536
_BATCH = 2000
"""Spans written to the spool per transaction."""


def sniff(path: Path) -> str | None:
    """What a file holds, from its first bytes.

    Returns:
        ``"adk-spans"`` (SQLite), ``"otlp-json"`` (a JSON object with
        ``resourceSpans`` first), ``"otlp-proto"`` (binary protobuf, framed or
        not), or None (empty, unreadable, not a regular file, or anything else).
    """
    if not_a_file(path) is not None:
        return None
    try:
        with path.open("rb") as file:
            head = file.read(_HEAD)
    except OSError:
        return None
    if head.startswith(SQLITE_HEADER):
        return "adk-spans"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        found = b'"resourceSpans"' in text or b'"resource_spans"' in text
        return "otlp-json" if found or text.rstrip() == b"{}" else None
    if _framed(head) or head.startswith(b"\x0a"):
        return "otlp-proto"
    return None


def _framed(head: bytes) -> bool:
    """Whether bytes start like the collector's length-prefixed protobuf messages."""
    return len(head) > 4 and int.from_bytes(head[:4], "big") > 0 and head[4] == 0x0A


def open_spans(spec: str) -> SpanStore:
    """Opens a trace source for reading, one conversation at a time.

    Args:
        spec: ``adk-spans:PATH``, ``otlp:PATH`` or a plain PATH (see the module doc).

    Returns:
        The store; close it (OTLP files' spool is deleted then).

    Raises:
        EvalSetupError: No such path, not a regular file, or input that does not fit.
    """
    kind, _, rest = spec.partition(":")
    if kind == "adk-spans" and rest:
        return SpanStore.open(Path(rest))
    if kind == "otlp" and rest:
        return _spool(_files(Path(rest)))
    path = Path(spec)
    if not path.exists():
        raise EvalSetupError(f"no such trace file or folder: {spec} ({ACCEPTED})")
    if path.is_dir():
        return _spool(_files(path))
    kind_of_file = not_a_file(path)
    if kind_of_file is not None:
        raise EvalSetupError(f"{path} is {kind_of_file}, not a trace file (nothing was read)")
    found = sniff(path)
    if found == "adk-spans":
        return SpanStore.open(path)
    if found is None:
        what = "empty" if path.stat().st_size == 0 else "neither SQLite, OTLP/JSON nor protobuf"
        raise EvalSetupError(f"cannot tell what {path} holds: {what} ({ACCEPTED})")
    return _spool([(path, found)])


def _files(path: Path) -> list[tuple[Path, str]]:
    """The OTLP files a path names, each with its format, in name order."""
    if not path.exists():
        raise EvalSetupError(f"no such OTLP file or folder: {path} ({ACCEPTED})")
    if path.is_dir():
        files = [(child, form) for child in sorted(path.iterdir()) if (form := _format(child))]
        if not files:
            raise EvalSetupError(f"{path} holds no OTLP file ({', '.join(_PATTERNS)})")
    else:
        files = [(path, _format(path) or sniff(path) or "otlp-json")]
    for file, _ in files:
        kind = not_a_file(file)
        if kind is not None:
            raise EvalSetupError(f"{file} is {kind}, not an OTLP file (nothing was read)")
    return files


def _format(path: Path) -> str | None:
    """The OTLP format a file's suffix names (``.jsonl``: ``otlp-json``), else None."""
    kind = suffix_kind(path)
    return _FORMATS.get(kind) if kind is not None else None


class _Spool:
    """The private temporary SQLite file OTLP files are decoded into."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="adk-eval-spans-"))
        self.path = self.folder / "spans.sqlite"
        self.connection = sqlite3.connect(self.path)
        self.connection.execute("PRAGMA journal_mode = OFF")
        self.connection.execute("PRAGMA synchronous = OFF")
        write_spans(self.connection, [])
        self.pending: list[Span] = []
        self.skipped = 0
        self.notes: list[str] = []

    def add(self, spans: list[Span]) -> None:
        self.pending.extend(spans)
        if len(self.pending) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        write_spans(self.connection, self.pending)
        self.pending = []


def _spool(files: list[tuple[Path, str]]) -> SpanStore:
    spool = _Spool()
    try:
        for path, kind in files:
            try:
                with path.open("rb") as file:
                    if kind == "otlp-proto":
                        _read_proto(path, file, spool)
                    else:
                        _read_json(path, file, spool)
            except OSError as error:
                raise EvalSetupError(f"cannot read {path}: {error.strerror or error}") from None
        spool.flush()
        spool.connection.close()
        store = SpanStore.open(spool.path)
    except BaseException:
        spool.connection.close()
        shutil.rmtree(spool.folder, ignore_errors=True)
        raise
    store.skipped_input = spool.skipped
    store.notes = spool.notes
    _remove_on_close(store, spool.folder)
    return store


def _remove_on_close(store: SpanStore, folder: Path) -> None:
    """Deletes the spool's folder when the store is closed (or collected, at the latest)."""
    store.on_close(weakref.finalize(store, shutil.rmtree, folder, True))


def _bad(path: Path, where: str, reason: str) -> EvalSetupError:
    return EvalSetupError(f"{path}{where}: {reason} ({ACCEPTED})")


def _read_json(path: Path, file: IO[bytes], spool: _Spool) -> None:
    """Reads a JSON file: JSON lines, else whole documents, streamed (`_json_stream`)."""
    number, first = 1, file.readline()
    while first and not first.strip():
        number, first = number + 1, file.readline()
    if not first:
        spool.notes.append(f"{path} is empty")
        return
    try:
        json.loads(first)
    except ValueError:
        if first.endswith(b"\n"):  # the first of a document's many lines
            file.seek(0)
            _document(path, file, spool)
            return
    _lines(path, number, first, file, spool)


def _document(path: Path, file: IO[bytes], spool: _Spool) -> None:
    try:
        stream_documents(file, spool.add)
    except NotJson as error:
        raise _bad(path, f":{error.line}", f"not JSON ({error.reason})") from None
    except SpanFormatError as error:
        raise _bad(path, "", str(error)) from None


def _lines(path: Path, number: int, first: bytes, file: IO[bytes], spool: _Spool) -> None:
    for at, line in itertools.chain([(number, first)], enumerate(file, number + 1)):
        if not line.strip():
            continue
        try:
            document: Any = json.loads(line)
        except ValueError as error:
            if not line.endswith(b"\n") and line.lstrip().startswith(b"{"):
                spool.skipped += 1
                spool.notes.append(f"1 truncated line at the end of {path} left out")
                return
            raise _bad(path, f":{at}", f"not JSON ({error})") from None
        try:
            spool.add(spans_from_json(document))
        except SpanFormatError as error:
            raise _bad(path, f":{at}", str(error)) from None


def _read_proto(path: Path, file: IO[bytes], spool: _Spool) -> None:
    """Reads a protobuf file: length-prefixed messages, or one message."""
    head = file.read(5)
    if not head:
        spool.notes.append(f"{path} is empty")
        return
    if head.startswith(_ZSTD):
        raise _bad(path, "", "compressed (zstd): decompress it first")
    file.seek(0)
    if not _framed(head):
        try:
            spool.add(spans_from_proto(file.read()))
        except SpanFormatError as error:
            raise _bad(path, "", str(error)) from None
        return
    number = 0
    while prefix := file.read(4):
        number += 1
        size = int.from_bytes(prefix, "big")
        data = file.read(size)
        if len(prefix) < 4 or len(data) < size:
            spool.skipped += 1
            spool.notes.append(f"1 truncated message at the end of {path} left out")
            return
        try:
            spool.add(spans_from_proto(data))
        except SpanFormatError as error:
            raise _bad(path, f" (message {number})", str(error)) from None
