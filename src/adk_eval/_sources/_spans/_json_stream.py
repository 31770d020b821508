"""One OTLP/JSON document read as a stream: its spans one at a time, memory flat.

The OpenTelemetry Collector's file exporter writes JSON lines, which `_read`
decodes line by line. A document written whole (``json.dump(request, indent=2)``,
protobuf's ``MessageToJson``) would otherwise be parsed whole: its text and every
object in it at once, several times the file's size. `stream_documents` walks its
outer structure (``{"resourceSpans": [{"resource": ..., "scopeSpans": [{"spans":
[...]}]}]}``, snake_case names too) with a small tokenizer and decodes each span,
and each resource, on its own with `json.JSONDecoder.raw_decode`; the text is
read a chunk at a time. Spans seen before their resource (a ``resource`` written
after ``scopeSpans``) wait for it until their ``resourceSpans`` element ends.
Several documents one after another are read in turn.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

from ._otlp import SpanFormatError, resource_from_json, span_from_json
from ._span import Span

__all__ = ["NotJson", "stream_documents"]

_CHUNK = 1 << 16
_BLANK = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
_NUMBER = frozenset("0123456789.eE+-")
_SCOPES = ("scopeSpans", "scope_spans", "instrumentationLibrarySpans")


class NotJson(ValueError):
    """The text is not JSON: `line` (1-based) and `reason` say where and why."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason = line, reason


class _Text:
    """A file's text, read a chunk at a time, and the line the reading is at."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buffer, self.pos, self.line, self.eof = "", 0, 1, False

    def _more(self) -> bool:
        """Reads on (as much again as is held, for a long value); False at the end."""
        if self.eof:
            return False
        data = self.file.read(max(_CHUNK, len(self.buffer) - self.pos))
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as error:
            line = self.line_at(len(self.buffer)) + data.count(b"\n", 0, error.start)
            raise NotJson(line, f"not UTF-8 ({error.reason})") from None
        self.eof = not data
        self.line += self.buffer.count("\n", 0, self.pos)
        self.buffer, self.pos = self.buffer[self.pos :] + text, 0
        return True

    def line_at(self, index: int) -> int:
        return self.line + self.buffer.count("\n", 0, index)

    def peek(self) -> str:
        """The next character that is not blank ('' at the end), not taken."""
        while True:
            self.pos = _BLANK.match(self.buffer, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._more():
                return ""

    def take(self, expected: str) -> None:
        found = self.peek()
        if found not in expected:
            shown = repr(found) if found else "the end of the file"
            raise NotJson(self.line_at(self.pos), f"expected {expected!r}, found {shown}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value, decoded whole."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as error:
                if self._more():
                    continue
                raise NotJson(self.line_at(error.pos), error.msg) from None
            cut = end == len(self.buffer) or (
                isinstance(value, (int, float)) and self.buffer[end] in _NUMBER
            )
            if not cut or not self._more():  # a number read up to the chunk's end may go on
                self.pos = end
                return value


def _members(text: _Text) -> Iterator[str]:
    """The keys of an object (its ``{`` taken); the caller reads each value."""
    if text.peek() == "}":
        text.pos += 1
        return
    while True:
        key = text.value()
        if not isinstance(key, str):
            raise NotJson(text.line_at(text.pos), "expected a key")
        text.take(":")
        yield key
        if text.peek() == "}":
            text.pos += 1
            return
        text.take(",")


def _items(text: _Text, where: str) -> Iterator[int]:
    """The indexes of an array's items; the caller reads each item. None is no items."""
    if text.peek() != "[":
        found = text.value()
        if found is None:
            return
        raise SpanFormatError(f"{where} is {type(found).__name__}, not a list")
    text.pos += 1
    if text.peek() == "]":
        text.pos += 1
        return
    index = 0
    while True:
        yield index
        index += 1
        if text.peek() == "]":
            text.pos += 1
            return
        text.take(",")


def _object(text: _Text, where: str) -> None:
    """Takes an object's ``{``, or says what `where` is instead."""
    if text.peek() != "{":
        raise SpanFormatError(f"{where} is {type(text.value()).__name__}, not an object")
    text.pos += 1


def _resource_spans(text: _Text, where: str, add: Callable[[list[Span]], None]) -> None:
    _object(text, where)
    resource: dict[str, Any] | None = None
    waiting: list[tuple[Any, str]] = []  # spans read before their resource
    for key in _members(text):
        if key == "resource":
            resource = resource_from_json(text.value(), f"{where}.resource")
        elif key in (*_SCOPES, "instrumentation_library_spans"):
            for s in _items(text, f"{where}.{key}"):
                at = f"{where}.scopeSpans[{s}]"
                _object(text, at)
                for field in _members(text):
                    if field != "spans":
                        text.value()
                        continue
                    for n in _items(text, f"{at}.spans"):
                        span, place = text.value(), f"{at}.spans[{n}]"
                        if resource is None:
                            waiting.append((span, place))
                        else:
                            add([span_from_json(span, resource, place)])
        else:
            text.value()
    add([span_from_json(span, resource or {}, place) for span, place in waiting])


def _document(text: _Text, add: Callable[[list[Span]], None]) -> None:
    _object(text, "the document")
    keys, traced = [], False
    for key in _members(text):
        keys.append(key)
        if key in ("resourceSpans", "resource_spans"):
            traced = True
            for r in _items(text, ".resourceSpans"):
                _resource_spans(text, f"resourceSpans[{r}]", add)
        else:
            text.value()
    if keys and not traced:
        other = next((key for key in keys if key.startswith("resource")), None)
        found = f" (it has `{other}`: not traces)" if other else ""
        raise SpanFormatError(f"no resourceSpans in the document{found}")


def stream_documents(file: IO[bytes], add: Callable[[list[Span]], None]) -> None:
    """Hands `add` the spans of the OTLP/JSON documents in `file`, a few at a time.

    Raises:
        NotJson: The text is not JSON (its `line` says where).
        SpanFormatError: A document is not an OTLP trace export, or a span in it
            is malformed (the message says where, as `spans_from_json`'s does).
    """
    text = _Text(file)
    while text.peek():
        _document(text, add)
