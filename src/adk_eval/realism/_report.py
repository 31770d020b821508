"""The realism report: your real users against your simulated users, feature by feature.

`realism_report(real, simulated)` measures the user side of every real conversation
(a `SessionSource`, read one session at a time and redacted first, or sessions) and
of every simulated run (`EvalResult`s, or a JSON report of ``adk-eval run``) with the
same rules (`features`), then compares the two groups (`compare_features`): each
feature with its interval, effect size and Holm-corrected test, one overall distance,
and the sim-to-real gap in the agent's pass rate (the real conversations' known
outcomes against the simulated runs' verdicts). `RealismReport.lines()` says it in
words, ending on how far each feature's rules agree with people reading real dialogues
(`ACCURACY`); `to_data()` is its JSON.

Memory stays flat in the number of sessions: a conversation is measured, its feature
values (a few numbers) kept and the conversation dropped. The real conversations are
read as `StoredConversations` (redacted first); a conversation whose source carries
no message text (a trace with content capture off: it would measure as a silent
user) and an open one, still being written, are left out, counted and named
(`_silent`).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from google.adk.events import Event
from google.adk.sessions import Session

from .._result import EvalResult
from .._seeds import DEFAULT_SEED
from .._sources._filter import SessionFilter
from .._sources._redact._redactor import Redactor
from .._sources._source import GivenSessions, SessionSource
from .._sources._stored import StoredConversation, StoredConversations, with_words
from ._compare import (
    FeatureComparison,
    OverallDistance,
    PassRateGap,
    Value,
    compare_features,
    distance_of_columns,
    pass_rate_gap,
)
from ._features import FEATURE_KINDS, features
from ._runs import SimulatedRun, simulated_runs
from ._silent import OPEN, LeftOut, left_out

__all__ = [
    "ACCURACY",
    "COMPARED",
    "PAIRS_KEPT",
    "PHRASES",
    "RealismReport",
    "ScenarioPair",
    "realism_report",
]

PHRASES: dict[str, str] = {
    "turns": "send this many messages",
    "words_total": "write this many words in all",
    "words_per_message": "write this many words per message",
    "questions_asked": "ask this many questions",
    "agent_questions": "are asked this many questions by the agent",
    "answers_direct": "answer this many of the agent's questions directly",
    "answers_evasive": "dodge this many of the agent's questions",
    "answers_refusing": "refuse this many of the agent's questions",
    "answers_none": "leave this many of the agent's questions unanswered",
    "answered_directly_rate": "answer the agent's questions directly",
    "corrections": "correct themselves or the agent this many times",
    "volunteered": "volunteer this many facts before being asked",
    "volunteered_rate": (
        "volunteer this many facts per message the agent left free (no question for a value)"
    ),
    "topic_changes": "change the topic this many times",
    "repetitions": "repeat themselves this many times",
    "abandoned": "give up without their goal",
    "outcome": "reach their goal",
}
"""What each feature says users do, for the report's sentences."""

COMPARED = (
    "turns",
    "words_per_message",
    "questions_asked",
    "answered_directly_rate",
    "answers_refusing",
    "corrections",
    "volunteered_rate",
    "topic_changes",
    "repetitions",
    "abandoned",
)
"""The features a report compares: one per behaviour (the other counts of `UserBehaviour`
restate these, and each feature compared costs power in the correction for their number;
the outcome is the pass-rate gap's). The two that depend on what the agent asks are rates
over the agent's side: answers per question asked, facts volunteered per message the agent
left free, so an agent that asks more does not make its users look less forthcoming."""


ACCURACY: dict[str, str] = {
    "turns": "100 %",
    "words_per_message": "100 %",
    "questions_asked": "92 %",
    "answered_directly_rate": "96 %",
    "answers_refusing": "96 %",
    "corrections": "100 %",
    "volunteered_rate": "89 % of messages",
    "topic_changes": "92 %",
    "repetitions": "100 %",
    "abandoned": "92 %",
}
"""How often each compared feature's rules agree with a person reading real task
dialogues (24 held-out Taskmaster-4 and Schema-Guided Dialogue conversations, per
dialogue; volunteering per message): docs/simulated-users.md, "How far the rules agree
with people", has the intervals and the bench that measures them."""

PAIRS_KEPT = 20
"""Real and simulated conversations of one scenario kept side by side, at most."""


@dataclass(frozen=True)
class ScenarioPair:
    """One scenario's real conversation and its simulated run, as ``(author, text)`` lines."""

    source: str
    real: tuple[tuple[str, str], ...]
    simulated: tuple[tuple[str, str], ...]
    simulated_passed: bool


@dataclass(frozen=True)
class RealismReport:
    """Real users against simulated users (see the module doc).

    Attributes:
        real: Real conversations measured.
        simulated: Simulated runs measured.
        comparisons: One per feature, those unlike first (smallest corrected p first).
        distance: One number over all features (None: too few conversations).
        gap: The sim-to-real gap in pass rate (None: no real outcome known).
        pairs: Real conversations beside the simulated run of their mined scenario
            (a run named ``mined APP/USER/SESSION``), the first `PAIRS_KEPT`.
        left_out: Real conversations left out: their source carries no message text.
        left_out_sessions: Their session ids (the first `_silent.NAMES_KEPT`).
        open: Real conversations left out: still being written.
        open_sessions: Their names, ``app/user/session-id`` (the first `_silent.NAMES_KEPT`).
    """

    real: int
    simulated: int
    comparisons: tuple[FeatureComparison, ...]
    distance: OverallDistance | None
    gap: PassRateGap | None
    pairs: tuple[ScenarioPair, ...] = ()
    left_out: int = 0
    left_out_sessions: tuple[str, ...] = ()
    open: int = 0
    open_sessions: tuple[str, ...] = ()

    @property
    def unlike(self) -> list[FeatureComparison]:
        """The features where the simulated users are unlikely to behave like the real ones."""
        return [c for c in self.comparisons if c.significant]

    def lines(self) -> list[str]:
        """The report in words: a summary line, then each feature, then the gap."""
        head = (
            f"realism: {self.real} real conversation(s) against {self.simulated} simulated; "
            f"{len(self.unlike)} of {len(self.comparisons)} feature(s) unlike"
        )
        if self.distance is not None:
            head += (
                f"; overall distance {self.distance.distance:.2f} SD over "
                f"{self.distance.features} feature(s) (p = {self.distance.p_value:.3g})"
            )
        lines = [head]
        for left in self._left_out():
            said = left.line()
            lines += [said] if said else []
        lines += [c.sentence(PHRASES.get(c.name)) for c in self.comparisons]
        if self.gap is not None:
            lines.append(self.gap.sentence())
        return [*lines, _accuracy_line(self.comparisons)]

    def to_data(self) -> dict[str, Any]:
        """The report as JSON data."""
        return {
            "real": self.real,
            "simulated": self.simulated,
            "features": [
                {**asdict(c), "sentence": c.sentence(PHRASES.get(c.name))} for c in self.comparisons
            ],
            "distance": asdict(self.distance) if self.distance is not None else None,
            "gap": (
                {**asdict(self.gap), "sentence": self.gap.sentence()}
                if self.gap is not None
                else None
            ),
            "pairs": [asdict(pair) for pair in self.pairs],
            "left_out": self._left_out()[0].to_data(),
            "open": self._left_out()[1].to_data(),
        }

    def _left_out(self) -> tuple[LeftOut, LeftOut]:
        """The real conversations left out: those without their words, the open ones."""
        silent = LeftOut(self.left_out, list(self.left_out_sessions))
        return silent, LeftOut(self.open, list(self.open_sessions), OPEN)


def _accuracy_line(comparisons: Sequence[FeatureComparison]) -> str:
    """How far the rules behind these features agree with people (`ACCURACY`), in one line."""
    agreed = ", ".join(f"{c.name} {ACCURACY[c.name]}" for c in comparisons if c.name in ACCURACY)
    return f"the rules agree with people reading real dialogues: {agreed} (docs/simulated-users.md)"


async def realism_report(
    real: SessionSource | Iterable[Session],
    simulated: Iterable[EvalResult] | Iterable[tuple[Any, ...]],
    *,
    filters: SessionFilter | None = None,
    redactor: Redactor | None = None,
    outcomes: Mapping[str, bool] | None = None,
    user: str = "user",
    seed: int = DEFAULT_SEED,
    resamples: int = 2_000,
    include_open: bool = False,
) -> RealismReport:
    """Real users against simulated users (see the module doc).

    Args:
        real: The real conversations: a source (`open_sessions`) or sessions.
        simulated: The simulated runs: `EvalResult`s, or ``(events, passed[, name])``
            tuples (`runs_of_report` reads them from a JSON report).
        filters: Which real sessions.
        redactor: Applied to each real session first (default: the built-in kinds).
        outcomes: Whether each real conversation reached its goal, by session id:
            the real side of the pass-rate gap.
        user: The author of the user's messages.
        seed: Seeds the permutation and bootstrap draws.
        resamples: Bootstrap resamples and random permutations per feature (the
            smallest p-value a random permutation test gives is ``1 / (resamples + 1)``).
        include_open: Measure open conversations (still being written) too.

    Raises:
        EvalSetupError: The source cannot be read, or none of its conversations
            carries message text (one line saying how to capture it).
    """
    runs = list(simulated_runs(simulated))
    sim = _Columns(_KEPT)
    for events, ok, _ in runs:
        sim.add(features(events, user=user, goal_reached=ok).values())
    source = GivenSessions(real) if isinstance(real, Iterable) else real
    await source.check()
    stream = with_words(source, filters, redactor=redactor, include_open=include_open)
    real_side, pairs = await _real_side(stream, runs, outcomes or {}, user)
    silent, opened = left_out(stream.counts)
    if silent.count and not real_side.count:
        raise silent.nothing_left("realism", source.description)
    comparisons, distance = _compared(real_side, sim, seed, resamples)
    return RealismReport(
        real_side.count,
        sim.count,
        comparisons,
        distance,
        _gap(real_side.columns["outcome"], sim.columns["outcome"]),
        tuple(pairs),
        left_out=silent.count,
        left_out_sessions=tuple(silent.sessions),
        open=opened.count,
        open_sessions=tuple(opened.sessions),
    )


_KEPT = (*COMPARED, "outcome")
"""The feature values kept of each conversation: those compared, and the outcome."""


async def _real_side(
    stream: StoredConversations,
    runs: Sequence[SimulatedRun],
    outcomes: Mapping[str, bool],
    user: str,
) -> tuple[_Columns, list[ScenarioPair]]:
    """The real conversations measured, and those a simulated run played beside it."""
    by_source = {name[len("mined ") :]: (events, ok) for events, ok, name in runs if name}
    measured, pairs = _Columns(_KEPT), list[ScenarioPair]()
    async for stored in stream:
        known = outcomes.get(stored.session.id)
        measured.add(features(stored.session.events, user=user, goal_reached=known).values())
        played = by_source.get(stored.name)
        if played is not None and len(pairs) < PAIRS_KEPT:
            pairs.append(_pair(stored, *played))
    return measured, pairs


def _compared(
    real: _Columns, sim: _Columns, seed: int, resamples: int
) -> tuple[tuple[FeatureComparison, ...], OverallDistance | None]:
    """Each compared feature, those unlike first, and the overall distance (None: too few)."""
    columns = {name: FEATURE_KINDS[name] for name in COMPARED}
    compared = compare_features(
        real.values(columns),
        sim.values(columns),
        columns,
        seed=seed,
        resamples=resamples,
        permutations=resamples,
    )
    compared.sort(key=lambda c: (c.p_adjusted is None, c.p_adjusted or 1.0, c.name))
    if real.count < 2 or sim.count < 2:
        return tuple(compared), None
    both = {name: (real.columns[name], sim.columns[name]) for name in COMPARED}
    return tuple(compared), distance_of_columns(both)


def _gap(real: array[float], sim: array[float]) -> PassRateGap | None:
    """The pass-rate gap over the conversations whose outcome is known."""
    real_known = [v for v in real if not math.isnan(v)]
    sim_known = [v for v in sim if not math.isnan(v)]
    if not real_known or not sim_known:
        return None
    passes = round(math.fsum(real_known)), round(math.fsum(sim_known))
    return pass_rate_gap(passes[0], len(real_known), passes[1], len(sim_known))


class _Columns:
    """Feature values of many conversations, a compact column each (NaN: missing)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.columns = {name: array("d") for name in names}
        self.count = 0

    def add(self, values: Mapping[str, Any]) -> None:
        self.count += 1
        for name, column in self.columns.items():
            value = values[name]
            column.append(math.nan if value is None else float(value))

    def values(self, kinds: Mapping[str, str]) -> Mapping[str, Sequence[Value]]:
        """The columns as `compare_features` reads them, one feature's list at a time."""
        return _Lazy(self.columns, kinds)


class _Lazy(Mapping[str, Sequence[Value]]):
    def __init__(self, columns: Mapping[str, array[float]], kinds: Mapping[str, str]) -> None:
        self._columns, self._kinds = columns, kinds

    def __getitem__(self, name: str) -> Sequence[Value]:
        flag = self._kinds.get(name) == "flag"
        return [None if math.isnan(v) else (bool(v) if flag else v) for v in self._columns[name]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)


def _lines(events: Sequence[Event]) -> tuple[tuple[str, str], ...]:
    found = []
    for event in events:
        parts = (event.content.parts if event.content else None) or []
        text = " ".join(p.text for p in parts if p.text and not p.thought).strip()
        if text:
            found.append((event.author, text))
    return tuple(found)


def _pair(stored: StoredConversation, events: list[Event], passed: bool) -> ScenarioPair:
    return ScenarioPair(stored.name, _lines(stored.session.events), _lines(events), passed)
