"""Calibration: the persona settings whose users behave closest to your real users.

`calibrate(sessions, settings)` splits the real conversations in two (seeded): on
the *fitting* part, each candidate setting replays every conversation with a user
that follows it (`replay_with`: the agent's recorded messages, the user side drawn
from the setting) and is scored by the overall distance between the replayed and
the real users' behaviour (`overall_distance`: the mean over the report's behaviours
of the gap between the two means, in standard deviations). The closest setting is
then measured on the *held-out* part, which took no part in choosing it, beside the
default setting: that held-out distance is the honest figure.

What it cannot do: the agent's messages are the recorded ones, so an agent that would
have reacted differently to a dodge is not replayed; and it tunes the settings the
replayed user follows, which an LLM persona follows only as well as it follows its
instruction (`PersonaSettings.instruction`): check with ``adk-eval realism`` on the
simulated runs.

`calibrate_source(source)` calibrates on the stored conversations of a source
(`StoredConversations`: redacted; those without their words, which would calibrate
to a silent user, and open ones left out, counted and named).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._seeds import DEFAULT_SEED
from .._sources._filter import SessionFilter
from .._sources._source import SessionSource
from .._sources._stored import with_words
from ._compare import overall_distance
from ._features import features
from ._persona import PersonaSettings, grid, replay_with
from ._report import COMPARED
from ._silent import left_out

__all__ = ["Calibration", "calibrate", "calibrate_source"]

Row = dict[str, float | bool | None]


@dataclass(frozen=True)
class Calibration:
    """The setting closest to the real users, and how close it is where it was not chosen.

    Attributes:
        best: The closest setting on the fitting part.
        fitting: Its distance on the fitting part.
        held_out: Its distance on the held-out part.
        default_held_out: The default setting's distance on the held-out part.
        table: Every setting tried, with its fitting distance, closest first.
        sizes: Conversations in the fitting and held-out parts.
    """

    best: PersonaSettings
    fitting: float
    held_out: float
    default_held_out: float
    table: tuple[tuple[PersonaSettings, float], ...]
    sizes: tuple[int, int]

    def lines(self) -> list[str]:
        """The calibration in words."""
        fit, held = self.sizes
        return [
            f"calibration: {len(self.table)} setting(s) tried on {fit} conversation(s), "
            f"checked on {held} held out",
            f"closest: {self.best.label()}",
            f"distance to your users (standard deviations, 0 = alike): {self.fitting:.2f} where "
            f"chosen, {self.held_out:.2f} held out (the default setting: "
            f"{self.default_held_out:.2f} held out)",
            f"as a persona instruction: {self.best.instruction()}",
        ]


def _rows(sessions: Sequence[Session], settings: PersonaSettings | None, seed: int) -> list[Row]:
    rng = random.Random(seed)
    rows = []
    for session in sessions:
        events = session.events if settings is None else replay_with(session, settings, rng)
        values = features(events).values()
        rows.append({name: values[name] for name in COMPARED})
    return rows


def _distance(real: list[Row], replayed: list[Row]) -> float:
    return overall_distance(real, replayed, draws=0).distance


def calibrate(
    sessions: Sequence[Session],
    settings: Sequence[PersonaSettings] | None = None,
    *,
    held_out: float = 0.3,
    seed: int = DEFAULT_SEED,
) -> Calibration:
    """The persona setting closest to the users of `sessions` (see the module doc).

    Args:
        sessions: Real conversations (redacted; `open_sessions` reads them).
        settings: The candidates (default: `grid()`, cooperation by volunteering).
        held_out: The share of conversations kept out of the choice.
        seed: Seeds the split and the replayed users' draws.

    Raises:
        EvalSetupError: Fewer than 4 conversations, or no candidate.
    """
    candidates = list(settings) if settings is not None else grid()
    if len(sessions) < 4 or not candidates:
        raise EvalSetupError(
            f"calibration needs at least 4 conversations and one setting, got "
            f"{len(sessions)} and {len(candidates)}"
        )
    order = list(range(len(sessions)))
    random.Random(seed).shuffle(order)
    cut = max(1, round(len(order) * held_out))
    held = [sessions[i] for i in order[:cut]]
    fit = [sessions[i] for i in order[cut:]]
    fit_rows = _rows(fit, None, seed)
    table = sorted(
        ((s, _distance(fit_rows, _rows(fit, s, seed))) for s in candidates),
        key=lambda pair: pair[1],
    )
    best, fitting = table[0]
    held_rows = _rows(held, None, seed)
    return Calibration(
        best=best,
        fitting=fitting,
        held_out=_distance(held_rows, _rows(held, best, seed + 1)),
        default_held_out=_distance(held_rows, _rows(held, PersonaSettings(), seed + 1)),
        table=tuple(table),
        sizes=(len(fit), len(held)),
    )


async def calibrate_source(
    source: SessionSource,
    filters: SessionFilter | None = None,
    *,
    seed: int = DEFAULT_SEED,
    include_open: bool = False,
) -> tuple[Calibration, list[str]]:
    """`calibrate` on the stored conversations of `source`, and what it left out, in words.

    Open conversations are left out unless `include_open`.

    Raises:
        EvalSetupError: The source cannot be read; none of its conversations carries
            message text; too few conversations (one line each).
    """
    await source.check()
    stream = with_words(source, filters, include_open=include_open)
    sessions = [stored.session async for stored in stream]
    silent, opened = left_out(stream.counts)
    if silent.count and not sessions:
        raise silent.nothing_left("realism --calibrate", source.description)
    said = [line for line in (silent.line(), opened.line()) if line]
    return calibrate(sessions, seed=seed), said
