"""The statistics behind every rate adk_eval shows: intervals, pass^k, and two-rate tests.

LLM agents are noisy, so a pass rate from a few runs is an estimate. Each one
shown comes with a **Wilson score interval**: the range of true pass rates that
the observed runs are consistent with, at 95 % confidence by default. With 3
passes in 3 runs the interval is [0.44, 1.00]: three passes do not rule out an
agent that passes only half the time.

* `wilson`: the interval of a rate from ``successes`` of ``n``.
* `pass_hat_k`: the unbiased estimate of pass^k (all of k fresh runs pass) from
  ``c`` passes in ``n`` runs, ``C(c, k) / C(n, k)``; `pass_at_k` likewise for
  pass@k (at least one of k passes), ``1 - C(n - c, k) / C(n, k)``.
* `settled`: whether a case's verdict is certain: its interval lies wholly above
  or wholly below a pass threshold (what adaptive repeats stop on).
* `newcombe`: the difference of two rates (``b / n_b - a / n_a``) with Newcombe's
  hybrid score interval, built from their Wilson intervals: a change of pass rate
  (simulated against real users, with faults against without) and its range.
* `fisher`: Fisher's exact test on two rates (``a`` of ``n_a`` against ``b`` of
  ``n_b``): the one-sided p-values that B is lower, or higher, than A only by
  chance. It is exact for any number of runs, which matters at the 1 to 10 runs
  a case gets; with one run on each side it can never decide (p >= 0.5).
  `fisher_two_sided`: the same test, two-sided (a difference either way).
* `holm`: Holm's step-down adjustment of several p-values tested together (the
  more tests, the more small p-values come by chance).
* `runs_to_decide`: the fewest runs a side at which any case can be decided
  among a number of compared cases, Holm's correction included.

* `agreement`: how well two raters (a judge and people) agree on pass/fail:
  raw agreement and Cohen's kappa, which discounts the agreement two raters
  would reach by chance given how often each says "pass" (the base rates).

Pure arithmetic: no dependency, nothing imported that a command would pay for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

__all__ = [
    "DEFAULT_CONFIDENCE",
    "Agreement",
    "Interval",
    "agreement",
    "fisher",
    "fisher_two_sided",
    "holm",
    "newcombe",
    "pass_at_k",
    "pass_hat_k",
    "runs_to_decide",
    "settled",
    "wilson",
]

DEFAULT_CONFIDENCE = 0.95
"""The confidence of every interval shown, unless told otherwise."""


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval.

    Attributes:
        estimate: The observed value (a rate, or pass^k).
        low: The interval's lower end.
        high: The interval's upper end.
        confidence: The interval's confidence (0.95: 95 %).
    """

    estimate: float
    low: float
    high: float
    confidence: float = DEFAULT_CONFIDENCE

    def __str__(self) -> str:
        return f"{self.estimate:.0%} [{self.low:.0%}, {self.high:.0%}]"

    def to_dict(self) -> dict[str, float]:
        """``{"estimate", "low", "high", "confidence"}`` (its fields), for reports."""
        return asdict(self)


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf((1 + confidence) / 2)


def wilson(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """The Wilson score interval of the rate ``successes / n``.

    With no trials the rate is unknown: the estimate is 0 and the interval [0, 1].
    """
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Interval(0.0, 0.0, 1.0, confidence)
    z = _z(confidence)
    rate = successes / n
    denominator = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(rate, low, high, confidence)


def newcombe(
    a: int, n_a: int, b: int, n_b: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """``b / n_b - a / n_a`` with Newcombe's hybrid score interval (his 1998 method 10).

    From the rates' Wilson intervals: ``d - sqrt((p_b - low_b)^2 + (high_a - p_a)^2)`` to
    ``d + sqrt((high_b - p_b)^2 + (p_a - low_a)^2)``; inside [-1, 1], good coverage near
    0 % and 100 %, unlike the normal interval. A side with no trials raises ValueError.
    """
    if n_a < 1 or n_b < 1:
        raise ValueError(f"need trials on both sides, got {n_a} and {n_b}")
    first, second = wilson(a, n_a, confidence), wilson(b, n_b, confidence)
    d = second.estimate - first.estimate
    low = d - math.hypot(second.estimate - second.low, first.high - first.estimate)
    high = d + math.hypot(second.high - second.estimate, first.estimate - first.low)
    return Interval(d, max(-1.0, low), min(1.0, high), confidence)


def settled(passes: int, n: int, threshold: float, confidence: float = DEFAULT_CONFIDENCE) -> bool:
    """Whether ``passes`` of ``n`` runs settle the verdict against `threshold`.

    Settled when the rate's interval lies wholly above the threshold (the case
    passes at least that often) or wholly below it (it does not). At 95 % and a
    threshold of 0.5 that takes 4 runs that all agree; a case that passes half
    the time never settles.
    """
    interval = wilson(passes, n, confidence)
    return n > 0 and (interval.low > threshold or interval.high < threshold)


def pass_hat_k(passes: int, n: int, k: int) -> float:
    """The unbiased estimate of pass^k: the chance that k fresh runs all pass.

    ``C(passes, k) / C(n, k)``; with fewer than k runs, ``(passes / n) ** k``.
    """
    if n == 0:
        return 0.0
    if n < k:
        return (passes / n) ** k
    return math.comb(passes, k) / math.comb(n, k)


def pass_at_k(passes: int, n: int, k: int) -> float:
    """The unbiased estimate of pass@k: the chance that one of k fresh runs passes."""
    if n == 0:
        return 0.0
    if n < k:
        return 1 - (1 - passes / n) ** k
    return 1 - math.comb(n - passes, k) / math.comb(n, k)


def _deals(a: int, n_a: int, b: int, n_b: int) -> tuple[range, Callable[[int], float]]:
    """B's possible successes with the margins fixed, and the chance of each (hypergeometric)."""
    total, successes = n_a + n_b, a + b
    ways = math.comb(total, n_b)

    def chance(x: int) -> float:  # P(B has x successes | the margins)
        return math.comb(successes, x) * math.comb(total - successes, n_b - x) / ways

    return range(max(0, n_b - (total - successes)), min(n_b, successes) + 1), chance


def fisher(a: int, n_a: int, b: int, n_b: int) -> tuple[float, float]:
    """Fisher's exact test of the rates ``a / n_a`` (before) and ``b / n_b`` (after).

    Returns:
        ``(p_lower, p_higher)``: the probability, were both rates the same, of a
        B as low as this or lower, and of one as high or higher. A small
        ``p_lower`` is evidence that B's rate is really lower.
    """
    if n_a == 0 or n_b == 0:
        return 1.0, 1.0
    deals, chance = _deals(a, n_a, b, n_b)
    lower = sum(chance(x) for x in range(deals.start, b + 1))
    higher = sum(chance(x) for x in range(b, deals.stop))
    return min(1.0, lower), min(1.0, higher)


def fisher_two_sided(a: int, n_a: int, b: int, n_b: int) -> float:
    """Fisher's exact two-sided p-value of ``a / n_a`` against ``b / n_b``.

    The summed probability of every table with the same margins no likelier than the
    observed one (as R's ``fisher.test`` computes it); 1 if a side is empty.
    """
    deals, chance = _deals(a, n_a, b, n_b)
    observed = chance(b) * (1 + 1e-7)
    return min(1.0, sum(p for p in map(chance, deals) if p <= observed))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of `p_values`, in their order.

    The i-th smallest of m times ``m - i + 1``, raised to the one before, at most 1:
    a test is decided at level alpha when its adjusted p-value is below alpha.
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def runs_to_decide(cases: int, alpha: float = 0.05) -> int:
    """The fewest runs a side at which a drop of one of `cases` compared cases can be decided.

    A complete flip (n of n runs passed, then 0 of n) is the strongest evidence n
    runs a side can give: Fisher's one-sided p is ``1 / C(2n, n)``. Holm's
    correction tests the smallest p of `cases` at ``alpha / cases``, so no case is
    decided before a complete flip clears that: 4 runs for one case (p = 0.014),
    5 from 4 cases (0.05 / 4 = 0.0125), 6 from 13, 7 from 47.

    Raises:
        ValueError: `cases` is below 1, or `alpha` is not between 0 and 1.
    """
    if cases < 1 or not 0 < alpha < 1:
        raise ValueError(f"need cases >= 1 and 0 < alpha < 1, got cases={cases}, alpha={alpha}")
    runs = 1
    while fisher(runs, runs, 0, runs)[0] >= alpha / cases:
        runs += 1
    return runs


@dataclass(frozen=True)
class Agreement:
    """How two raters agree on pass/fail verdicts.

    Attributes:
        count: Items both rated.
        raw: The share of items they agree on.
        kappa: Cohen's kappa: 1 is perfect agreement, 0 what chance alone gives,
            below 0 worse than chance (None: undefined, when both always say the same).
        base_rate: The share of items the second rater (the people) passed.
    """

    count: int
    raw: float
    kappa: float | None
    base_rate: float


def agreement(pairs: Sequence[tuple[bool, bool]]) -> Agreement:
    """`Agreement` of ``(rater A, rater B)`` verdict pairs (A: the judge, B: the people)."""
    n = len(pairs)
    if n == 0:
        return Agreement(0, 0.0, None, 0.0)
    same = sum(a == b for a, b in pairs) / n
    a_yes = sum(a for a, _ in pairs) / n
    b_yes = sum(b for _, b in pairs) / n
    chance = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    kappa = None if chance == 1 else (same - chance) / (1 - chance)
    return Agreement(n, same, kappa, b_yes)
