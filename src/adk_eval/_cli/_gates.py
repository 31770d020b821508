"""The CI gates of a command that ends in a suite: each decides alone; any that fails, fails.

A gate looks at the finished suite and passes or fails with one line saying why.
No gate's pass can hide another's failure:

* **finished** (always): every run asked for finished. ``-x``, or a spent
  ``--max-cost``/``--max-tokens`` budget, leaves runs not run, and no rate over
  the runs that did run speaks for them.
* **errors** (always, unless ``--allow-errors``): no run ended in ``error``. An
  error is a broken case (an unmocked tool, a mock that raised, a
  misconfiguration), never the agent's flakiness nor anyone's verdict, so no
  other gate can excuse it. ``--allow-errors`` turns this gate off; the gates
  below then judge error runs as failed runs (the other gates always see them).
* **xfail** (always): no run of a case marked ``xfail`` passed (``xpassed``):
  markers are strict, so a fixed gap gets its marker removed.
* **every run** (without ``--fail-under`` and ``--fail-on``): no run failed,
  terminated or ended in error.
* **--fail-under RATE**: the pass rate reaches RATE.
* **--fail-on PARTY**: no run that failed, terminated or ended in error is
  attributed to PARTY.

An ``xfailed`` run (a marked case failing as expected) fails no gate, and the
pass rate leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._suites._results import EvalSuiteResult

__all__ = ["GateVerdict", "gate_verdicts"]

_NOT_OK = ("failed", "terminated", "error")
"""The outcomes a verdict gate counts against the suite (xpassed has its own gate)."""


@dataclass(frozen=True)
class GateVerdict:
    """What one gate decided.

    Attributes:
        gate: The gate, as the command line names it (``--fail-under 0.9``, ``errors``).
        failed: Whether it fails the command.
        why: One line: what it counted and, when it fails, how to pass it.
    """

    gate: str
    failed: bool
    why: str

    def __str__(self) -> str:
        return f"gate {self.gate}: {'FAILED' if self.failed else 'passed'}: {self.why}"


def gate_verdicts(
    suite: EvalSuiteResult,
    *,
    fail_under: float | None = None,
    fail_on: tuple[str, ...] = (),
    allow_errors: bool = False,
) -> list[GateVerdict]:
    """Every gate's verdict on `suite`, in the order the module doc lists them."""
    verdicts = [_finished(suite), _errors(suite, allow_errors), _xfail(suite)]
    if fail_under is None and not fail_on:
        bad = [r for r in suite.results if r.outcome in _NOT_OK]
        verdicts.append(
            GateVerdict("every run", bool(bad), f"{len(bad)} run(s) failed, terminated or errored")
        )
    if fail_under is not None:
        rate = suite.pass_rate_interval
        counted = f"{_counted(suite)} run(s) counted" + _left_out(suite)
        verdicts.append(
            GateVerdict(
                f"--fail-under {fail_under:g}",
                suite.pass_rate < fail_under,
                f"pass rate {suite.pass_rate:.0%} (required {fail_under:.0%}), 95% interval "
                f"[{rate.low:.0%}, {rate.high:.0%}] over {counted}",
            )
        )
    if fail_on:
        verdicts.append(_parties(suite, fail_on))
    return verdicts


def _counted(suite: EvalSuiteResult) -> int:
    return sum(result.outcome != "xfailed" for result in suite.results)


def _left_out(suite: EvalSuiteResult) -> str:
    xfailed = suite.summary["xfailed"]
    return f" ({xfailed} xfailed left out)" if xfailed else ""


def _finished(suite: EvalSuiteResult) -> GateVerdict:
    total, missing = suite.summary["total"], suite.summary["not_run"]
    if not missing:
        return GateVerdict("finished", False, f"all {total} run(s) finished")
    why = "the suite's budget was spent" if suite.budget_reached is not None else "stopped early"
    return GateVerdict(
        "finished",
        True,
        f"{missing} of {total} run(s) did not run ({why}): a verdict needs every run; "
        "raise --max-cost/--max-tokens, or drop -x",
    )


def _errors(suite: EvalSuiteResult, allow_errors: bool) -> GateVerdict:
    errors = suite.summary["errors"]
    if allow_errors:
        return GateVerdict(
            "errors",
            False,
            f"{errors} run(s) ended in error, judged as failed runs (--allow-errors)",
        )
    if not errors:
        return GateVerdict("errors", False, "no run ended in error")
    return GateVerdict(
        "errors",
        True,
        f"{errors} run(s) ended in error: an error is a broken case, not flakiness, and fails "
        "the command whatever the other gates say (fix the case, or --allow-errors to judge "
        "them as failed runs)",
    )


def _xfail(suite: EvalSuiteResult) -> GateVerdict:
    names = sorted({r.name for r in suite.results if r.outcome == "xpassed"})
    if not names:
        xfailed = suite.summary["xfailed"]
        expected = f" ({xfailed} failed as expected)" if xfailed else ""
        return GateVerdict("xfail", False, f"no run of a case marked xfail passed{expected}")
    return GateVerdict(
        "xfail",
        True,
        f"{suite.summary['xpassed']} run(s) of cases marked xfail passed (xpassed): "
        f"remove the xfail marker of {', '.join(names)}",
    )


def _parties(suite: EvalSuiteResult, parties: tuple[str, ...]) -> GateVerdict:
    """``--fail-on``: whether a run not ok (xpassed aside) is attributed to one of `parties`."""
    bad = [r for r in suite.results if r.outcome in _NOT_OK]
    counted = [r for r in bad if r.attribution is not None and r.attribution.party in parties]
    return GateVerdict(
        f"--fail-on {','.join(parties)}",
        bool(counted),
        f"{len(counted)} failure(s) count, {len(bad) - len(counted)} other(s) reported only",
    )
