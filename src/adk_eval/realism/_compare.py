"""Real users against simulated users, feature by feature: how realistic is the simulation?

`compare_features` gives per feature (a flag, count, rate or mean) each group's estimate
and the difference (simulated minus real) with intervals, an effect size, a two-sided
p-value and the p-value after Holm's correction over the features. `overall_distance`
sums the features up in one number; `pass_rate_gap` is the sim-to-real gap in pass
rates. Everything random is seeded: the same conversations give the same report.
"""

from __future__ import annotations

import math
import random
import statistics
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from .._seeds import DEFAULT_SEED
from .._statistics import DEFAULT_CONFIDENCE, Interval, wilson
from ._two_sample import (
    cliffs_delta,
    cohens_h,
    fisher_two_sided,
    holm,
    newcombe,
    percentile,
    permutation_p,
    split_p,
)

__all__ = [
    "FeatureComparison",
    "GroupSummary",
    "OverallDistance",
    "PassRateGap",
    "Value",
    "cliffs_delta",
    "cohens_h",
    "column_of",
    "compare_features",
    "distance_of_columns",
    "fisher_two_sided",
    "holm",
    "newcombe",
    "overall_distance",
    "pass_rate_gap",
    "permutation_p",
]

Value = float | bool | None
_Pair = tuple[Sequence[Value], Sequence[Value]]
_Row = Mapping[str, Value]
_Statistic = Callable[[Sequence[int]], float]
KINDS = ("flag", "count", "rate", "mean")  # a flag is compared as a share, the others as means
ALPHA = 0.05
_NOISE = ("a difference this size is within noise", "unlikely to be noise")


@dataclass(frozen=True)
class GroupSummary:
    """One group's values of one feature.

    Attributes:
        n: Conversations with a value (None values are dropped).
        estimate: The share (flags) or mean (numbers) with its interval; None when n is 0.
    """

    n: int
    estimate: Interval | None


@dataclass(frozen=True)
class FeatureComparison:
    """One feature, the real users' against the simulated users'.

    Attributes:
        name: The feature.
        kind: One of `KINDS`.
        real: The real users' summary.
        simulated: The simulated users' summary.
        difference: Simulated minus real, with its interval (it, `effect_size` and the
            p-values are None when a group has no value).
        effect_size: Simulated against real: Cohen's h for flags; for numbers Cliff's delta
            (P(sim > real) - P(sim < real)), not Hedges' g: counts are skewed and rates
            pile up at 0 and 1, and it needs only an order, no distribution.
        p_value: The two-sided p-value of no difference.
        p_adjusted: `p_value` after Holm's correction over the `features` compared.
        features: How many features Holm's correction was over.
        significant: Whether `p_adjusted` is below 0.05.
    """

    name: str
    kind: str
    real: GroupSummary
    simulated: GroupSummary
    difference: Interval | None
    effect_size: float | None
    p_value: float | None
    p_adjusted: float | None = None
    features: int = 1
    significant: bool = False

    def sentence(self, phrase: str | None = None) -> str:
        """In words, `phrase` saying what users do (``show <name>`` by default).

        "your simulated users <phrase> 94 % of the time [90, 97], your users 71 % [64, 77]: a
        difference of 23 points [15, 31], unlikely to be noise (p = 0.0004 after Holm's ...)".
        """
        phrase = phrase or f"show {self.name}"
        sim, real = self.simulated.estimate, self.real.estimate
        gap, p = self.difference, self.p_adjusted
        if sim is None or real is None or gap is None or p is None:
            return f"{phrase}: not compared ({self.simulated.n} simulated, {self.real.n} real)"
        share = self.kind in ("flag", "rate")
        tail = " of the time" if self.kind == "flag" else " on average"
        holm_ = f" after Holm's correction for {self.features} features" * (self.features > 1)
        return (
            f"your simulated users {phrase} {_shown(sim, share, tail)}, your users"
            f" {_shown(real, share)}: a difference of {_shown(gap, share, unit=' points')},"
            f" {_NOISE[self.significant]} ({_p(p)}{holm_})"
        )


def _shown(interval: Interval, share: bool, tail: str = "", unit: str = " %") -> str:
    def text(x: float) -> str:
        return str(round(100 * x)) if share else f"{x:.3g}"

    middle = f"{unit if share else ''}{tail}"
    return f"{text(interval.estimate)}{middle} [{text(interval.low)}, {text(interval.high)}]"


def _p(p: float) -> str:
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.2f}" if p >= 0.01 else f"p = {p:.1g}"


def _compare_flags(name: str, values: _Pair, confidence: float) -> FeatureComparison:
    kept = [[v for v in side if v is not None] for side in values]
    if any(v not in (0, 1) for side in kept for v in side):
        raise ValueError(f"feature {name!r} is a flag: its values must be True, False or None")
    (a, n_a), (b, n_b) = ((int(sum(side)), len(side)) for side in kept)
    real = GroupSummary(n_a, wilson(a, n_a, confidence) if n_a else None)
    sim = GroupSummary(n_b, wilson(b, n_b, confidence) if n_b else None)
    if not (n_a and n_b):
        return FeatureComparison(name, "flag", real, sim, None, None, None)
    difference = newcombe(a, n_a, b, n_b, confidence)
    h, p = cohens_h(a / n_a, b / n_b), fisher_two_sided(a, n_a, b, n_b)
    return FeatureComparison(name, "flag", real, sim, difference, h, p)


def _compare_numbers(
    name: str,
    kind: str,
    values: _Pair,
    rng: random.Random,
    resamples: tuple[int, int],
    confidence: float,
) -> FeatureComparison:
    first, second = ([float(v) for v in side if v is not None] for side in values)
    draws = [  # the bootstrap: each group's mean, resampled with replacement
        [statistics.fmean(rng.choices(s, k=len(s))) for _ in range(resamples[0])] if s else []
        for s in (first, second)
    ]
    real, sim = (
        GroupSummary(len(s), percentile(statistics.fmean(s), d, confidence) if s else None)
        for s, d in zip((first, second), draws, strict=True)
    )
    if not (first and second):
        return FeatureComparison(name, kind, real, sim, None, None, None)
    gaps = [b - a for a, b in zip(*draws, strict=True)]
    difference = percentile(statistics.fmean(second) - statistics.fmean(first), gaps, confidence)
    p = permutation_p(first, second, seed=rng.randrange(2**32), draws=resamples[1])
    return FeatureComparison(name, kind, real, sim, difference, cliffs_delta(first, second), p)


def compare_features(
    real: Mapping[str, Sequence[Value]],
    simulated: Mapping[str, Sequence[Value]],
    kinds: Mapping[str, str],
    *,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = 2_000,
    permutations: int = 10_000,
) -> list[FeatureComparison]:
    """Compare every feature in `kinds`, real users' values against simulated users'.

    Args:
        real: Per feature, one value per real conversation (None: undefined there, dropped).
        simulated: The same for simulated conversations.
        kinds: Each feature's kind (one of `KINDS`), in the order to report them.
        seed: Seeds the bootstrap and permutations, per feature (adding one changes no other).
        confidence: Of every interval.
        resamples: Bootstrap resamples for the intervals of means.
        permutations: Random splits of a permutation test too large to enumerate.

    Raises:
        ValueError: An unknown kind, or a flag with a value other than a bool.
    """
    compared = []
    for name, kind in kinds.items():
        if kind not in KINDS:
            raise ValueError(f"feature {name!r}: kind must be one of {KINDS}, got {kind!r}")
        values = real.get(name, ()), simulated.get(name, ())
        rng = random.Random(f"{seed}:{name}")
        compared.append(
            _compare_flags(name, values, confidence)
            if kind == "flag"
            else _compare_numbers(name, kind, values, rng, (resamples, permutations), confidence)
        )
    tested = {c.name: c.p_value for c in compared if c.p_value is not None}
    adjusted = dict(zip(tested, holm(list(tested.values())), strict=True))
    return [
        replace(c, features=len(tested), p_adjusted=p, significant=p is not None and p < ALPHA)
        for c in compared
        for p in [adjusted.get(c.name)]
    ]


@dataclass(frozen=True)
class OverallDistance:
    """How far apart the two groups are over all features, in one number.

    Attributes:
        distance: The mean over features of ``|mean_sim - mean_real| / sd`` (the sd over
            all conversations). 0 is no gap; below 0.1 the usual bar for "balanced".
        p_value: The chance of a distance this large were both groups one population.
        features: The features averaged (those with values in both groups and some spread).
    """

    distance: float
    p_value: float
    features: int


def overall_distance(
    real_rows: Sequence[_Row],
    simulated_rows: Sequence[_Row],
    *,
    seed: int = DEFAULT_SEED,
    draws: int = 1_000,
) -> OverallDistance:
    """The mean absolute standardized difference of the features, with a permutation p-value.

    A row maps features to values for one conversation. Chosen over the energy distance
    as it reads per feature (0.3: the average feature's means sit 0.3 sd apart) and drops
    missing values (None or absent) per feature. The sd is over both groups (flags as 0
    and 1): all-false against all-true counts 2. Relabels rows as `permutation_p` does.
    """
    names = sorted({name for row in [*real_rows, *simulated_rows] for name in row})
    columns = {
        name: (
            column_of(row.get(name) for row in real_rows),
            column_of(row.get(name) for row in simulated_rows),
        )
        for name in names
    }
    return distance_of_columns(columns, seed=seed, draws=draws)


def column_of(values: Iterable[Value]) -> array[float]:
    """Values as a compact column: floats, NaN for a missing value (flags as 0 and 1)."""
    return array("d", (math.nan if v is None else float(v) for v in values))


def distance_of_columns(
    columns: Mapping[str, tuple[array[float], array[float]]],
    *,
    seed: int = DEFAULT_SEED,
    draws: int = 1_000,
) -> OverallDistance:
    """`overall_distance` of features given as ``(real, simulated)`` columns (`column_of`)."""
    kept = []
    k = size = 0
    for real, simulated in columns.values():
        whole = array("d", [*real, *simulated])
        k, size = len(simulated), len(whole)
        present = [v for v in whole if not math.isnan(v)]
        in_real = sum(not math.isnan(v) for v in real)
        if 0 < in_real < len(present) and statistics.pstdev(present) > 0:
            kept.append((whole, statistics.pstdev(present), math.fsum(present), len(present)))

    def distance(chosen: Sequence[int]) -> float:
        gaps = []
        for column, spread, total, count in kept:
            values = [x for x in (column[i] for i in chosen) if not math.isnan(x)]
            if 0 < len(values) < count:
                part, rest = math.fsum(values), count - len(values)
                gaps.append(abs(part / len(values) - (total - part) / rest) / spread)
        return statistics.fmean(gaps) if gaps else 0.0

    observed, p = split_p(size, k, distance, seed, draws)
    return OverallDistance(observed, p, len(kept))


@dataclass(frozen=True)
class PassRateGap:
    """The agent's pass rate with simulated users against real users: the sim-to-real gap.

    Attributes:
        real: The pass rate with real users, with its Wilson interval (`simulated` likewise).
        simulated: The pass rate with simulated users.
        gap: Simulated minus real, with Newcombe's interval.
        p_value: Fisher's exact two-sided p-value of no gap.
    """

    real: Interval
    simulated: Interval
    gap: Interval
    p_value: float

    def sentence(self) -> str:
        """The gap in words."""
        return (
            f"your agent passes {_shown(self.simulated, True)} of conversations with simulated"
            f" users, {_shown(self.real, True)} with your users: a gap of"
            f" {_shown(self.gap, True, unit=' points')}, {_NOISE[self.p_value < ALPHA]}"
            f" ({_p(self.p_value)})"
        )


def pass_rate_gap(
    real_passes: int,
    real_n: int,
    sim_passes: int,
    sim_n: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PassRateGap:
    """The pass rate with simulated users minus with real ones (ValueError: a side is empty)."""
    return PassRateGap(
        wilson(real_passes, real_n, confidence),
        wilson(sim_passes, sim_n, confidence),
        newcombe(real_passes, real_n, sim_passes, sim_n, confidence),
        fisher_two_sided(real_passes, real_n, sim_passes, sim_n),
    )
