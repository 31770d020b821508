"""Real against simulated users: the comparison's statistics against hand-computed values."""

from __future__ import annotations

import math
import random

import pytest

from adk_eval._statistics import Interval, wilson
from adk_eval.realism._compare import (
    FeatureComparison,
    GroupSummary,
    cliffs_delta,
    cohens_h,
    compare_features,
    fisher_two_sided,
    holm,
    newcombe,
    overall_distance,
    pass_rate_gap,
    permutation_p,
)


@pytest.mark.parametrize(
    ("first", "second", "low", "high"),
    [  # Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10 (hybrid score);
        # his differences are the second rate minus the first here.
        ((48, 80), (56, 70), 0.0524, 0.3339),
        ((3, 10), (9, 10), 0.1705, 0.8090),
        ((0, 29), (5, 56), -0.0381, 0.1926),
        ((0, 20), (0, 10), -0.1611, 0.2775),
        ((0, 20), (10, 10), 0.6791, 1.0000),
    ],
)
def test_newcombe_matches_the_published_table(first, second, low, high):
    interval = newcombe(*first, *second)

    assert interval.estimate == pytest.approx(second[0] / second[1] - first[0] / first[1])
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)


def test_newcombe_needs_trials_on_both_sides():
    with pytest.raises(ValueError, match="trials"):
        newcombe(0, 0, 3, 10)


def test_holm_by_hand():
    # Sorted: 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; each is
    # then raised to the largest before it, so 0.04 becomes 0.06. In the input's order:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 2 * 0.5, then capped at 1
    assert holm([]) == []


def test_cohens_h_by_hand():
    # 2 asin sqrt(0.95) = 2 * 1.345282 = 2.690566; 2 asin sqrt(0.7) = 2 * 0.991157 = 1.982313
    expected = 2 * math.asin(math.sqrt(0.95)) - 2 * math.asin(math.sqrt(0.7))
    assert cohens_h(0.7, 0.95) == pytest.approx(expected)
    assert cohens_h(0.7, 0.95) == pytest.approx(0.708253, abs=1e-6)
    assert cohens_h(0.95, 0.7) == pytest.approx(-0.708253, abs=1e-6)


def test_cliffs_delta_by_hand():
    # Pairs (second, first) of [2, 4] against [1, 2, 3]: 2 > 1, 2 = 2, 2 < 3, and 4 beats
    # all three: 4 greater, 1 smaller of 6 pairs: (4 - 1) / 6.
    assert cliffs_delta([1, 2, 3], [2, 4]) == pytest.approx(0.5)
    assert cliffs_delta([1, 2], [5, 6]) == 1.0
    assert cliffs_delta([5, 6], [1, 2]) == -1.0


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b", "expected"),
    [
        # 0 of 3 against 3 of 3; tables by B's successes x: C(3, x) C(3, 3 - x) / C(6, 3)
        # = 1, 9, 9, 1 of 20; no likelier than the observed 1/20: x = 0 and 3.
        (0, 3, 3, 3, 2 / 20),
        # The lady tasting tea: 4 of 4 against 0 of 4: 2 of C(8, 4) = 70 tables.
        (4, 4, 0, 4, 2 / 70),
        # 1 of 4 against 4 of 5: x = 1..5 gives C(5, x) C(4, 5 - x) = 5, 40, 60, 20, 1 of
        # 126; those no likelier than x = 4 (20): 5 + 20 + 1.
        (1, 4, 4, 5, 26 / 126),
        (2, 4, 2, 4, 1.0),
        (0, 0, 2, 4, 1.0),
    ],
)
def test_fisher_two_sided_by_hand(a, n_a, b, n_b, expected):
    assert fisher_two_sided(a, n_a, b, n_b) == pytest.approx(expected)


def test_exact_permutation_p_by_hand():
    # [1, 2] against [3, 4]: the 6 ways to pick the second pair from 1, 2, 3, 4 give
    # |mean difference| 2, 1, 0, 0, 1, 2 ({1,2}, {1,3}, {1,4}, {2,3}, {2,4}, {3,4}):
    # 2 of 6 are as far from 0 as the observed 2.
    assert permutation_p([1, 2], [3, 4]) == pytest.approx(2 / 6)
    # [1, 2, 4] against [7, 9]: a pair summing to s gives s / 2 - (23 - s) / 3 = (5s - 46) / 6;
    # the sums of the 10 pairs are 3, 5, 8, 10, 6, 9, 11, 11, 13, 16, and only 16 (the
    # observed, 34 / 6) reaches |34 / 6|; 3 gives -31 / 6.
    assert permutation_p([1, 2, 4], [7, 9]) == pytest.approx(1 / 10)


def test_random_permutations_never_give_zero():
    # 20 zeros against 20 ones: C(40, 20) = 1.4e11 splits, too many to enumerate; no
    # random split but the two complete ones (chance 2 / 1.4e11 each) is as extreme,
    # so b = 0 and p = (0 + 1) / (10,000 + 1).
    assert permutation_p([0.0] * 20, [1.0] * 20, seed=3) == pytest.approx(1 / 10_001)
    assert permutation_p([0.0] * 20, [1.0] * 20, seed=3, draws=99) == pytest.approx(1 / 100)


def test_flags_use_wilson_newcombe_fisher_and_cohens_h():
    real = [True] * 48 + [False] * 32 + [None] * 5
    simulated = [True] * 56 + [False] * 14
    [flag] = compare_features({"f": real}, {"f": simulated}, {"f": "flag"})

    assert flag.real == GroupSummary(80, wilson(48, 80))  # the Nones are dropped
    assert flag.simulated == GroupSummary(70, wilson(56, 70))
    assert flag.difference is not None
    assert (flag.difference.low, flag.difference.high) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert flag.effect_size == pytest.approx(cohens_h(0.6, 0.8))
    assert flag.p_value == pytest.approx(fisher_two_sided(48, 80, 56, 70))
    assert flag.p_adjusted == flag.p_value  # one feature: Holm changes nothing
    assert flag.significant


def test_numbers_use_the_bootstrap_the_permutation_test_and_cliffs_delta():
    [turns] = compare_features({"t": [1, 2, None]}, {"t": [3, 4]}, {"t": "count"})

    assert (turns.real.n, turns.simulated.n) == (2, 2)
    assert turns.real.estimate is not None
    assert turns.real.estimate.estimate == 1.5
    assert turns.difference is not None
    assert turns.difference.estimate == 2.0
    # Resampled means of [1, 2] lie in [1, 2], of [3, 4] in [3, 4]: differences in [1, 3].
    assert 1.0 <= turns.difference.low <= 2.0 <= turns.difference.high <= 3.0
    assert turns.p_value == pytest.approx(2 / 6)  # enumerated above
    assert turns.effect_size == 1.0
    assert not turns.significant


def test_a_constant_group_has_a_zero_width_interval():
    [rate] = compare_features({"r": [0.5] * 4}, {"r": [0.5] * 6}, {"r": "rate"})

    assert rate.difference == Interval(0.0, 0.0, 0.0)
    assert rate.p_value == 1.0


def test_comparisons_are_the_same_for_the_same_seed():
    rng = random.Random(1)
    real = {"t": [rng.randint(0, 9) for _ in range(30)]}
    sim = {"t": [rng.randint(0, 9) for _ in range(30)]}
    first = compare_features(real, sim, {"t": "count"}, seed=7)
    assert first == compare_features(real, sim, {"t": "count"}, seed=7)
    assert first != compare_features(real, sim, {"t": "count"}, seed=8)


def test_holm_runs_over_the_features_both_groups_have():
    real = {"a": [True] * 9 + [False] * 11, "b": [1, 2, 3], "c": [None]}
    sim = {"a": [True] * 19 + [False], "b": [2, 3, 4], "c": [2.0]}
    compared = compare_features(real, sim, {"a": "flag", "b": "mean", "c": "mean"})

    a, b, c = compared
    assert [a.p_adjusted, b.p_adjusted] == pytest.approx(holm([a.p_value, b.p_value]))
    assert (a.features, c.features) == (2, 2)
    assert (c.real.n, c.simulated.n, c.p_value, c.p_adjusted, c.significant) == (
        0,
        1,
        None,
        None,
        False,
    )
    assert c.sentence("say more") == "say more: not compared (1 simulated, 0 real)"


def test_bad_kinds_and_flags_are_refused():
    with pytest.raises(ValueError, match="kind"):
        compare_features({"a": [1]}, {"a": [1]}, {"a": "ratio"})
    with pytest.raises(ValueError, match="flag"):
        compare_features({"a": [0.5]}, {"a": [True]}, {"a": "flag"})


def comparison(significant: bool, p: float, **changes: object) -> FeatureComparison:
    fields: dict[str, object] = {
        "name": "answers_direct",
        "kind": "flag",
        "real": GroupSummary(200, Interval(0.71, 0.64, 0.77)),
        "simulated": GroupSummary(150, Interval(0.94, 0.90, 0.97)),
        "difference": Interval(0.23, 0.15, 0.31),
        "effect_size": 0.6,
        "p_value": p / 9,
        "p_adjusted": p,
        "features": 9,
        "significant": significant,
    }
    return FeatureComparison(**{**fields, **changes})  # type: ignore[arg-type]


def test_the_sentence_of_a_significant_difference():
    assert comparison(True, 0.0004).sentence("answer the agent's questions directly") == (
        "your simulated users answer the agent's questions directly 94 % of the time [90, 97],"
        " your users 71 % [64, 77]: a difference of 23 points [15, 31], unlikely to be noise"
        " (p = 0.0004 after Holm's correction for 9 features)"
    )


def test_the_sentence_of_noise_of_a_number_and_of_one_feature():
    noise = "a difference this size is within noise (p = 0.41 after Holm's correction for 9"
    assert comparison(False, 0.41).sentence().endswith(f"{noise} features)")
    number = comparison(
        False,
        0.2,
        kind="count",
        features=1,
        real=GroupSummary(9, Interval(2.8, 2.5, 3.1)),
        simulated=GroupSummary(9, Interval(3.2, 2.9, 3.5)),
        difference=Interval(0.4, -0.1, 0.7),
    )
    assert number.sentence("take turns") == (
        "your simulated users take turns 3.2 on average [2.9, 3.5], your users 2.8 [2.5, 3.1]:"
        " a difference of 0.4 [-0.1, 0.7], a difference this size is within noise (p = 0.20)"
    )
    assert "p < 0.0001" in comparison(True, 1e-7).sentence()


def test_overall_distance_by_hand():
    real = [{"a": True, "b": 2.0}, {"a": False, "b": 3.0}]
    simulated = [{"a": True, "b": 5.0}, {"a": True, "b": None}]
    # a: pooled 1, 0, 1, 1, population sd sqrt(0.1875); means 0.5 and 1: 0.5 / 0.4330 = 1.1547.
    # b: pooled 2, 3, 5, sd sqrt(14 / 9); means 2.5 and 5: 2.5 / 1.2472 = 2.0045.
    expected = (0.5 / math.sqrt(0.1875) + 2.5 / math.sqrt(14 / 9)) / 2
    # The 6 ways to pick 2 of the 4 rows as "simulated" give 1.5796 (twice: the observed
    # split and its mirror), 1.3792 (twice) and 0.7778 (twice): p = 2 / 6.
    distance = overall_distance(real, simulated)

    assert distance.distance == pytest.approx(expected)
    assert distance.distance == pytest.approx(1.5796, abs=1e-4)
    assert distance.p_value == pytest.approx(2 / 6)
    assert distance.features == 2


def test_overall_distance_leaves_out_features_without_spread_or_values():
    real = [{"a": 1.0, "b": None, "c": 0.0}, {"a": 1.0, "c": 1.0}]
    simulated = [{"a": 1.0, "b": 3.0, "c": 1.0}]
    # a has no spread, b no real value: only c, |1 - 0.5| / sd(0, 1, 1) = 0.5 / 0.4714.
    distance = overall_distance(real, simulated)

    assert distance.features == 1
    assert distance.distance == pytest.approx(0.5 / math.sqrt(2 / 9))
    assert overall_distance([{"a": 1.0}], [{"a": 1.0}]).features == 0


def test_pass_rate_gap():
    gap = pass_rate_gap(48, 80, 56, 70)

    assert gap.gap.estimate == pytest.approx(0.2)
    assert (gap.gap.low, gap.gap.high) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert gap.real == wilson(48, 80)
    assert gap.p_value == pytest.approx(fisher_two_sided(48, 80, 56, 70))
    assert gap.sentence() == (
        "your agent passes 80 % [69, 88] of conversations with simulated users, 60 % [49, 70]"
        " with your users: a gap of 20 points [5, 33], unlikely to be noise (p = 0.01)"
    )


def significant_share(real_rate: float, sim_rate: float, repetitions: int = 200) -> float:
    rng = random.Random(2024)
    significant = 0
    for seed in range(repetitions):
        real = [rng.random() < real_rate for _ in range(100)]
        sim = [rng.random() < sim_rate for _ in range(100)]
        [flag] = compare_features({"f": real}, {"f": sim}, {"f": "flag"}, seed=seed)
        significant += flag.significant
    return significant / repetitions


def test_a_real_difference_is_found_and_no_difference_mostly_is_not():
    assert significant_share(0.70, 0.95) >= 0.95  # the power at 100 conversations a side
    assert significant_share(0.70, 0.70) <= 0.05  # the false-positive rate at alpha 0.05
