"""What scoring a store keeps while its sessions stream through: `Tally`, then `StoreScore`.

Memory stays flat whatever the store's size: a session is dropped once scored,
and a score keeps counts, not runs. It lists at most `KEEP_RUNS` runs: every run
while there are no more, else the runs that did not pass first (a passing run
gives way to one that did not pass), the first `KEEP_EVENTS` of those with their
events and final state (for their explanations), the others with their verdicts
only. Every run is still handed to ``on_result`` as it is scored. What the stream
of stored conversations left out (open, unreadable), what redaction replaced and
what the source said about itself join the score at the end (`Tally.score`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from .._errors import EvalSetupError
from .._result import EvalResult
from .._sources._files import Unreadable
from .._sources._redact._redactor import RedactionCounts
from .._sources._stored import ReadCounts
from .._statistics import Interval, wilson
from .._suites._results import EvalSuiteResult, suite_from_results
from .._trace import EvalTrace

__all__ = ["KEEP_EVENTS", "KEEP_RUNS", "StoreScore", "Tally"]

KEEP_RUNS = 1000
"""Runs a score lists, at most (the others are counted)."""

KEEP_EVENTS = 200
"""Listed runs that did not pass and keep their events (for explanations and reports)."""


@dataclass(frozen=True, repr=False)
class StoreScore(EvalSuiteResult):
    """Stored sessions scored: every one counted, at most `KEEP_RUNS` of them listed.

    `summary`, the pass rate and its intervals count every session scored;
    `results` lists the runs kept (see the module doc), so reports stay small
    whatever the store's size.

    Attributes:
        open_sessions: Open conversations (still being written), ``"NAME: why"``: the
            first 50; left out of the score unless it included them.
        open_count: How many conversations were open.
        unreadable: Sessions whose rows could not be read, left out: the first 50.
        unreadable_count: How many sessions could not be read.
        redacted: What redaction replaced in the sessions scored, by kind (None: the
            sessions were scored as stored).
        notes: What the source said about itself, one line each (a trace source's
            traces that are no conversation, what its spans lack).
    """

    open_sessions: tuple[str, ...] = ()
    open_count: int = 0
    unreadable: tuple[Unreadable, ...] = ()
    unreadable_count: int = 0
    redacted: RedactionCounts | None = None
    notes: tuple[str, ...] = ()

    @property
    def listed_all(self) -> bool:
        """Whether `results` lists every session scored."""
        return len(self.results) == self.summary["total"]

    @property
    def _counted(self) -> int:
        return self.summary["total"] - self.summary["xfailed"]

    @property
    def ok(self) -> bool:
        """Whether every session scored passed."""
        return self.summary["passed"] + self.summary["xfailed"] == self.summary["total"]

    @property
    def pass_rate(self) -> float:
        """Sessions that passed / sessions scored (1.0 when none was)."""
        return self.summary["passed"] / self._counted if self._counted else 1.0

    @property
    def pass_rate_interval(self) -> Interval:
        """The pass rate over every session scored, with its 95 % Wilson interval."""
        if not self._counted:
            return Interval(1.0, 0.0, 1.0)
        return wilson(self.summary["passed"], self._counted)

    @property
    def pass_hat_k_interval(self) -> Interval:
        """One run per session: pass^1 over the sessions is their pass rate."""
        return wilson(self.summary["passed"], self._counted)

    @property
    def pass_at_k_interval(self) -> Interval:
        """One run per session: pass@1 over the sessions is their pass rate."""
        return wilson(self.summary["passed"], self._counted)


class Tally:
    """Counts and the runs worth listing, as sessions are scored (see the module doc).

    Args:
        keep: Runs listed at most (None: every run).

    Raises:
        EvalSetupError: A negative `keep`.
    """

    def __init__(self, keep: int | None = KEEP_RUNS) -> None:
        if keep is not None and keep < 0:
            raise EvalSetupError(f"keep must be >= 0 (or None: every run), got {keep}")
        self.keep = keep
        self.outcomes: Counter[str] = Counter()
        self.failing: list[tuple[int, EvalResult]] = []
        self.passing: list[tuple[int, EvalResult]] = []
        self.with_events = 0

    def add(self, index: int, result: EvalResult) -> None:
        """Counts a run (the `index`-th session read) and lists it if there is room."""
        self.outcomes[result.outcome] += 1
        room = self.keep is None or len(self.failing) + len(self.passing) < self.keep
        if result.passed:
            if room:
                self.passing.append((index, _verdicts_only(result)))
            return
        if not room and (not self.passing or self.keep == 0):
            return
        if not room:
            self.passing.pop()  # a passing run gives way to one that did not pass
        if self.with_events < KEEP_EVENTS:
            self.with_events += 1
        else:
            result = _verdicts_only(result)
        self.failing.append((index, result))

    def score(self, duration_ms: float, read: ReadCounts | None = None) -> StoreScore:
        """The score: the runs listed, in the order their sessions were read, and the counts.

        Args:
            duration_ms: How long the score took.
            read: What the stream of stored conversations left out and replaced.
        """
        read = read if read is not None else ReadCounts()
        listed = [result for _, result in sorted([*self.failing, *self.passing])]
        suite = suite_from_results(
            listed, case_names=[r.name for r in listed], repeat=1, duration_ms=duration_ms
        )
        count = self.outcomes
        summary = {
            "total": sum(count.values()),
            "passed": count["passed"],
            "failed": count["failed"],
            "errors": count["error"],
            "terminated": count["terminated"],
            "xfailed": count["xfailed"],
            "xpassed": count["xpassed"],
            "not_run": 0,
        }
        fields = {f.name: getattr(suite, f.name) for f in dataclasses.fields(EvalSuiteResult)}
        return StoreScore(
            **{**fields, "summary": summary},
            open_sessions=tuple(f"{name}: {why}" for name, why in read.opened.first),
            open_count=read.opened.count,
            unreadable=tuple(read.unreadable.first),
            unreadable_count=read.unreadable.count,
            redacted=read.redacted,
            notes=read.notes,
        )


def _verdicts_only(result: EvalResult) -> EvalResult:
    """A run without its conversation and state (they go with the session)."""
    return dataclasses.replace(result, _trace=EvalTrace(events=(), case_name=result.name))
