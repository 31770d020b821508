"""The two-sample statistics the realism comparison uses, each a textbook method.

Newcombe's hybrid score interval for a difference of proportions (method 10 of
Newcombe 1998: `newcombe`), Fisher's exact test two-sided (R's convention: every table no more
likely than the one seen) and Holm's step-down correction, these three kept in
`adk_eval._statistics` with the other reports' rates and named here too; Cohen's h, Cliff's delta,
a permutation test on a difference of means (exact up to `EXACT_SPLITS` splits,
else seeded random ones with the (b + 1) / (m + 1) correction) and the percentile
bootstrap interval.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Sequence

from .._seeds import DEFAULT_SEED
from .._statistics import Interval, fisher_two_sided, holm, newcombe

__all__ = [
    "EXACT_SPLITS",
    "cliffs_delta",
    "cohens_h",
    "fisher_two_sided",
    "holm",
    "newcombe",
    "percentile",
    "permutation_p",
    "split_p",
]

EXACT_SPLITS = 20_000  # permutation tests enumerate every split up to this many
Statistic = Callable[[Sequence[int]], float]


def cohens_h(p_first: float, p_second: float) -> float:
    """Cohen's h, ``2 asin sqrt(p_second) - 2 asin sqrt(p_first)``: 0.2 small, 0.8 large."""
    return 2 * math.asin(math.sqrt(p_second)) - 2 * math.asin(math.sqrt(p_first))


def cliffs_delta(first: Sequence[float], second: Sequence[float]) -> float:
    """Cliff's delta: the chance a `second` value exceeds a `first` one, minus the reverse."""
    ordered = sorted(first)
    above = sum(bisect.bisect_left(ordered, y) for y in second)
    below = sum(len(ordered) - bisect.bisect_right(ordered, y) for y in second)
    return (above - below) / (len(first) * len(second))


def split_p(size: int, k: int, stat: Statistic, seed: int, draws: int) -> tuple[float, float]:
    """The observed statistic and the share of splits with one at least as large.

    A split picks k of ``range(size)``, the observed one the last k. All splits count up
    to `EXACT_SPLITS` (ties not merged), else `draws` seeded ones, p = (b + 1) / (draws + 1).
    """
    observed = stat(range(size - k, size))
    floor = observed - 1e-9 * max(1.0, abs(observed))  # equal up to rounding counts as equal
    if math.comb(size, k) <= EXACT_SPLITS:
        splits = list(itertools.combinations(range(size), k))
        return observed, sum(stat(split) >= floor for split in splits) / len(splits)
    rng, everyone = random.Random(seed), range(size)
    hits = sum(stat(rng.sample(everyone, k)) >= floor for _ in range(draws))
    return observed, (hits + 1) / (draws + 1)


def permutation_p(
    first: Sequence[float],
    second: Sequence[float],
    *,
    seed: int = DEFAULT_SEED,
    draws: int = 10_000,
) -> float:
    """The two-sided permutation p-value of ``mean(second) - mean(first)``.

    How often relabelling the pooled values gives a difference of means as far from
    0 or farther: over every split up to `EXACT_SPLITS`, else `draws` seeded ones.
    """
    if not first or not second:
        return 1.0
    pooled = [*first, *second]
    total, k, rest = math.fsum(pooled), len(second), len(first)

    def gap(chosen: Sequence[int]) -> float:
        part = math.fsum(pooled[i] for i in chosen)
        return abs(part / k - (total - part) / rest)

    return split_p(len(pooled), k, gap, seed, draws)[1]


def percentile(estimate: float, draws: Sequence[float], confidence: float) -> Interval:
    """The percentile bootstrap interval: the middle `confidence` of the `draws`."""
    ordered, tail = sorted(draws), (1 - confidence) / 2

    def quantile(q: float) -> float:  # linear between order statistics
        below, fraction = divmod(q * (len(ordered) - 1), 1)
        above = ordered[min(int(below) + 1, len(ordered) - 1)]
        return ordered[int(below)] * (1 - fraction) + above * fraction

    low, high = quantile(tail), quantile(1 - tail)
    return Interval(estimate, min(low, estimate), max(high, estimate), confidence)
