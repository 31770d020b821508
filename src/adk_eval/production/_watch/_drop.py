"""Telling a real drop of a metric's pass rate from noise, as verdicts arrive.

A watch looks at every metric after every conversation: thousands of looks. A
fixed-sample test repeated at each look cries wolf sooner or later, so the
`DropMonitor` runs a **one-sided Bernoulli CUSUM** per metric instead: the
log-likelihood ratio of "the rate fell to ``p1``" against "it is still at least
``p0``", summed and floored at zero (Page's cumulative sum), firing when it
reaches ``h = ln(horizon / alpha)``.

Why it controls false alarms over continuous looks: the likelihood ratio run
forward from any one conversation is a nonnegative supermartingale with mean at
most 1 whenever the true rate is ``p0`` or above, so by Ville's inequality it ever
reaches ``horizon / alpha`` with probability at most ``alpha / horizon``; the CUSUM
reaches ``h`` only if one of the conversations seen so far starts such a run, so
over ``horizon`` conversations the chance of any false alarm is at most ``alpha``
(a union bound; the true rate is well under it). Why a CUSUM and not a mixture
SPRT over the whole history (always-valid p-values): a mixture test weighs a
drop after 500 good conversations against all 500 of them and is slow to see it;
the CUSUM forgets evidence of health (the floor at zero) and measures from the
most likely change point.

The baseline is given (a rate known exactly, or passes of ``n`` from a stored run)
or learned from the first ``learn`` conversations. An estimated baseline is itself
noisy, so the test runs against its conservative bound: half of ``alpha`` goes to
the baseline's one-sided Wilson lower bound (``p0``), half to the CUSUM; if the
true rate is at least the bound (probability ``1 - alpha / 2``), the CUSUM's own
guarantee applies, so the total stays at most ``alpha``.

An `Alert` names the metric, the baseline, the pass rate since the change point,
the drop's interval (Newcombe's hybrid score interval of baseline minus current,
at ``1 - alpha``; a Wilson interval of the current rate against a baseline known
exactly), the newest failing conversations since the change point and failures
by party. It is a fixed-sample interval, computed once when the test fires; the
sequential guarantee is the test's. It fires once per episode: after an alert the
monitor runs the mirror CUSUM (back up to ``p0`` against ``p1``) and re-arms when
that one reaches ``h``, the rate being back.

Pure arithmetic over `WatchVerdict`s: no I/O, no clock (times are the verdicts').
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass, field

from adk_eval._statistics import Interval, newcombe, wilson
from adk_eval.production._watch._verdict import Alert, WatchVerdict

__all__ = ["Baseline", "DropMonitor", "MetricWatch"]

_TEST = "one-sided Bernoulli CUSUM"


@dataclass(frozen=True)
class Baseline:
    """A metric's expected pass rate, known exactly or estimated from ``n`` conversations.

    Attributes:
        rate: The pass rate (0 to 1).
        n: How many conversations it was estimated from; None when known exactly.
    """

    rate: float
    n: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.rate <= 1:
            raise ValueError(f"a baseline pass rate must be between 0 and 1, got {self.rate}")
        if self.n is not None and self.n < 1:
            raise ValueError(f"a baseline needs at least 1 conversation, got n={self.n}")

    @classmethod
    def counted(cls, passes: int, n: int) -> Baseline:
        """The baseline of a stored run: ``passes`` of ``n`` conversations passed."""
        if n < 1 or not 0 <= passes <= n:
            raise ValueError(f"need 0 <= passes <= n and n >= 1, got {passes} of {n}")
        return cls(passes / n, n)

    @property
    def passes(self) -> int:
        """The passes behind an estimated baseline (``rate * n``, rounded)."""
        return round(self.rate * (self.n or 0))

    def bound(self, alpha: float) -> float:
        """The rate the test holds the metric to: the one-sided lower bound at ``alpha``."""
        if self.n is None:
            return self.rate
        return wilson(self.passes, self.n, 1 - 2 * alpha).low


@dataclass
class MetricWatch:
    """One metric's state: its rolling window, its baseline and its CUSUM.

    Attributes:
        metric: The metric's name.
        window: The latest verdicts (True: passed), at most the monitor's window.
        baseline: The baseline, once known.
        looked: Applicable verdicts seen.
        statistic: The drop CUSUM (log scale; fires at the threshold).
        recovery: The mirror CUSUM while an alert's episode is open.
        alerted: Whether an episode is open (the alert fired, not yet recovered).
        since: Applicable verdicts since the change point (the CUSUM's last zero).
        since_passes: Passes among them.
        parties: Failures since the change point by party.
        failing: The newest failing conversations since the change point.
        learning: Passes and count while the baseline is being learned.
    """

    metric: str
    window: deque[bool]
    baseline: Baseline | None = None
    looked: int = 0
    statistic: float = 0.0
    recovery: float = 0.0
    alerted: bool = False
    since: int = 0
    since_passes: int = 0
    parties: Counter[str] = field(default_factory=Counter)
    failing: deque[str] = field(default_factory=deque)
    learning: tuple[int, int] = (0, 0)

    def rolling(self, confidence: float) -> Interval:
        """The pass rate over the window, with its Wilson interval."""
        return wilson(sum(self.window), len(self.window), confidence)


class DropMonitor:
    """Per metric: a rolling pass rate with its interval, and a sequential drop test.

    Args:
        baseline: The expected pass rate: a `Baseline` (or a bare rate, known
            exactly) for every metric, or a mapping of metric to `Baseline`; a metric
            without one learns it from its first ``learn`` applicable verdicts.
        learn: Conversations a metric's baseline is learned from.
        alpha: The false-alarm level over ``horizon`` conversations per metric.
        drop: The drop the test is tuned to (``p1 = p0 - drop``); larger drops are
            caught sooner, smaller ones later.
        horizon: Conversations the false-alarm level covers (the threshold grows
            with its logarithm).
        window: Verdicts in the rolling pass rate.
        keep: Failing conversations an alert names.
    """

    def __init__(
        self,
        baseline: Baseline | float | dict[str, Baseline] | None = None,
        *,
        learn: int = 200,
        alpha: float = 0.05,
        drop: float = 0.10,
        horizon: int = 1000,
        window: int = 200,
        keep: int = 5,
    ) -> None:
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
        if not 0 < drop < 1:
            raise ValueError(f"drop must be between 0 and 1, got {drop}")
        if min(learn, horizon, window, keep) < 1:
            raise ValueError("learn, horizon, window and keep must each be at least 1")
        self._baseline = Baseline(baseline) if isinstance(baseline, float | int) else baseline
        self.learn, self.alpha, self.drop = learn, alpha, drop
        self.horizon, self.window, self.keep = horizon, window, keep
        self._metrics: dict[str, MetricWatch] = {}

    def metrics(self) -> dict[str, MetricWatch]:
        """Each metric's state, by name."""
        return dict(self._metrics)

    def rolling(self, metric: str) -> Interval:
        """A metric's rolling pass rate with its Wilson interval (at ``1 - alpha``)."""
        state = self._metrics.get(metric)
        return wilson(0, 0) if state is None else state.rolling(1 - self.alpha)

    def _alpha_test(self, baseline: Baseline) -> float:
        return self.alpha if baseline.n is None else self.alpha / 2

    def threshold(self, baseline: Baseline) -> float:
        """The CUSUM's threshold, ``ln(horizon / alpha_test)``."""
        return math.log(self.horizon / self._alpha_test(baseline))

    def rates(self, baseline: Baseline) -> tuple[float, float]:
        """``(p0, p1)``: the rate held to and the rate the test is tuned to detect.

        ``p0`` is the baseline's conservative bound (its rate when known exactly);
        ``p1`` is ``drop`` below it.
        """
        p0 = min(max(baseline.bound(self.alpha / 2), 2e-9), 1 - 1e-9)
        return p0, max(p0 - self.drop, 1e-9)

    def observe(self, verdict: WatchVerdict) -> Alert | None:
        """Takes one verdict (not-applicable ones are ignored); an `Alert` when a drop fires."""
        if verdict.passed is None:
            return None
        state = self._metrics.get(verdict.metric)
        if state is None:
            state = MetricWatch(verdict.metric, deque(maxlen=self.window))
            state.baseline = self._given(verdict.metric)
            self._metrics[verdict.metric] = state
        passed = bool(verdict.passed)
        state.window.append(passed)
        state.looked += 1
        if state.baseline is None:
            passes, n = state.learning
            state.learning = (passes + passed, n + 1)
            if n + 1 >= self.learn:
                state.baseline = Baseline.counted(*state.learning)
            return None
        return self._step(state, verdict, passed)

    def __call__(self, verdict: WatchVerdict) -> Alert | None:
        """The monitor as a watch's verdict consumer (``on_verdict``): `observe`."""
        return self.observe(verdict)

    def _given(self, metric: str) -> Baseline | None:
        if isinstance(self._baseline, dict):
            return self._baseline.get(metric)
        return self._baseline

    def _step(self, state: MetricWatch, verdict: WatchVerdict, passed: bool) -> Alert | None:
        baseline = state.baseline
        assert baseline is not None
        p0, p1 = self.rates(baseline)
        llr = math.log(p1 / p0) if passed else math.log((1 - p1) / (1 - p0))
        threshold = self.threshold(baseline)
        if state.alerted:
            state.recovery = max(0.0, state.recovery - llr)
            if state.recovery >= threshold:
                state.alerted, state.recovery = False, 0.0
                self._restart(state)
            return None
        state.statistic = max(0.0, state.statistic + llr)
        if state.statistic == 0.0:
            self._restart(state)
            return None
        state.since += 1
        state.since_passes += passed
        if not passed:
            state.parties[verdict.party or "unknown"] += 1
            state.failing.appendleft(verdict.conversation)
            while len(state.failing) > self.keep:
                state.failing.pop()
        if state.statistic < threshold:
            return None
        alert = self._alert(state, baseline, verdict.at)
        state.alerted, state.recovery = True, 0.0
        self._restart(state)
        return alert

    @staticmethod
    def _restart(state: MetricWatch) -> None:
        state.statistic, state.since, state.since_passes = 0.0, 0, 0
        state.parties = Counter()
        state.failing.clear()

    def drop_interval(self, baseline: Baseline, passes: int, n: int) -> Interval:
        """Baseline minus current (``passes`` of ``n``) with its interval at ``1 - alpha``.

        Newcombe's hybrid score interval for an estimated baseline; for one known
        exactly, the Wilson interval of the current rate, subtracted from it.
        """
        confidence = 1 - self.alpha
        if baseline.n is None:
            current = wilson(passes, n, confidence)
            return Interval(
                baseline.rate - current.estimate,
                baseline.rate - current.high,
                baseline.rate - current.low,
                confidence,
            )
        change = newcombe(passes, n, baseline.passes, baseline.n, confidence)
        return Interval(change.estimate, change.low, change.high, confidence)

    def _alert(self, state: MetricWatch, baseline: Baseline, at: float) -> Alert:
        interval = self.drop_interval(baseline, state.since_passes, state.since)
        p0, p1 = self.rates(baseline)
        return Alert(
            metric=state.metric,
            baseline=baseline.rate,
            current=state.since_passes / state.since,
            interval=(interval.low, interval.high),
            conversations=tuple(state.failing),
            parties=dict(state.parties),
            looked=state.looked,
            test=f"{_TEST} {p0:.0%} against {p1:.0%}, alpha {self.alpha:g} per {self.horizon}",
            at=at,
        )
