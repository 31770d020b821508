"""Redaction of production conversations: personal data replaced by typed, numbered markers.

A `Redactor` finds e-mail addresses, phone numbers, payment card numbers and id
numbers (see `_redact_patterns` for what each detector accepts), plus what a
user's regexes or function find. `redact_session` returns a copy of a session
in which every text a person or a model could read has each value replaced by a
marker such as ``<EMAIL_1>`` or ``<CARD_2>``::

    clean, counts = redact_session(session, Redactor())
    counts.describe()  # 'redacted 2 e-mails, 1 card number in 1 session'

Within one conversation the same value always gets the same marker (e-mails
compared case-insensitively, phone and card numbers by their digits), so a
metric that checks whether the agent repeated a card number in a tool call still
works on markers. Each conversation numbers its markers from 1.

Values hidden in an encoding are found too (`_redact_hidden`): the text a
base64 string or a ``text/*`` blob decodes to is redacted and encoded again.
"""

from __future__ import annotations

import re
from bisect import bisect_right, insort
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from google.adk.sessions import Session

from ..._errors import EvalSetupError
from ._hidden import Encoded, base64_texts
from ._parts import redact_event
from ._patterns import DETECTORS

__all__ = [
    "KINDS",
    "MarkerTable",
    "RedactionCounts",
    "Redactor",
    "Span",
    "UserFunction",
    "redact_session",
    "redact_text",
]

KINDS: tuple[str, ...] = ("email", "phone", "card", "id")
"""The built-in kinds of personal data, all on by default."""

UserFunction = Callable[[str], Iterable[tuple[int, int, str]]]
"""A user's detector: ``(text) -> [(start, end, kind), ...]``."""

_KIND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NEEDS_A_LOOK = re.compile(r"[@0-9]")  # every built-in detector needs an @ or a digit
_NOUNS = {
    "email": ("e-mail", "e-mails"),
    "phone": ("phone number", "phone numbers"),
    "card": ("card number", "card numbers"),
    "id": ("id number", "id numbers"),
}


class Span(NamedTuple):
    """A value to replace: ``text[start:end]``, its kind and its normalized form."""

    start: int
    end: int
    kind: str
    key: str


class Redactor:
    """What to find and replace: built-in kinds, extra regexes and a user function.

    Args:
        kinds: The built-in kinds to find, of ``email``, ``phone``, ``card``, ``id``.
        extra: ``(kind, regex)`` pairs: each match of the regex (a string or a
            compiled pattern) is a value of that kind, replaced by
            ``<KIND_n>``, the kind upper-cased.
        function: ``(text) -> [(start, end, kind), ...]``, for values no regex finds.

    Where two finds overlap, the user function's win, then the extra regexes'
    (in their order), then e-mails, cards, ids and phone numbers.

    Raises:
        EvalSetupError: A kind that is not built in, a kind name that is not a
            word, or a regex that does not compile.
    """

    def __init__(
        self,
        kinds: Iterable[str] = KINDS,
        extra: Iterable[tuple[str, str | re.Pattern[str]]] | None = None,
        function: UserFunction | None = None,
    ) -> None:
        wanted = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        unknown = sorted(set(wanted) - set(DETECTORS))
        if unknown:
            raise EvalSetupError(
                f"Redactor: unknown kinds {unknown}; the built-in kinds are {list(KINDS)} "
                "(find others with `extra=[(kind, regex)]` or `function=`)"
            )
        self.kinds = tuple(kind for kind in DETECTORS if kind in wanted)
        self.extra = tuple(_compiled(kind, pattern) for kind, pattern in extra or ())
        self.function = function

    @classmethod
    def none(cls) -> Redactor:
        """A redactor that finds nothing: sessions pass unchanged."""
        return cls(kinds=())

    @property
    def enabled(self) -> bool:
        """Whether this redactor can find anything at all."""
        return bool(self.kinds or self.extra or self.function)

    def __repr__(self) -> str:
        extra = [kind for kind, _ in self.extra]
        return f"Redactor(kinds={self.kinds!r}, extra={extra!r}, function={self.function!r})"

    def find(self, text: str) -> list[Span]:
        """The values to replace in `text`: never overlapping, in the order they appear."""
        candidates: list[Span] = []
        if self.function is not None:
            candidates.extend(_called(self.function, text))
        for kind, pattern in self.extra:
            for match in pattern.finditer(text):
                if match.end() > match.start():
                    candidates.append(Span(match.start(), match.end(), kind, match.group()))
        if self.kinds and _NEEDS_A_LOOK.search(text):
            for kind in self.kinds:
                found = sorted(DETECTORS[kind](text), key=lambda f: f.start - f.end)
                candidates.extend(Span(f.start, f.end, kind, f.key) for f in found)
        return _without_overlaps(candidates)


def _compiled(kind: str, pattern: str | re.Pattern[str]) -> tuple[str, re.Pattern[str]]:
    if not isinstance(kind, str) or not _KIND_NAME.fullmatch(kind):
        raise EvalSetupError(f"Redactor: the kind {kind!r} must be a word, like 'account_id'")
    try:
        return kind, pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    except (re.error, TypeError) as error:
        raise EvalSetupError(f"Redactor: the regex {pattern!r} for {kind!r}: {error}") from None


def _called(function: UserFunction, text: str) -> Iterator[Span]:
    """The user function's finds, checked: within the text, with a kind that is a word."""
    for found in function(text):
        start, end, kind = found
        fits = isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)
        if not fits or not isinstance(kind, str) or not _KIND_NAME.fullmatch(kind):
            raise EvalSetupError(
                f"Redactor: the function {function!r} returned {found!r}; each find must be "
                f"(start, end, kind) with 0 <= start < end <= {len(text)} and a word as kind"
            )
        yield Span(start, end, kind, text[start:end])


def _without_overlaps(candidates: list[Span]) -> list[Span]:
    """The candidates that overlap none before them in the list, sorted by start."""
    kept: list[Span] = []
    for span in candidates:
        at = bisect_right(kept, span.start, key=lambda kept_span: kept_span.start)
        if at and kept[at - 1].end > span.start:
            continue
        if at < len(kept) and kept[at].start < span.end:
            continue
        insort(kept, span, key=lambda kept_span: kept_span.start)
    return kept


class MarkerTable:
    """The markers of one conversation: each value's marker, numbered per kind as they appear.

    It keeps the values it has seen (normalized) to give a value the same marker
    every time: keep it for one conversation only, and never store it.
    """

    def __init__(self) -> None:
        self._markers: dict[tuple[str, str], str] = {}
        self._distinct: Counter[str] = Counter()
        self._occurrences: Counter[str] = Counter()

    def marker(self, kind: str, key: str) -> str:
        """The marker of a value of `kind` whose normalized form is `key`; counts it."""
        self._occurrences[kind] += 1
        marker = self._markers.get((kind, key))
        if marker is None:
            self._distinct[kind] += 1
            marker = f"<{kind.upper()}_{self._distinct[kind]}>"
            self._markers[(kind, key)] = marker
        return marker

    def counts(self, sessions: int = 1) -> RedactionCounts:
        """What this table replaced so far, as counts over `sessions` conversations."""
        return RedactionCounts(dict(self._occurrences), dict(self._distinct), sessions)


@dataclass(frozen=True)
class RedactionCounts(Mapping[str, int]):
    """How many values were replaced, by kind: a mapping of kind to occurrences.

    Counts add up (``a + b``, or ``sum(counts)``) over sessions.

    Attributes:
        occurrences: Kind -> values replaced (each occurrence counted).
        distinct: Kind -> different values replaced, per conversation, summed.
        sessions: How many sessions these counts cover (with values or not).
    """

    occurrences: Mapping[str, int] = field(default_factory=dict)
    distinct: Mapping[str, int] = field(default_factory=dict)
    sessions: int = 0

    def __post_init__(self) -> None:
        for name in ("occurrences", "distinct"):
            counts: Mapping[str, int] = getattr(self, name)
            ordered = sorted(counts, key=lambda kind: (kind not in KINDS, _rank(kind), kind))
            object.__setattr__(self, name, {kind: counts[kind] for kind in ordered if counts[kind]})

    def __getitem__(self, kind: str) -> int:
        return self.occurrences[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self.occurrences)

    def __len__(self) -> int:
        return len(self.occurrences)

    def __hash__(self) -> int:
        return hash((tuple(self.occurrences.items()), tuple(self.distinct.items()), self.sessions))

    def __add__(self, other: object) -> RedactionCounts:
        if not isinstance(other, RedactionCounts):
            return NotImplemented
        return RedactionCounts(
            dict(Counter(self.occurrences) + Counter(other.occurrences)),
            dict(Counter(self.distinct) + Counter(other.distinct)),
            self.sessions + other.sessions,
        )

    def __radd__(self, other: object) -> RedactionCounts:
        if other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    @property
    def total(self) -> int:
        """Values replaced, of every kind."""
        return sum(self.occurrences.values())

    def describe(self) -> str:
        """One line, like 'redacted 3 e-mails, 1 phone number in 4 sessions'."""
        sessions = f"{self.sessions} session{'' if self.sessions == 1 else 's'}"
        if not self.occurrences:
            return f"redacted nothing in {sessions}"
        parts = []
        for kind, count in self.occurrences.items():
            one, many = _NOUNS.get(kind, (f"{kind} value", f"{kind} values"))
            parts.append(f"{count} {one if count == 1 else many}")
        return f"redacted {', '.join(parts)} in {sessions}"


def _rank(kind: str) -> int:
    return KINDS.index(kind) if kind in KINDS else 0


def redact_text(text: str, redactor: Redactor, table: MarkerTable) -> str:
    """`text` with every value `redactor` finds replaced by its marker from `table`.

    A base64 value in it that decodes to text with such values is decoded,
    redacted and encoded again (`_redact_hidden`).

    Args:
        text: Any text of the conversation.
        redactor: What to find.
        table: The conversation's markers (shared by all its texts).

    Returns:
        The redacted text (`text` itself when nothing was found).
    """
    if not redactor.enabled:
        return text
    spans = redactor.find(text)
    hidden = [e for e in base64_texts(text) if not any(_overlap(e, span) for span in spans)]
    if not spans and not hidden:
        return text
    finds: list[Span | Encoded] = [*spans, *hidden]
    pieces: list[str] = []
    last = 0
    for found in sorted(finds, key=lambda found: found.start):
        pieces.append(text[last : found.start])
        if isinstance(found, Span):
            pieces.append(table.marker(found.kind, found.key))
        else:
            inner = redact_text(found.text, redactor, table)
            pieces.append(
                text[found.start : found.end] if inner == found.text else found.encode(inner)
            )
        last = found.end
    pieces.append(text[last:])
    return "".join(pieces)


def _overlap(encoded: Encoded, span: Span) -> bool:
    return encoded.start < span.end and span.start < encoded.end


def redact_session(session: Session, redactor: Redactor) -> tuple[Session, RedactionCounts]:
    """A copy of `session` with every readable text redacted, and what was replaced.

    Redacted: the events' text parts (thoughts included), function call arguments,
    function responses, code and code results, transcriptions, error messages,
    custom metadata, outputs, state deltas and compaction summaries, ``text/*``
    blobs and their names, and the session's state; in nested dicts and lists,
    strings and keys (two keys redacted alike stay apart: ``<EMAIL_1> (2)``).
    Ids, authors, timestamps and other values are kept as they are.

    Args:
        session: A session as read from production; it is not modified.
        redactor: What to find (`Redactor.none()` copies the session unchanged).

    Returns:
        The redacted copy and the counts of what was replaced (over one session).
    """
    copy = session.model_copy(deep=True)
    table = MarkerTable()
    if redactor.enabled:

        def redact(value: Any) -> Any:
            return _redact_value(value, redactor, table)

        for event in copy.events:
            redact_event(event, redact)
        copy.state = redact(copy.state)
    return copy, table.counts()


def _redact_value(value: Any, redactor: Redactor, table: MarkerTable) -> Any:
    """`value` with its strings redacted, through nested dicts, lists and tuples."""
    if isinstance(value, str):
        return redact_text(value, redactor, table)
    if isinstance(value, dict):
        clean: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and (new := redact_text(key, redactor, table)) != key:
                key, again = new, 1
                while key in clean or key in value:
                    again += 1
                    key = f"{new} ({again})"
            clean[key] = _redact_value(item, redactor, table)
        return clean
    if isinstance(value, list):
        return [_redact_value(item, redactor, table) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_value(item, redactor, table) for item in value)
    return value
