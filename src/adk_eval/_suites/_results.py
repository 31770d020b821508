"""What a suite produced: `EvalSuiteResult`, per-case `CaseStats`, and how they are built.

With ``repeat=k`` each case runs k times and gets per-case statistics:

* **pass^k**: all k runs passed (the case is reliable);
* **pass@k**: at least one run passed (the case can pass);
* **pass rate**: passed runs / k;
* **label**: ``stable-pass`` (all passed), ``stable-fail`` (none passed) or ``flaky``.

Every rate also comes with its 95 % Wilson interval (`adk_eval._statistics`): a
case's pass rate over its runs, its pass^k and pass@k estimates for k fresh runs
(the interval's ends raised to the k-th power), and the suite's pass rate over its
runs and pass^k / pass@k over its cases. The suite's figures count the same
runs: xfailed runs (expected failures) are left out of the rate and its interval,
and a case whose every run was xfailed is left out of pass^k and pass@k; a
case's own figures count all its runs. The suite's pass-rate interval treats
runs as independent; when a few cases are repeated many times, the share of
reliable cases (pass^k over cases) is the more honest figure.

`suite_from_results` is the one way a suite is built from its runs: by every
executor, and by ``adk-eval merge`` from the results files of CI shards.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from .._result import EvalResult
from .._statistics import Interval, pass_at_k, pass_hat_k, wilson
from ..models._gateway._stats import ProviderStats
from ..models._gateway._usage import total_cost
from ._inventory import RunsForReal

if TYPE_CHECKING:
    from .._termination import Termination
    from ._plan import Adaptive

__all__ = ["CaseStats", "EvalSuiteResult", "StabilityLabel", "suite_from_results"]

StabilityLabel: TypeAlias = Literal["stable-pass", "flaky", "stable-fail"]


@dataclass(frozen=True)
class CaseStats:
    """How one case did over its repetitions.

    Attributes:
        name: The case's name.
        runs: Its finished runs, by attempt.
        repeat: How many runs were asked for (with adaptive repeats: how many the
            case needed before its verdict settled, at most their maximum).
    """

    name: str
    runs: tuple[EvalResult, ...]
    repeat: int

    def __repr__(self) -> str:
        """A short summary (each run's own repr is short too)."""
        return (
            f"CaseStats(name={self.name!r}, runs={len(self.runs)}, repeat={self.repeat}, "
            f"passes={self.passes}, label={self.label!r})"
        )

    @property
    def passes(self) -> int:
        """Runs that passed."""
        return sum(result.passed for result in self.runs)

    @property
    def pass_rate(self) -> float:
        """Passed runs / finished runs (0.0 when none finished)."""
        return self.passes / len(self.runs) if self.runs else 0.0

    @property
    def pass_hat_k(self) -> bool:
        """pass^k: every one of the k runs finished and passed."""
        return len(self.runs) == self.repeat and self.passes == self.repeat

    @property
    def pass_at_k(self) -> bool:
        """pass@k: at least one run passed."""
        return self.passes > 0

    @property
    def cost_usd(self) -> float | None:
        """What its runs' model calls cost in US dollars; None when a model has no price."""
        return total_cost(item for run in self.runs for item in run.usage)

    @property
    def pass_rate_interval(self) -> Interval:
        """The pass rate with its 95 % Wilson interval (over the finished runs)."""
        return wilson(self.passes, len(self.runs))

    @property
    def pass_hat_k_estimate(self) -> Interval:
        """The chance that `repeat` fresh runs all pass: unbiased estimate, 95 % interval."""
        rate, k = self.pass_rate_interval, self.repeat
        return Interval(pass_hat_k(self.passes, len(self.runs), k), rate.low**k, rate.high**k)

    @property
    def pass_at_k_estimate(self) -> Interval:
        """The chance that one of `repeat` fresh runs passes: estimate, 95 % interval."""
        rate, k = self.pass_rate_interval, self.repeat
        return Interval(
            pass_at_k(self.passes, len(self.runs), k),
            1 - (1 - rate.low) ** k,
            1 - (1 - rate.high) ** k,
        )

    @property
    def label(self) -> StabilityLabel:
        """``stable-pass``, ``stable-fail`` or ``flaky``."""
        if self.runs and self.passes == len(self.runs):
            return "stable-pass"
        if self.passes == 0:
            return "stable-fail"
        return "flaky"

    @property
    def ok(self) -> bool:
        """Whether every run of the case leaves the suite green."""
        return len(self.runs) == self.repeat and all(result.ok for result in self.runs)


@dataclass(frozen=True)
class EvalSuiteResult:
    """What `run_eval_suite` produced.

    Attributes:
        summary: Counts of runs: ``total`` (asked for), ``passed``, ``failed``,
            ``errors``, ``terminated``, ``xfailed``, ``xpassed``, ``not_run``.
        results: Every finished run, ordered by case then attempt.
        cases: Per-case statistics, in the order the cases were given.
        not_run: Names of cases with at least one run that did not finish.
        repeat: Runs per case.
        duration_ms: Wall time of the suite.
        stopped_early: True when `stop_on_first_failure` cancelled runs.
        interrupted: True when Ctrl-C stopped the suite (what finished is kept).
        seed: The suite's seed: each run's (`EvalResult.seed`) is derived from it,
            the case's name and the attempt, so ``run_eval_suite(..., seed=seed)``
            (``adk-eval run --seed``) injects the same faults again.
        runs_for_real: What of the user's code and set-up ran for real besides
            the tools the cases provide (plugins, callbacks, toolsets, telemetry,
            what a Ray cluster got), read off the cases before they ran.
        placement: How the runs were spread over processes, when `Workers` ran
            them (``this process and 1 worker process(es)``; for ``"auto"``, what it
            chose and why); empty otherwise.
        adaptive: The adaptive repeats the suite ran with (`repeat` is their
            maximum; each case's `CaseStats.repeat` is what it needed), or None.
        budget_reached: The suite's budget limit (``max_tokens``, ``max_cost``) that
            stopped it, with what was spent; runs not finished then are not run.
    """

    summary: dict[str, int]
    results: list[EvalResult]
    cases: list[CaseStats] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    repeat: int = 1
    duration_ms: float = 0.0
    stopped_early: bool = False
    seed: int | None = None
    interrupted: bool = False
    runs_for_real: RunsForReal = field(default_factory=RunsForReal)
    placement: str = ""
    adaptive: Adaptive | None = None
    budget_reached: Termination | None = None

    @property
    def attempts_saved(self) -> int:
        """With adaptive repeats: runs not needed against `repeat` runs of every case."""
        if self.adaptive is None:
            return 0
        return sum(self.repeat - stats.repeat for stats in self.cases)

    def __repr__(self) -> str:
        """A short summary: the counts, not every run's events (see `EvalResult.__repr__`)."""
        flags = "".join(
            f", {flag}=True" for flag in ("stopped_early", "interrupted") if getattr(self, flag)
        )
        return (
            f"EvalSuiteResult(summary={self.summary!r}, cases={len(self.cases)}, "
            f"repeat={self.repeat}, seed={self.seed!r}, duration_ms={self.duration_ms:.0f}{flags})"
        )

    @property
    def ok(self) -> bool:
        """Whether every run finished and is ok (passed, or failed as expected).

        Like `EvalResult.ok` and `CaseStats.ok`: an xfailed run counts as ok.
        """
        return not self.not_run and all(result.ok for result in self.results)

    @property
    def passed(self) -> bool:
        """Deprecated alias of `ok` (it never meant "every status is passed")."""
        warnings.warn(
            "EvalSuiteResult.passed is deprecated (it meant `ok`: xfailed runs count); "
            "use EvalSuiteResult.ok",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.ok

    @property
    def pass_rate(self) -> float:
        """Passed runs / finished runs (xfailed runs left out of both)."""
        counted = [r for r in self.results if r.outcome != "xfailed"]
        return sum(r.passed for r in counted) / len(counted) if counted else 1.0

    @property
    def cost_usd(self) -> float | None:
        """What every run's model calls cost in US dollars; None when a model has no price."""
        return total_cost(item for run in self.results for item in run.usage)

    @property
    def cost_per_passing_run(self) -> float | None:
        """`cost_usd` / runs that passed (None: no price, or no run passed)."""
        cost, passes = self.cost_usd, sum(run.passed for run in self.results)
        return cost / passes if cost is not None and passes else None

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens of every model call of every run."""
        return sum(item.total_tokens for run in self.results for item in run.usage)

    @property
    def provider(self) -> ProviderStats:
        """What every run's model calls met on the way to their providers, summed.

        Retries, seconds waited for quota (each run's own, added up: runs waiting side
        by side count once each), cache hits and what they saved, cassette calls.
        """
        return sum((run.provider for run in self.results), ProviderStats())

    @property
    def unpriced_models(self) -> list[str]:
        """The models used that have no known price (what makes a cost unknown)."""
        found = {
            item.model
            for run in self.results
            for item in run.usage
            if item.cost_usd is None and item.total_tokens
        }
        return sorted(found)

    @property
    def pass_rate_interval(self) -> Interval:
        """The pass rate with its 95 % Wilson interval (runs taken as independent)."""
        counted = [r for r in self.results if r.outcome != "xfailed"]
        if not counted:
            return Interval(1.0, 0.0, 1.0)
        return wilson(sum(r.passed for r in counted), len(counted))

    @property
    def counted_cases(self) -> list[CaseStats]:
        """The cases a suite-level rate counts: those that ran, expected failures aside."""
        return [
            stats
            for stats in self.cases
            if stats.runs and not all(r.outcome == "xfailed" for r in stats.runs)
        ]

    @property
    def pass_hat_k_interval(self) -> Interval:
        """The share of cases whose every run passed (pass^k), 95 % Wilson interval."""
        counted = self.counted_cases
        return wilson(sum(stats.pass_hat_k for stats in counted), len(counted))

    @property
    def pass_at_k_interval(self) -> Interval:
        """The share of cases with at least one passing run (pass@k), 95 % Wilson interval."""
        counted = self.counted_cases
        return wilson(sum(stats.pass_at_k for stats in counted), len(counted))

    def meets(self, min_pass_rate: float | None = None, *, allow_errors: bool = False) -> bool:
        """Whether the suite passes a CI gate.

        Without `min_pass_rate`: every run finished and is ok (`ok`). With it: every
        run finished, the pass rate reaches it, no run ended in ``error`` and no run
        of an `xfail` case passed (``xpassed``: markers are strict). A rate absorbs an
        agent's flakiness; an error is a broken case (an unmocked tool, a mock that
        crashed, a misconfiguration), never flaky, so it fails the gate whatever the
        rate unless `allow_errors` counts errors as failed runs.
        """
        if min_pass_rate is None:
            return self.ok
        if self.not_run or self.summary["xpassed"]:
            return False
        if self.summary["errors"] and not allow_errors:
            return False
        return self.pass_rate >= min_pass_rate

    def explain(self) -> str:
        """Every run that is not ok, explained, after a one-line summary."""
        s = self.summary
        lines = [
            f"{s['total']} runs: {s['passed']} passed, {s['failed']} failed, {s['errors']} errors, "
            f"{s['terminated']} terminated, {s['xfailed']} xfailed, {s['xpassed']} xpassed, "
            f"{s['not_run']} not run"
        ]
        if self.not_run:
            lines.append("not run: " + ", ".join(self.not_run))
        for result in self.results:
            if not result.ok:
                lines.append("")
                lines.append(result.explain())
        return "\n".join(lines)


def _summary(results: Sequence[EvalResult], total: int) -> dict[str, int]:
    outcomes = [result.outcome for result in results]
    return {
        "total": total,
        "passed": outcomes.count("passed"),
        "failed": outcomes.count("failed"),
        "errors": outcomes.count("error"),
        "terminated": outcomes.count("terminated"),
        "xfailed": outcomes.count("xfailed"),
        "xpassed": outcomes.count("xpassed"),
        "not_run": total - len(results),
    }


def suite_from_results(
    results: Sequence[EvalResult],
    *,
    case_names: Sequence[str],
    repeat: int,
    duration_ms: float,
    stopped_early: bool = False,
    seed: int | None = None,
    runs_for_real: RunsForReal | None = None,
    attempts: Mapping[str, int] | None = None,
) -> EvalSuiteResult:
    """The suite of `results` (runs of `case_names`, in case order, each `repeat` times).

    One path for a suite run here and one merged from shards run elsewhere.
    `attempts` gives a case's own number of runs asked for (adaptive repeats).
    """
    wanted = {name: (attempts or {}).get(name, repeat) for name in case_names}
    by_case: dict[str, list[EvalResult]] = {name: [] for name in case_names}
    for result in results:
        by_case[result.name].append(result)
    stats = [
        CaseStats(
            name=name,
            runs=tuple(sorted(by_case[name], key=lambda r: r.attempt)),
            repeat=max(wanted[name], len(by_case[name])),
        )
        for name in case_names
    ]
    ordered = [run for stat in stats for run in stat.runs]
    return EvalSuiteResult(
        summary=_summary(ordered, total=sum(s.repeat for s in stats)),
        results=ordered,
        cases=stats,
        not_run=[s.name for s in stats if len(s.runs) < s.repeat],
        repeat=repeat,
        duration_ms=duration_ms,
        stopped_early=stopped_early,
        seed=seed,
        runs_for_real=runs_for_real or RunsForReal(),
    )
