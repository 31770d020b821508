"""OpenTelemetry traces read as stored sessions: `TraceSource`.

A trace source is named like a session store:

* ``otlp:PATH``: a file or folder of OTLP JSON (the OpenTelemetry Collector's
  file exporter: one request per line, or one JSON document) or OTLP protobuf;
* ``adk-spans:PATH``: the SQLite file of ADK's `SqliteSpanExporter`, or the file
  ``adk-eval collect`` writes (read while it is being written);
* a plain PATH whose content is one of these (see `looks_like_spans`).

Spans are grouped into conversations (the session id a span names, else its
trace; a trace of no agent invocation, such as a web server's ``GET /health``, is
none, and said once by name), and each conversation is rebuilt as an ADK
`Session` (`_spans._rebuild`), one at a time; a remote agent called over A2A
from another service is part of its caller's conversation when trace context
joined the two services' spans. What the spans do not carry (state
deltas always; what was said, where a conversation's model calls were traced with
content capture off) is said once per source in `notes`, counting only the
sessions that lack it, and a metric that ``needs`` it is not applicable on those
sessions (`lacks_of`).

Nothing is written next to what is read: files are decoded into a private
temporary SQLite file, and SQLite span files are opened read-only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._file_kinds import OTLP_JSON, OTLP_PROTO, suffix_kind
from ._files import OnUnreadable, Unreadable, first_line, not_a_file
from ._filter import SessionFilter
from ._source import SourceBase

__all__ = ["TRACE_SCHEMES", "TraceSource", "holds_spans", "looks_like_spans", "trace_path"]

TRACE_SCHEMES = ("otlp", "adk-spans")
"""The prefixes naming a trace source (``otlp:PATH``, ``adk-spans:PATH``)."""

_LACKS_SAID = {
    "state": "the spans carry no state: metrics that read the state are not applicable",
    "content": "content capture was off: what was said and the tools' arguments and answers "
    "are not in the spans, and metrics that read them are not applicable",
    "usage": "the spans carry no token counts",
}
_NAMES_SHOWN = 5


def looks_like_spans(path: Path) -> bool:
    """Whether the file at `path` holds spans (OTLP JSON or protobuf, an ADK span file)."""
    from ._spans._read import sniff

    try:
        return sniff(path) is not None
    except OSError:
        return False


def holds_spans(path: Path) -> bool:
    """Whether a plain `path` (a file, or a folder's first file) holds spans, not sessions."""
    if not path.is_dir():
        return looks_like_spans(path)
    for file in sorted(path.iterdir()):
        if suffix_kind(file) in (OTLP_JSON, OTLP_PROTO) and not_a_file(file) is None:
            return looks_like_spans(file)
    return False


class TraceSource(SourceBase):
    """Conversations rebuilt from OpenTelemetry spans (see the module doc).

    Args:
        spec: ``otlp:PATH``, ``adk-spans:PATH`` or a PATH holding spans.
    """

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.description = f"the traces in {spec}"
        self._store: Any = None
        self._said: Counter[str] = Counter()
        self._lacking: Counter[str] = Counter()

    def _open(self) -> Any:
        if self._store is None:
            from ._spans._read import open_spans

            self._store = open_spans(self.spec)
        return self._store

    async def check(self) -> None:
        """Opens the spans (a file is decoded once, here).

        Raises:
            EvalSetupError: One line naming what cannot be read and what is accepted.
        """
        self._open()

    @property
    def notes(self) -> list[str]:
        """What the source left out or does not carry, one line each (said once)."""
        store = self._store
        if store is None:
            return []
        lines = [f"{self.spec}: {note}" for note in store.notes]
        if store.left_out:
            lines.append(f"{self.spec}: {_left_out(store.left_out)}")
        for fact, sessions in sorted(self._lacking.items()):
            lines.append(f"{self.spec}: {_LACKS_SAID.get(fact, fact)} ({sessions} session(s))")
        for note, times in self._said.most_common():
            lines.append(f"{self.spec}: {note}" + (f" ({times} sessions)" if times > 1 else ""))
        return lines

    async def read(
        self, filters: SessionFilter, unreadable: OnUnreadable
    ) -> AsyncIterator[tuple[Session, frozenset[str]]]:
        """The conversations that pass `filters`, in the order they began, and their lacks.

        A conversation whose spans cannot be rebuilt goes to `unreadable`.

        Raises:
            EvalSetupError: The spans cannot be read.
        """
        from ._spans._rebuild import rebuild

        store = self._open()
        left = filters.limit
        for key in store.conversations():
            if left == 0:
                return
            if filters.sessions and key not in filters.sessions:
                continue
            if filters.since is not None and store.last_end(key) < filters.since:
                continue  # updated before: left out unbuilt (a watch's poll reads what is new)
            try:
                rebuilt = rebuild(key, store.spans_of(key))
            except (ValueError, TypeError, KeyError) as error:
                unreadable(Unreadable(key, f"its spans cannot be rebuilt: {first_line(error)}"))
                continue
            if not filters.keeps(rebuilt.session):
                continue
            self._lacking.update(rebuilt.lacks)
            self._said.update(rebuilt.notes)
            left = None if left is None else left - 1
            yield rebuilt.session, rebuilt.lacks

    def trace_of(self, key: str) -> str | None:
        """The trace id of the conversation keyed `key`'s newest invocation (once read)."""
        return None if self._store is None else self._store.last_trace(key)

    def close(self) -> None:
        """Lets go of the spans (a decoded file's temporary copy is deleted)."""
        if self._store is not None:
            self._store.close()
            self._store = None


def _left_out(names: Counter[str]) -> str:
    """One line on the traces that are no conversation, by their root span's name."""
    shown = ", ".join(f"{count} {name}" for name, count in names.most_common(_NAMES_SHOWN))
    more = len(names) - _NAMES_SHOWN
    return (
        f"{names.total()} trace(s) with no agent invocation left out (not conversations): "
        + shown
        + (f" and {more} more name(s)" if more > 0 else "")
    )


def trace_path(spec: str) -> Path:
    """The path a trace spec names (``otlp:PATH`` -> PATH).

    Raises:
        EvalSetupError: It does not exist.
    """
    path = Path(spec.split(":", 1)[1] if spec.split(":", 1)[0] in TRACE_SCHEMES else spec)
    if not path.exists():
        raise EvalSetupError(
            f"no such file or folder: {path} (a trace source is otlp:PATH, a file or folder "
            "of OTLP JSON or protobuf, or adk-spans:PATH, ADK's SQLite span file)"
        )
    return path
