"""Robustness under faults: the same suite without and with seeded tool faults, compared.

`robustness` runs the cases twice with one seed: as written, then with every
mocked or simulated tool failing a share of its calls (`run_eval_suite(...,
faults=rate)`; what gets faults is in `adk_eval._suites._faulted`). `Robustness`
compares the two: each case's pass rate without and with faults, each with its
95 % Wilson interval, and the drop between them with Newcombe's interval
(`adk_eval._statistics.newcombe`), then the same over the whole suite. A drop is
*beyond noise* when its interval lies wholly above 0.

A drop's interval is the range of drops in the true pass rate the runs seen are
consistent with, at 95 %. The two passes run the same cases with the same seed,
so run k of a case and its twin are paired; the intervals treat the passes as
independent samples. For twins that tend to agree (the usual case) that makes
them wider than a paired interval (a drop beyond noise is at least that sure);
only twins that disagree more than chance would make a paired interval the
wider. The suite's figures count its runs as `EvalSuiteResult.pass_rate_interval` does:
xfailed runs left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._case import EvalCase
from .._seeds import new_seed
from .._statistics import Interval, newcombe, wilson
from ._faulted import check_fault_rate
from ._results import EvalSuiteResult
from ._run import check_a_list_of_cases, check_applies_faults, run_eval_suite

__all__ = ["PassRates", "Robustness", "robustness"]

DEFAULT_REPEAT = 5
"""Runs of each case in each pass when none is asked for: one run's pass rate is 0 or 1."""


@dataclass(frozen=True)
class PassRates:
    """One pass rate without and with faults (a case's, or the suite's).

    Attributes:
        passes: Runs that passed without faults.
        runs: Runs counted without faults.
        faulted_passes: Runs that passed with faults.
        faulted_runs: Runs counted with faults.
    """

    passes: int
    runs: int
    faulted_passes: int
    faulted_runs: int

    @property
    def clean(self) -> Interval:
        """The pass rate without faults, with its 95 % Wilson interval."""
        return wilson(self.passes, self.runs)

    @property
    def faulted(self) -> Interval:
        """The pass rate with faults, with its 95 % Wilson interval."""
        return wilson(self.faulted_passes, self.faulted_runs)

    @property
    def drop(self) -> Interval | None:
        """How much lower the pass rate is with faults (negative: higher), 95 % interval.

        None when a side has no run to count.
        """
        if self.runs < 1 or self.faulted_runs < 1:
            return None
        return newcombe(self.faulted_passes, self.faulted_runs, self.passes, self.runs)

    @property
    def drops(self) -> bool:
        """Whether the drop is beyond noise: its interval lies wholly above 0."""
        drop = self.drop
        return drop is not None and drop.low > 0

    def to_dict(self) -> dict[str, Any]:
        """The counts, both rates and the drop (null without runs), for reports."""
        drop = self.drop
        return {
            "passes": self.passes,
            "runs": self.runs,
            "faulted_passes": self.faulted_passes,
            "faulted_runs": self.faulted_runs,
            "pass_rate": self.clean.to_dict(),
            "faulted_pass_rate": self.faulted.to_dict(),
            "drop": None if drop is None else drop.to_dict(),
            "beyond_noise": self.drops,
        }


@dataclass(frozen=True)
class Robustness:
    """A suite's pass rates without and with injected tool faults (see the module doc).

    Attributes:
        rate: The share of mocked tool calls that failed in the faulted pass.
        seed: The seed of both passes: the same seed injects the same faults.
        cases: Each case's `PassRates`, by name, in the suite's order.
        overall: The suite's `PassRates` (xfailed runs left out).
        clean: The pass without faults.
        faulted: The pass with faults.
    """

    rate: float
    seed: int | None
    cases: dict[str, PassRates]
    overall: PassRates
    clean: EvalSuiteResult = field(repr=False)
    faulted: EvalSuiteResult = field(repr=False)

    @classmethod
    def of(cls, clean: EvalSuiteResult, faulted: EvalSuiteResult, rate: float) -> Robustness:
        """The comparison of a pass without faults and one with faults at `rate`."""
        with_faults = {stats.name: stats for stats in faulted.cases}
        cases = {}
        for stats in clean.cases:
            other = with_faults.get(stats.name)
            faulted_runs = other.runs if other is not None else ()
            cases[stats.name] = PassRates(
                stats.passes,
                len(stats.runs),
                sum(run.passed for run in faulted_runs),
                len(faulted_runs),
            )
        overall = PassRates(*_counted(clean), *_counted(faulted))
        return cls(rate, clean.seed, cases, overall, clean, faulted)

    @property
    def repeat(self) -> int:
        """Runs of each case asked for in each pass."""
        return self.clean.repeat

    @property
    def lower(self) -> list[str]:
        """The cases that passed less often with faults."""
        return [name for name, rates in self.cases.items() if _points(rates) > 0]

    def summary(self) -> str:
        """The comparison in one sentence (what ``adk-eval run --faults`` prints last).

        E.g. ``under 20% tool faults, 6 of 10 cases pass less often (2 beyond noise);
        overall 92% [85%, 96%] -> 61% [52%, 70%], a drop of 31 points [19, 42]``.
        """
        lower, total = self.lower, len(self.cases)
        noisy = sum(self.cases[name].drops for name in lower)
        verb = "passes" if len(lower) == 1 else "pass"
        cases = f"{len(lower)} of {total} case{'' if total == 1 else 's'} {verb} less often"
        if lower:
            cases += f" ({noisy} beyond noise)"
        overall = self.overall
        return (
            f"under {self.rate:.0%} tool faults, {cases}; overall {overall.clean} -> "
            f"{overall.faulted}, {change_words(overall.drop)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``robustness`` object (docs/json-report.md)."""
        return {
            "fault_rate": self.rate,
            "seed": self.seed,
            "repeat": self.repeat,
            "summary": self.summary(),
            "overall": self.overall.to_dict(),
            "cases": [{"name": name, **rates.to_dict()} for name, rates in self.cases.items()],
        }


def change_words(drop: Interval | None) -> str:
    """A drop in points with its interval: ``a drop of 31 points [19, 42]`` (or a gain)."""
    if drop is None:
        return "no drop measured (a pass has no run to count)"
    if drop.estimate < 0:
        return f"a gain of {_pt(-drop.estimate)} points [{_pt(-drop.high)}, {_pt(-drop.low)}]"
    return f"a drop of {_pt(drop.estimate)} points [{_pt(drop.low)}, {_pt(drop.high)}]"


def _pt(share: float) -> int:
    """A share as whole percentage points (0.314 -> 31)."""
    return round(share * 100)


def _points(rates: PassRates) -> float:
    drop = rates.drop
    return drop.estimate if drop is not None else 0.0


def _counted(suite: EvalSuiteResult) -> tuple[int, int]:
    """Passes and runs of `suite` as its pass rate counts them (xfailed runs left out)."""
    counted = [run for run in suite.results if run.outcome != "xfailed"]
    return sum(run.passed for run in counted), len(counted)


async def robustness(
    cases: Sequence[EvalCase],
    *,
    rate: float,
    repeat: int = DEFAULT_REPEAT,
    seed: int | None = None,
    **options: Any,
) -> Robustness:
    """Runs `cases` without faults, then with seeded faults at `rate`, and compares them.

    Example:
        ``report = await robustness(cases, rate=0.2, repeat=5)`` then
        ``print(report.summary())``.

    Args:
        cases: The cases (not changed: the faulted pass runs copies).
        rate: The share of calls (above 0, at most 1) that fail on every mocked or
            simulated tool without faults of its own; real tools are never faulted.
        repeat: Runs of each case in each pass (5: a rate over one run is 0 or 1).
        seed: The seed of both passes (None: a new one, `Robustness.seed`); the same
            seed injects the same faults at the same calls.
        **options: Any other keyword of `run_eval_suite` (``executor``,
            ``max_concurrency``, ``max_duration``, ``model_calls``, ...), for both passes.

    Raises:
        EvalSetupError: A `rate` outside (0, 1], an executor that does not apply
            faults (`adk_eval._suites._run.check_applies_faults`), or what
            `run_eval_suite` refuses.
    """
    check_a_list_of_cases(cases, "robustness")
    checked = check_fault_rate(rate, "rate")
    check_applies_faults(options.get("executor"))  # before the pass without faults, not after
    seed = seed if seed is not None else new_seed()
    clean = await run_eval_suite(cases, repeat=repeat, seed=seed, **options)
    faulted = await run_eval_suite(cases, repeat=repeat, seed=seed, faults=checked, **options)
    return Robustness.of(clean, faulted, checked)
