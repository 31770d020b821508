"""One stored conversation, built complete, and the one stream of them every reader reads.

A `StoredConversation` is what scoring, shadow replay, mining and the realism
report get of a conversation a source holds. It is built in one place
(`StoredConversation.build`), in the order its parts depend on one another:

1. its `name`, ``app/user/session-id``, from the session as read;
2. what its source does not carry of it (`lacks`: a trace's ``state``, its
   ``content`` when capture was off), as the source said when it read it;
3. whether it is still being written, and why (`opened`: see `_open`), judged on
   the session as read;
4. the session redacted (`session`), and what redaction replaced in it
   (`redacted`; None: read as stored).

Nothing is assigned afterwards. Nobody outside this wing redacts a session or
asks a source what a session lacks: they read these records.

`StoredConversations(source, ...)` streams them. Each session the source reads
becomes a record, or is left out, counted and named in `counts` as the stream
goes, in this order:

* a session whose rows cannot be read: skipped, unless `unreadable` stops the read;
* an open conversation, unless `include_open` (then it is counted and handed on);
* a conversation whose source lacks what the reader `needs` (its words, for a
  reader of what was said).

Once the stream has ended, `counts.notes` holds what the source said about
itself (a trace source: its traces that are no conversation, what its spans
lack). `each(work, at_once)` hands the records to `work`, a bounded number at a
time, for the readers that await something per conversation.

`with_words(source, ...)` is the stream of a reader of what was said (shadow
replay, mining, the realism report): a conversation without its words (`WORDS`)
is left out, and a session that cannot be read ends the read.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from google.adk.sessions import Session

from .._errors import AdkEvalError
from ._files import OnUnreadable, Unreadable, refuse
from ._filter import SessionFilter
from ._open import OPEN_FOR, still_open
from ._redact._redactor import RedactionCounts, Redactor, redact_session
from ._source import SessionSource, close_read

__all__ = [
    "KEEP_NAMES",
    "Named",
    "ReadCounts",
    "StoredConversation",
    "StoredConversations",
    "WORDS",
    "session_name",
    "with_words",
]

KEEP_NAMES = 50
"""Conversations left out that a stream names, at most, for each reason (all are counted)."""

WORDS = frozenset({"content"})
"""What a reader of what was said needs of a stored conversation (a trace with content
capture off lacks it)."""

_T = TypeVar("_T")


def session_name(session: Session) -> str:
    """A stored session's name: ``app/user/session-id``."""
    return f"{session.app_name}/{session.user_id}/{session.id}"


@dataclass(frozen=True)
class StoredConversation:
    """One stored conversation, as every reader gets it (see the module doc).

    Attributes:
        session: The session, redacted unless the reader asked for it as stored.
        name: ``app/user/session-id``.
        lacks: Facts its source does not carry (``"state"``, ``"content"``,
            ``"usage"``): a metric that needs one is not applicable on it.
        opened: Why it is still being written; None when it is not.
        redacted: What redaction replaced in it; None: read as stored.
        trace_id: The OpenTelemetry trace of its newest invocation, when its source
            carries one (spans do; ADK's session stores do not).
    """

    session: Session
    name: str
    lacks: frozenset[str] = frozenset()
    opened: str | None = None
    redacted: RedactionCounts | None = None
    trace_id: str | None = None

    @classmethod
    def build(
        cls,
        session: Session,
        *,
        lacks: frozenset[str] = frozenset(),
        opened: str | None = None,
        redactor: Redactor | None = None,
    ) -> StoredConversation:
        """`session` as its source read it, made a record (see the module doc).

        Args:
            session: The session as read.
            lacks: What its source does not carry of it.
            opened: Why it is still being written (`still_open`), if it is.
            redactor: What to redact (None, or one that finds nothing: as stored).
        """
        name = session_name(session)
        if redactor is None or not redactor.enabled:
            return cls(session, name, lacks, opened)
        clean, found = redact_session(session, redactor)
        return cls(clean, name, lacks, opened, found)


@dataclass
class Named(Generic[_T]):
    """How many were left out for one reason, and the first `KEEP_NAMES` of them."""

    count: int = 0
    first: list[_T] = field(default_factory=list)

    def add(self, item: _T) -> None:
        """Counts `item`, and names it while fewer than `KEEP_NAMES` are."""
        self.count += 1
        if len(self.first) < KEEP_NAMES:
            self.first.append(item)


@dataclass
class ReadCounts:
    """What a stream has handed on, left out and replaced so far.

    Attributes:
        read: Conversations handed on.
        opened: Open conversations, ``(name, why)`` (handed on only if included).
        unreadable: Sessions whose rows could not be read.
        lacking: Conversations left out for lacking what the reader needs (session ids).
        redacted: What redaction replaced in the conversations handed on (None: read
            as stored, or none handed on).
        notes: What the source said about itself, one line each (once the stream ended).
    """

    read: int = 0
    opened: Named[tuple[str, str]] = field(default_factory=Named)
    unreadable: Named[Unreadable] = field(default_factory=Named)
    lacking: Named[str] = field(default_factory=Named)
    redacted: RedactionCounts | None = None
    notes: tuple[str, ...] = ()


class StoredConversations:
    """The stored conversations of `source` that pass `filters`, as records (see the module doc).

    Args:
        source: Where they are (`open_sessions`).
        filters: Which sessions (all by default).
        redactor: What is redacted before anyone reads them (default: the built-in
            kinds; `Redactor.none()`: as stored).
        include_open: Hand on open conversations too (they are counted either way).
        open_for: Seconds after its last update that a conversation stopped mid-turn
            counts as open.
        needs: Facts the reader needs: a conversation whose source lacks one is left out.
        unreadable: Called with a session that cannot be read, once it is counted: it
            raises to stop the read. None: the session is skipped.
    """

    def __init__(
        self,
        source: SessionSource,
        filters: SessionFilter | None = None,
        *,
        redactor: Redactor | None = None,
        include_open: bool = False,
        open_for: float = OPEN_FOR,
        needs: frozenset[str] = frozenset(),
        unreadable: OnUnreadable | None = None,
    ) -> None:
        self.source = source
        self.filters = filters or SessionFilter()
        self.redactor = redactor if redactor is not None else Redactor()
        self.include_open, self.open_for, self.needs = include_open, open_for, needs
        self._stop = unreadable
        self.counts = ReadCounts()

    async def __aiter__(self) -> AsyncGenerator[StoredConversation, None]:
        now = time.time()
        reads = self.source.read(self.filters, self._unreadable)
        try:
            async for session, lacks in reads:
                stored = self._kept(session, lacks, now)
                if stored is not None:
                    yield stored
        finally:
            await close_read(reads)
        self.counts.notes = tuple(self.source.notes)

    def _unreadable(self, found: Unreadable) -> None:
        self.counts.unreadable.add(found)
        if self._stop is not None:
            self._stop(found)

    def _kept(
        self, session: Session, lacks: frozenset[str], now: float
    ) -> StoredConversation | None:
        """`session` as a record, or None when it is left out (and counted)."""
        opened = still_open(session, now, self.open_for)
        if opened is not None:
            self.counts.opened.add((session_name(session), opened))
            if not self.include_open:
                return None
        if self.needs & lacks:
            self.counts.lacking.add(session.id)
            return None
        stored = StoredConversation.build(
            session, lacks=lacks, opened=opened, redactor=self.redactor
        )
        trace_id = self.source.trace_of(session.id)
        if trace_id is not None:
            stored = dataclasses.replace(stored, trace_id=trace_id)
        self.counts.read += 1
        if stored.redacted is not None:
            before = self.counts.redacted
            self.counts.redacted = stored.redacted if before is None else before + stored.redacted
        return stored

    async def each(
        self, work: Callable[[int, StoredConversation], Awaitable[None]], at_once: int
    ) -> None:
        """Awaits `work(index, conversation)` for each record, at most `at_once` at a time.

        `index` is the record's place in the order they were read. Records are read
        only as far ahead as `at_once` workers take them. The first `AdkEvalError`
        that `work` or the source raises ends the stream and is raised as it is (not
        in an exception group); anything else raised propagates from the task group.
        """
        problems: list[AdkEvalError] = []
        send, receive = anyio.create_memory_object_stream[tuple[int, StoredConversation]](at_once)

        async def worker(
            records: MemoryObjectReceiveStream[tuple[int, StoredConversation]],
        ) -> None:
            async with records:
                async for index, stored in records:
                    try:
                        await work(index, stored)
                    except AdkEvalError as error:
                        problems.append(error)
                        group.cancel_scope.cancel()
                        return

        async with anyio.create_task_group() as group:
            for _ in range(at_once):
                group.start_soon(worker, receive.clone())
            receive.close()
            async with send, aclosing(self.__aiter__()) as stream:
                try:
                    index = 0
                    async for stored in stream:
                        await send.send((index, stored))
                        index += 1
                except AdkEvalError as error:
                    problems.append(error)
                    group.cancel_scope.cancel()
        if problems:
            raise problems[0]


def with_words(
    source: SessionSource,
    filters: SessionFilter | None = None,
    *,
    redactor: Redactor | None = None,
    include_open: bool = False,
) -> StoredConversations:
    """The stored conversations of `source` as a reader of what was said reads them.

    Redacted (`redactor`: the built-in kinds by default); those whose source carries
    no words (`WORDS`), and open ones unless `include_open`, left out and counted; a
    session that cannot be read ends the read (one line naming it).
    """
    return StoredConversations(
        source,
        filters,
        redactor=redactor,
        include_open=include_open,
        needs=WORDS,
        unreadable=refuse(source.description),
    )
