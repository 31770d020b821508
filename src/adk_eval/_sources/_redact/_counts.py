"""What redaction replaced: the markers of one conversation and the counts over many.

`MarkerTable` gives each value of a conversation its marker (``<EMAIL_1>``,
``<NAME_2>``: the kind upper-cased and numbered per kind as values appear, the
same value the same marker however it is written); `RedactionCounts` is what
the table replaced, added up over conversations for a score or a mining.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ._kinds import KINDS, NOUNS

__all__ = ["MarkerTable", "RedactionCounts"]


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
            one, many = NOUNS.get(kind, (f"{kind} value", f"{kind} values"))
            parts.append(f"{count} {one if count == 1 else many}")
        return f"redacted {', '.join(parts)} in {sessions}"


def _rank(kind: str) -> int:
    return KINDS.index(kind) if kind in KINDS else 0
