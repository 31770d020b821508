"""Redaction of production conversations: personal data replaced by typed, numbered markers.

A `Redactor` finds e-mail addresses (written or spoken), phone numbers, payment
card numbers, id numbers, account and order ids, names, street addresses and
dates of birth (see `_kinds` for which module finds each, and what it accepts),
plus what a user's regexes or function find. `redact_session` returns a copy of
a session in which every text a person or a model could read has each value
replaced by a marker such as ``<EMAIL_1>`` or ``<NAME_2>``::

    clean, counts = redact_session(session, Redactor())
    counts.describe()  # 'redacted 2 e-mails, 1 card number in 1 session'

Within one conversation the same value always gets the same marker (e-mails
compared case-insensitively, phone and card numbers by their digits), so a
metric that checks whether the agent repeated a card number in a tool call still
works on markers. Each conversation numbers its markers from 1.

Some values are known by what surrounds them: a text is read with the message
before it (the agent asked "Your date of birth?") or the key it is stored under
(``{"dob": ...}``). A value split over two messages ("4111 1111" then "1111
1111") is found in the two joined, and each part gets the value's marker
(`_split`). Values hidden in an encoding are found too (`_hidden`): the text a
base64 string or a ``text/*`` blob decodes to is redacted and encoded again.
"""

from __future__ import annotations

import re
from bisect import bisect_right, insort
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from google.adk.sessions import Session

from ..._errors import EvalSetupError
from ._counts import MarkerTable, RedactionCounts
from ._hidden import Encoded, base64_texts
from ._kinds import DETECTORS, KINDS
from ._ner import NamesModel, names_model
from ._parts import redact_event
from ._split import Cut, split_values

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

UserFunction = Callable[[str], Iterable[tuple[int, int, str]]]
"""A user's detector: ``(text) -> [(start, end, kind), ...]``."""

_KIND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class Span(NamedTuple):
    """A value to replace: ``text[start:end]``, its kind and its normalized form."""

    start: int
    end: int
    kind: str
    key: str


class Redactor:
    """What to find and replace: built-in kinds, extra regexes, a user function, a names model.

    Args:
        kinds: The built-in kinds to find, of `KINDS` (all by default).
        extra: ``(kind, regex)`` pairs: each match of the regex (a string or a
            compiled pattern) is a value of that kind, replaced by
            ``<KIND_n>``, the kind upper-cased.
        function: ``(text) -> [(start, end, kind), ...]``, for values no regex finds.
        ner: Where a named-entity model finds names nobody introduces (`_ner`):
            ``"auto"`` (an installed spaCy pipeline through Presidio, with the
            ``redact`` extra; else none), a pipeline's name or folder, a
            Presidio ``AnalyzerEngine``, or None. Loaded at the first text, once.

    Where two finds overlap, the user function's win, then the extra regexes'
    (in their order), then the built-in kinds in `DETECTORS`' order, then the model's names.

    Raises:
        EvalSetupError: A kind that is not built in, a kind name that is not a
            word, a regex that does not compile, or a names model not installed.
    """

    def __init__(
        self,
        kinds: Iterable[str] = KINDS,
        extra: Iterable[tuple[str, str | re.Pattern[str]]] | None = None,
        function: UserFunction | None = None,
        ner: object = "auto",
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
        self.ner = ner if "name" in self.kinds else None
        self._names: NamesModel | None = names_model(self.ner)

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
        return (
            f"Redactor(kinds={self.kinds!r}, extra={extra!r}, function={self.function!r}, "
            f"ner={self.ner!r})"
        )

    def find(self, text: str, before: str = "") -> list[Span]:
        """The values to replace in `text`: never overlapping, in the order they appear.

        Args:
            text: The text to read.
            before: What it answers: the message before it, or the key it is stored under.
        """
        candidates: list[Span] = []
        if self.function is not None:
            candidates.extend(_called(self.function, text))
        for kind, pattern in self.extra:
            for match in pattern.finditer(text):
                if match.end() > match.start():
                    candidates.append(Span(match.start(), match.end(), kind, match.group()))
        for kind in self.kinds:
            found = sorted(DETECTORS[kind](text, before), key=lambda f: f[0] - f[1])
            candidates.extend(Span(start, end, kind, key) for start, end, key in found)
        if self._names is not None and text.strip():
            for start, end in self._names(text):
                candidates.append(Span(start, end, "name", text[start:end].lower()))
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


def redact_text(
    text: str,
    redactor: Redactor,
    table: MarkerTable,
    before: str = "",
    cuts: Iterable[Cut] = (),
) -> str:
    """`text` with every value `redactor` finds replaced by its marker from `table`.

    A base64 value in it that decodes to text with such values is decoded,
    redacted and encoded again (`_hidden`).

    Args:
        text: Any text of the conversation.
        redactor: What to find.
        table: The conversation's markers (shared by all its texts).
        before: What `text` answers: the message before, or the key it is stored under.
        cuts: Pieces of values split over this text and its neighbour (`_split`),
            replaced by their value's marker.

    Returns:
        The redacted text (`text` itself when nothing was found).
    """
    if not redactor.enabled:
        return text
    spans = _without_overlaps([Span(*cut) for cut in cuts] + redactor.find(text, before))
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
            inner = redact_text(found.text, redactor, table, before)
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
    Ids, authors, timestamps and other values are kept as they are. Each event's
    texts are read with the text of the event before; a dict's values with their key.

    Args:
        session: A session as read from production; it is not modified.
        redactor: What to find (`Redactor.none()` copies the session unchanged).

    Returns:
        The redacted copy and the counts of what was replaced (over one session).
    """
    copy = session.model_copy(deep=True)
    table = MarkerTable()
    if not redactor.enabled:
        return copy, table.counts()
    texts = [_text_of(event) for event in copy.events]
    cuts = _cuts(copy.events, texts, redactor)
    for index, event in enumerate(copy.events):
        before = texts[index - 1] if index else ""
        pending = cuts.get(index, {})

        def redact(
            value: Any, before: str = before, pending: dict[str, list[Cut]] = pending
        ) -> Any:
            return _redact_value(value, redactor, table, before, pending)

        redact_event(event, redact)
    copy.state = _redact_value(copy.state, redactor, table, "", {})
    return copy, table.counts()


def _text_of(event: Any) -> str:
    """The text parts of an event, joined ('' when it has none)."""
    parts = event.content.parts if event.content is not None else None
    return "\n".join(part.text for part in parts or [] if part.text)


def _cuts(
    events: list[Any], texts: list[str], redactor: Redactor
) -> dict[int, dict[str, list[Cut]]]:
    """Each event's pieces of values split with its neighbours: by event, then by text."""
    cuts: dict[int, dict[str, list[Cut]]] = {}
    for index in range(1, len(events)):
        first, second = texts[index - 1], texts[index]
        if not first or not second or events[index - 1].author != events[index].author:
            continue
        before = texts[index - 2] if index > 1 else ""
        in_first, in_second = split_values(first, second, redactor.find, before)
        if in_first:
            last_part = first.rsplit("\n", 1)[-1]
            shift = len(first) - len(last_part)
            moved = [cut._replace(start=cut.start - shift, end=cut.end - shift) for cut in in_first]
            cuts.setdefault(index - 1, {}).setdefault(last_part, []).extend(moved)
            first_part = second.split("\n", 1)[0]
            cuts.setdefault(index, {}).setdefault(first_part, []).extend(in_second)
    return cuts


def _redact_value(
    value: Any, redactor: Redactor, table: MarkerTable, before: str, cuts: dict[str, list[Cut]]
) -> Any:
    """`value` with its strings redacted, through nested dicts, lists and tuples."""
    if isinstance(value, str):
        return redact_text(value, redactor, table, before, cuts.get(value, ()))
    if isinstance(value, dict):
        clean: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and (new := redact_text(key, redactor, table)) != key:
                key, again = new, 1
                while key in clean or key in value:
                    again += 1
                    key = f"{new} ({again})"
            below = key if isinstance(key, str) else before
            clean[key] = _redact_value(item, redactor, table, below, cuts)
        return clean
    if isinstance(value, (list, tuple)):
        items = [_redact_value(item, redactor, table, before, cuts) for item in value]
        return items if isinstance(value, list) else tuple(items)
    return value
