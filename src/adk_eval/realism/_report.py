"""The realism report: your real users against your simulated users, feature by feature.

`realism_report(real, simulated)` measures the user side of every real conversation
(a `SessionSource`, read one session at a time and redacted first, or sessions) and
of every simulated run (`EvalResult`s, or a JSON report of ``adk-eval run``) with the
same rules (`features`), then compares the two groups (`compare_features`): each
feature with its interval, effect size and Holm-corrected test, one overall distance,
and the sim-to-real gap in the agent's pass rate (the real conversations' known
outcomes against the simulated runs' verdicts). `RealismReport.lines()` says it in
words; `to_data()` is its JSON.

Memory stays flat in the number of sessions: a conversation is measured, its feature
values (a few numbers) kept and the conversation dropped. A conversation whose source
carries no message text (a trace with content capture off) is left out, counted and
named (`_silent`): it would measure as a silent user.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import AsyncIterable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from .._errors import EvalSetupError
from .._result import EvalResult
from .._seeds import DEFAULT_SEED
from .._sources._filter import SessionFilter
from .._sources._redact._redactor import Redactor, redact_session
from .._sources._source import SessionSource
from .._user_agents import is_stop_signal
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
from ._silent import LeftOut, lacks_text

__all__ = [
    "COMPARED",
    "PAIRS_KEPT",
    "PHRASES",
    "RealismReport",
    "ScenarioPair",
    "realism_report",
    "runs_of_report",
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
    "volunteered",
    "topic_changes",
    "repetitions",
    "abandoned",
)
"""The features a report compares: one per behaviour (the other counts of `UserBehaviour`
restate these, and each feature compared costs power in the correction for their number;
the outcome is the pass-rate gap's)."""


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
    """

    real: int
    simulated: int
    comparisons: tuple[FeatureComparison, ...]
    distance: OverallDistance | None
    gap: PassRateGap | None
    pairs: tuple[ScenarioPair, ...] = ()
    left_out: int = 0
    left_out_sessions: tuple[str, ...] = ()

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
        silent = LeftOut(self.left_out, list(self.left_out_sessions)).line()
        lines += [silent] if silent else []
        lines += [c.sentence(PHRASES.get(c.name)) for c in self.comparisons]
        if self.gap is not None:
            lines.append(self.gap.sentence())
        return lines

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
            "left_out": LeftOut(self.left_out, list(self.left_out_sessions)).to_data(),
        }


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
) -> RealismReport:
    """Real users against simulated users (see the module doc).

    Args:
        real: The real conversations: a source (`open_sessions`) or sessions.
        simulated: The simulated runs: `EvalResult`s, or ``(events, passed[, name])``
            tuples (`runs_of_report` reads them from a JSON report).
        filters: Which real sessions (a source's only).
        redactor: Applied to each real session first (default: the built-in kinds).
        outcomes: Whether each real conversation reached its goal, by session id:
            the real side of the pass-rate gap.
        user: The author of the user's messages.
        seed: Seeds the permutation and bootstrap draws.
        resamples: Bootstrap resamples and random permutations per feature (the
            smallest p-value a random permutation test gives is ``1 / (resamples + 1)``).
    """
    redactor = redactor if redactor is not None else Redactor()
    runs = list(_runs(simulated))
    by_source = {name[len("mined ") :]: (events, ok) for events, ok, name in runs if name}
    kept = (*COMPARED, "outcome")
    sim = _Columns(kept)
    for events, ok, _ in runs:
        sim.add(features(events, user=user, goal_reached=ok).values())
    real_side = _Columns(kept)
    pairs: list[ScenarioPair] = []
    silent = LeftOut()
    async for session in _sessions(real, filters):
        if lacks_text(real, session):
            silent.add(session)
            continue
        if redactor.enabled:
            session, _ = redact_session(session, redactor)
        known = (outcomes or {}).get(session.id)
        real_side.add(features(session.events, user=user, goal_reached=known).values())
        played = by_source.get(f"{session.app_name}/{session.user_id}/{session.id}")
        if played is not None and len(pairs) < PAIRS_KEPT:
            pairs.append(_pair(session, *played))
    if silent.count and not real_side.count:
        raise silent.nothing_left("realism", getattr(real, "description", "the source"))
    columns = {name: FEATURE_KINDS[name] for name in COMPARED}
    compared = compare_features(
        real_side.values(columns),
        sim.values(columns),
        columns,
        seed=seed,
        resamples=resamples,
        permutations=resamples,
    )
    compared.sort(key=lambda c: (c.p_adjusted is None, c.p_adjusted or 1.0, c.name))
    distance = None
    if real_side.count > 1 and sim.count > 1:
        both = {name: (real_side.columns[name], sim.columns[name]) for name in COMPARED}
        distance = distance_of_columns(both)
    gap = _gap(real_side.columns["outcome"], sim.columns["outcome"])
    return RealismReport(
        real_side.count,
        sim.count,
        tuple(compared),
        distance,
        gap,
        tuple(pairs),
        silent.count,
        tuple(silent.sessions),
    )


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


async def _sessions(
    real: SessionSource | Iterable[Session], filters: SessionFilter | None
) -> AsyncIterable[Session]:
    if hasattr(real, "sessions") and hasattr(real, "check"):
        await real.check()
        async for session in real.sessions(filters):
            yield session
        return
    for session in real:
        yield session


def _runs(
    simulated: Iterable[EvalResult] | Iterable[tuple[Any, ...]],
) -> Iterable[tuple[list[Event], bool, str]]:
    """Each simulated run's events (without its stop signal), verdict and name ("" unknown)."""
    for item in simulated:
        if isinstance(item, EvalResult):
            events, passed, name = list(item.events), item.passed, item.name
        else:
            events, passed, name = item[0], item[1], (item[2] if len(item) > 2 else "")
        yield [event for event in events if not _stops(event)], bool(passed), str(name)


def _lines(events: Sequence[Event]) -> tuple[tuple[str, str], ...]:
    found = []
    for event in events:
        parts = (event.content.parts if event.content else None) or []
        text = " ".join(p.text for p in parts if p.text and not p.thought).strip()
        if text:
            found.append((event.author, text))
    return tuple(found)


def _pair(session: Session, events: list[Event], passed: bool) -> ScenarioPair:
    source = f"{session.app_name}/{session.user_id}/{session.id}"
    return ScenarioPair(source, _lines(session.events), _lines(events), passed)


def _stops(event: Event) -> bool:
    """A simulated user's stop signal: how it ends, not something a person says."""
    parts = (event.content.parts if event.content else None) or []
    text = " ".join(part.text for part in parts if part.text).strip()
    return event.author == "user" and is_stop_signal(text)


def runs_of_report(path: Path) -> list[tuple[list[Event], bool, str]]:
    """The simulated runs of a JSON report (``adk-eval run --json``): messages, verdict, name.

    Raises:
        EvalSetupError: Not a JSON report of adk-eval (one line naming it).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = data["results"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise EvalSetupError(
            f"{path} is not a JSON report of `adk-eval run --json` ({type(error).__name__}): "
            "give the report of the simulated runs of the mined cases"
        ) from None
    found = []
    for run in runs:
        events = _events_of(run.get("conversation") or [])
        found.append((events, run.get("status") == "passed", str(run.get("name") or "")))
    return found


def _events_of(entries: list[dict[str, Any]]) -> list[Event]:
    """A report's conversation as the events `features` reads.

    Its messages, and each long-running call with the user's answer to it (paired
    by tool name, in order).
    """
    events: list[Event] = []
    waiting: dict[str, list[str]] = {}
    for index, entry in enumerate(entries):
        kind, author = entry.get("kind"), str(entry.get("author") or entry.get("role") or "user")
        if kind == "message":
            role = "user" if entry.get("role") == "user" else "model"
            part = types.Part(text=str(entry.get("text") or ""))
            events.append(Event(author=author, content=types.Content(role=role, parts=[part])))
        elif kind == "tool_call" and entry.get("long_running"):
            call_id, name = f"asked-{index}", str(entry.get("name") or "")
            waiting.setdefault(name, []).append(call_id)
            call = types.FunctionCall(id=call_id, name=name, args=entry.get("args") or {})
            content = types.Content(role="model", parts=[types.Part(function_call=call)])
            events.append(Event(author=author, content=content, long_running_tool_ids={call_id}))
        elif kind == "tool_response" and author == "user" and waiting.get(entry.get("name") or ""):
            name = str(entry.get("name"))
            answer = types.FunctionResponse(
                id=waiting[name].pop(0), name=name, response=_as_dict(entry.get("response"))
            )
            content = types.Content(role="user", parts=[types.Part(function_response=answer)])
            events.append(Event(author="user", content=content))
    return events


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"result": value}
