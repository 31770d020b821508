"""Pins the drop monitor's statistics on known inputs: what alerts, what not, what it says."""

from __future__ import annotations

import math
import random

import pytest

from adk_eval._statistics import wilson
from adk_eval.production._watch._drop import Baseline, DropMonitor
from adk_eval.production._watch._verdict import WatchVerdict


def verdict(
    index: int, passed: bool | None, metric: str = "m", party: str = "agent"
) -> WatchVerdict:
    return WatchVerdict(
        f"app/u/s{index}", metric, passed, party=None if passed else party, at=float(index)
    )


def stream(rng: random.Random, rate: float, count: int, start: int = 0) -> list[WatchVerdict]:
    return [verdict(start + i, rng.random() < rate) for i in range(count)]


def alerts(monitor: DropMonitor, verdicts: list[WatchVerdict]) -> list[tuple[int, object]]:
    found = []
    for index, item in enumerate(verdicts):
        alert = monitor(item)  # the monitor is a watch's verdict consumer
        if alert is not None:
            found.append((index, alert))
    return found


def test_a_clear_drop_alerts_soon_after_it_starts():
    rng = random.Random(1)
    verdicts = stream(rng, 0.9, 300) + stream(rng, 0.5, 300, start=300)
    found = alerts(DropMonitor(Baseline(0.9)), verdicts)
    assert found, "a fall from 90 % to 50 % went unseen"
    first, alert = found[0]
    assert 300 <= first < 360
    assert alert.baseline == 0.9
    assert alert.current < 0.7
    assert alert.looked == first + 1


def test_a_steady_rate_never_alerts_over_seeded_streams():
    for seed in range(20):
        rng = random.Random(seed)
        assert alerts(DropMonitor(Baseline(0.9)), stream(rng, 0.9, 1000)) == [], seed
        rng = random.Random(seed)
        assert alerts(DropMonitor(learn=200), stream(rng, 0.9, 1000)) == [], seed


def test_the_cusum_threshold_is_the_union_bound_over_the_horizon():
    monitor = DropMonitor(alpha=0.05, horizon=1000)
    assert monitor.threshold(Baseline(0.9)) == pytest.approx(math.log(1000 / 0.05))
    # an estimated baseline gives half of alpha to its own bound
    assert monitor.threshold(Baseline.counted(180, 200)) == pytest.approx(math.log(1000 / 0.025))
    p0, p1 = monitor.rates(Baseline.counted(180, 200))
    assert p0 == pytest.approx(wilson(180, 200, 0.95).low)
    assert p0 < 0.9
    assert p1 == pytest.approx(p0 - 0.10)


def test_the_rolling_interval_covers_the_true_rate_about_as_often_as_it_says():
    covered = 0
    for seed in range(200):
        rng = random.Random(seed)
        monitor = DropMonitor(Baseline(0.8), window=100, alpha=0.05)
        for item in stream(rng, 0.8, 150):
            monitor.observe(item)
        interval = monitor.rolling("m")
        assert len(monitor.metrics()["m"].window) == 100
        covered += interval.low <= 0.8 <= interval.high
    assert covered >= 180  # 95 % nominal: at least 90 % of 200 seeded windows


def test_the_drop_interval_covers_the_true_drop_in_an_alert():
    hits = 0
    for seed in range(30):
        rng = random.Random(seed)
        verdicts = stream(rng, 0.9, 100) + stream(rng, 0.6, 400, start=100)
        found = alerts(DropMonitor(Baseline(0.9)), verdicts)
        low, high = found[0][1].interval
        assert low <= high
        hits += low <= 0.3 <= high
    assert hits >= 20  # an interval picked when the test fires leans high; most still cover


def test_the_alert_names_the_newest_failing_conversations_and_their_parties():
    monitor = DropMonitor(Baseline(0.95), keep=3)
    for index in range(50):
        monitor.observe(verdict(index, True))
    alert = None
    index = 50
    while alert is None:
        party = "user" if index % 3 == 0 else "agent"
        alert = monitor.observe(verdict(index, False, party=party))
        index += 1
    failing = [f"app/u/s{i}" for i in range(index - 1, 49, -1)]
    assert list(alert.conversations) == failing[:3]
    assert dict(alert.parties) == {
        "user": sum(i % 3 == 0 for i in range(50, index)),
        "agent": sum(i % 3 != 0 for i in range(50, index)),
    }
    assert alert.current == 0.0
    assert "CUSUM" in alert.test
    assert alert.at == float(index - 1)
    assert alert.metric in alert.line()


def test_not_applicable_verdicts_are_ignored():
    monitor = DropMonitor(Baseline(0.9))
    for index in range(500):
        assert monitor.observe(verdict(index, None)) is None
    assert monitor.metrics() == {}
    monitor.observe(verdict(500, True))
    assert monitor.metrics()["m"].looked == 1


def test_it_fires_once_per_episode_and_rearms_after_recovery():
    rng = random.Random(7)
    verdicts = (
        stream(rng, 0.9, 200)
        + stream(rng, 0.4, 600, start=200)
        + stream(rng, 0.95, 600, start=800)
        + stream(rng, 0.4, 300, start=1400)
    )
    found = [index for index, _ in alerts(DropMonitor(Baseline(0.9)), verdicts)]
    assert len(found) == 2, found
    assert 200 <= found[0] < 300
    assert 1400 <= found[1] < 1500


def test_a_learned_baseline_is_learned_per_metric_and_only_then_tested():
    monitor = DropMonitor(learn=50)
    for index in range(49):
        assert monitor.observe(verdict(index, False)) is None
    assert monitor.metrics()["m"].baseline is None
    monitor.observe(verdict(49, True))
    assert monitor.metrics()["m"].baseline == Baseline(1 / 50, 50)
    given = DropMonitor({"other": Baseline(0.9)}, learn=10)
    given.observe(verdict(0, True, metric="other"))
    given.observe(verdict(1, True, metric="m"))
    assert given.metrics()["other"].baseline == Baseline(0.9)
    assert given.metrics()["m"].baseline is None


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        DropMonitor(alpha=1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        Baseline(1.2)
    with pytest.raises(ValueError, match="passes"):
        Baseline.counted(5, 3)
