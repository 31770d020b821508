"""``run --faults RATE``: the pass with faults, the robustness table and sentence, its gate.

The suite runs as written (every gate but ``--fail-on-robustness-drop`` judges
that pass), then again with seeded faults at RATE on every mocked or simulated
tool (`adk_eval._suites._faulted`); the two are compared by
`adk_eval._suites._robustness.Robustness`. Without ``--repeat``, each case runs
5 times in each pass (`DEFAULT_REPEAT`, as `robustness` does): a pass rate over
one run is 0 or 1, and only a few runs give its interval a meaning.

This module imports no ADK: the harness comes in when a command runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from ._common import fail
from ._gates import GateVerdict

if TYPE_CHECKING:
    from .._statistics import Interval
    from .._suites._results import EvalSuiteResult
    from .._suites._robustness import PassRates, Robustness
    from ._selection import RunOptions

__all__ = ["Measured", "fault_options", "faulted_line"]


def fault_options(options: RunOptions) -> RunOptions:
    """`options` with ``--faults``' default repeats; a robustness gate without it is refused."""
    if options.max_robustness_drop is not None and options.faults is None:
        fail(
            "--fail-on-robustness-drop compares the runs with faults to those without; "
            "give --faults RATE too (e.g. --faults 0.2)"
        )
    if options.faults is None:
        return options
    context = click.get_current_context(silent=True)
    source = context.get_parameter_source("repeat") if context is not None else None
    if source not in (None, ParameterSource.DEFAULT):
        return options
    from .._suites._robustness import DEFAULT_REPEAT

    return dataclasses.replace(options, repeat=DEFAULT_REPEAT)


def faulted_line(options: RunOptions) -> str:
    """The line that opens the pass with faults."""
    return (
        f"with faults: {options.faults:.0%} of the calls of every mocked or simulated tool "
        f"fail (seed {options.seed}; a mock's own with_faults kept, real tools never faulted)"
    )


@dataclass(frozen=True)
class Measured:
    """The robustness of a ``run --faults`` and its gate (``--fail-on-robustness-drop``)."""

    robustness: Robustness
    max_drop: float | None = None

    @classmethod
    def of(cls, clean: EvalSuiteResult, faulted: EvalSuiteResult, options: RunOptions) -> Measured:
        """The comparison of the two passes of a ``run --faults``."""
        from .._suites._robustness import Robustness

        assert options.faults is not None
        return cls(Robustness.of(clean, faulted, options.faults), options.max_robustness_drop)

    def print(self, out: Console) -> None:
        """The table of each case's pass rates and drop, then the sentence."""
        table = Table(header_style="bold", title=None)
        widest = max((len(name) for name in self.robustness.cases), default=0)
        # a case name is never cut, and folds only past 60 columns (as in the suite table)
        table.add_column("Case", overflow="fold", min_width=min(widest, 60))
        for column in ("Without faults", "With faults", "Drop (points)", ""):
            table.add_column(column)
        for name, rates in self.robustness.cases.items():
            table.add_row(name, *_row(rates))
        table.add_row("[bold]suite[/]", *_row(self.robustness.overall))
        out.print(
            f"robustness under {self.robustness.rate:.0%} tool faults "
            "(pass rates and drops with their 95% intervals):"
        )
        out.print(table)
        out.print(self.robustness.summary(), markup=False, highlight=False)

    def verdict(self) -> GateVerdict | None:
        """``--fail-on-robustness-drop``'s verdict (None: not asked for)."""
        if self.max_drop is None:
            return None
        from .._suites._robustness import change_words

        drop = self.robustness.overall.drop
        gate = f"--fail-on-robustness-drop {self.max_drop:g}"
        words = f"under {self.robustness.rate:.0%} tool faults, {change_words(drop)}"
        if drop is None:
            return GateVerdict(gate, True, words)
        failed = round(drop.estimate * 100, 6) > self.max_drop
        return GateVerdict(gate, failed, f"{words} (allowed {self.max_drop:g})")

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``robustness`` object."""
        return self.robustness.to_dict()


def _row(rates: PassRates) -> tuple[str, str, str, str]:
    drop = rates.drop
    points = "-" if drop is None else _points(drop)
    return (
        _rate(rates.passes, rates.runs, rates.clean),
        _rate(rates.faulted_passes, rates.faulted_runs, rates.faulted),
        points,
        "beyond noise" if rates.drops else "",
    )


def _rate(passes: int, runs: int, interval: Interval) -> str:
    """As the suite table shows a pass rate: ``4/10 17%-69%``."""
    return f"{passes}/{runs} {interval.low:.0%}-{interval.high:.0%}"


def _points(drop: Interval) -> str:
    return f"{round(drop.estimate * 100)} [{round(drop.low * 100)}, {round(drop.high * 100)}]"
