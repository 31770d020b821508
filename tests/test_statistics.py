"""The statistics against published values and brute-force counts."""

from __future__ import annotations

import itertools
import math

import pytest

from adk_eval._statistics import (
    agreement,
    fisher,
    fisher_two_sided,
    holm,
    pass_at_k,
    pass_hat_k,
    runs_to_decide,
    wilson,
)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [  # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombes_table(successes, n, low, high):
    interval = wilson(successes, n)

    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)
    assert interval.estimate == successes / n


def test_three_passes_in_three_runs_do_not_rule_out_a_coin_flip():
    interval = wilson(3, 3)

    assert interval.high == 1.0
    assert interval.low == pytest.approx(0.4385, abs=1e-4)
    assert str(interval) == "100% [44%, 100%]"


def test_more_confidence_is_a_wider_interval_and_no_runs_know_nothing():
    assert wilson(5, 10, 0.99).low < wilson(5, 10, 0.95).low < wilson(5, 10, 0.8).low
    assert (wilson(0, 0).low, wilson(0, 0).high) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= n"):
        wilson(4, 3)


def brute_force_pass_hat_k(outcomes: list[bool], k: int) -> float:
    """The share of k-subsets of the runs that all passed (what the estimator is unbiased for)."""
    subsets = list(itertools.combinations(outcomes, k))
    return sum(all(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("passes", "n", "k"), [(3, 5, 2), (5, 5, 3), (0, 4, 1), (7, 10, 4)])
def test_pass_hat_k_and_pass_at_k_count_the_k_subsets(passes, n, k):
    outcomes = [True] * passes + [False] * (n - passes)
    subsets = list(itertools.combinations(outcomes, k))

    assert pass_hat_k(passes, n, k) == pytest.approx(brute_force_pass_hat_k(outcomes, k))
    assert pass_at_k(passes, n, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


def brute_force_fisher(a: int, n_a: int, b: int, n_b: int) -> tuple[float, float]:
    """Every way of dealing the a + b passes among the n_a + n_b runs, counted."""
    runs = n_a + n_b
    deals = list(itertools.combinations(range(runs), a + b))
    in_b = [sum(1 for run in deal if run >= n_a) for deal in deals]
    return (
        sum(x <= b for x in in_b) / len(deals),
        sum(x >= b for x in in_b) / len(deals),
    )


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b"),
    [(5, 5, 0, 5), (4, 5, 2, 5), (3, 3, 3, 3), (1, 1, 0, 1), (6, 8, 2, 7), (0, 4, 4, 4)],
)
def test_fisher_counts_every_deal_of_the_passes(a, n_a, b, n_b):
    assert fisher(a, n_a, b, n_b) == pytest.approx(brute_force_fisher(a, n_a, b, n_b))


def test_fisher_on_the_lady_tasting_tea():
    # Fisher (1935): 3 of 4 cups right against 1 of 4; the one-sided p-value is 17/70
    p_lower, _ = fisher(3, 4, 1, 4)

    assert p_lower == pytest.approx(17 / 70)
    assert math.isclose(fisher(1, 1, 0, 1)[0], 0.5)  # one run each side can never decide


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b"),
    [(5, 5, 0, 5), (4, 5, 2, 5), (3, 3, 3, 3), (1, 4, 4, 5), (6, 8, 2, 7), (0, 0, 2, 4)],
)
def test_fisher_two_sided_sums_every_deal_no_likelier_than_the_one_seen(a, n_a, b, n_b):
    runs = n_a + n_b
    deals = list(itertools.combinations(range(runs), a + b))
    in_b = [sum(1 for run in deal if run >= n_a) for deal in deals]
    likelihood = {x: in_b.count(x) / len(deals) for x in set(in_b)}
    expected = sum(p for p in likelihood.values() if p <= likelihood[b] * (1 + 1e-7))

    assert fisher_two_sided(a, n_a, b, n_b) == pytest.approx(expected)
    assert fisher_two_sided(a, n_a, b, n_b) >= min(fisher(a, n_a, b, n_b)) - 1e-12  # both tails


def test_holm_multiplies_the_ranked_p_values_and_keeps_them_in_order():
    # Sorted: 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; each is
    # then raised to the largest before it, so 0.04 becomes 0.06. In the input's order:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 2 * 0.5, then capped at 1
    assert holm([]) == []


def test_cohens_kappa_against_a_hand_computed_table():
    # 50 items: both pass 20, judge pass / people fail 5, judge fail / people pass 10,
    # both fail 15. Agreement 35/50 = 0.70; the judge passes 25/50, the people 30/50;
    # chance agreement 0.5 * 0.6 + 0.5 * 0.4 = 0.50; kappa = (0.70 - 0.50) / 0.50 = 0.40.
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10
    pairs += [(False, False)] * 15

    found = agreement(pairs)

    assert (found.count, found.raw, found.base_rate) == (50, 0.7, 0.6)
    assert found.kappa == pytest.approx(0.40)
    assert agreement([(True, True)] * 3).kappa is None  # no variation: kappa undefined
    assert agreement([(True, False), (False, True)]).kappa == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("cases", "runs"), [(1, 4), (3, 4), (4, 5), (12, 5), (13, 6), (46, 6), (47, 7)]
)
def test_runs_to_decide_is_the_fewest_runs_whose_flip_clears_holm(cases, runs):
    assert runs_to_decide(cases) == runs
    assert fisher(runs, runs, 0, runs)[0] < 0.05 / cases  # a complete flip is decided...
    assert fisher(runs - 1, runs - 1, 0, runs - 1)[0] >= 0.05 / cases  # ...one run fewer is not
