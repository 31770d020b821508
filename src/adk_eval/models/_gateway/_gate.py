"""`RunGate`: one run's model calls as the gateway sees them, and where a run's gate comes from.

`Gateway` is what a suite's runs in one process share: the `ModelCalls` they
follow and the `Pacer` they wait in. The executor makes one for its runs; a
run alone gets one of its own (`Gateway.alone`). `Gateway.gate` makes a run's
`RunGate`, complete: its settings, its pacer, which roles it caches, its
cassette (opened when the settings record or replay), the count of each role's
calls (a cassette's order), what its calls met (`count`, as `ProviderStats`:
each count a field), the `UsageMeter` of its judges' and
simulated tools' calls (`record_usage`), and the seconds some call of the run
was waiting for quota (`waiting`: the union of overlapping waits, so two calls
waiting side by side count once). Listeners (`on_pause`) hear when the run
starts and stops waiting: the run's ``max_duration`` stands still meanwhile.

A run makes its gate the gate of everything it calls (`gating`), so that its
judges, simulated tools and summarizer go through it too. Work outside runs
that calls models for many things at once (stored conversations scored, replayed
or mined) holds one `Gateway` and gates each thing with `Gateway.call_gate`, so
that all their calls wait in one pacer and one limit holds across them. A call
outside any gate gets a gate of its own, on the project's settings and a pacer
of its own (`current_gate`), unless the code around it says which settings its
own calls follow (`outside_runs`: the command line, as it imports the eval
files, so that a cassette replaying asks for no key).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from .._pacing._pacer import LocalPacer, Pacer
from ._answers import ResponseStore
from ._settings import ModelCalls, project_settings, role_kind
from ._stats import ProviderStats
from ._usage import UsageMeter, current_role

__all__ = ["Gateway", "RunGate", "current_gate", "gating", "outside_runs"]


_NOT_A_WAIT = 0.01
"""Seconds below which a wait is not counted (the go-ahead of a pacer in another process)."""


@dataclass(frozen=True)
class Gateway:
    """The settings and the pacer of the model calls of a suite's runs in one process.

    Attributes:
        settings: How the calls are paced, retried, cached and recorded.
        pacer: Where they wait for their turn.
    """

    settings: ModelCalls
    pacer: Pacer

    @classmethod
    def alone(cls, settings: ModelCalls | None = None) -> Gateway:
        """A gateway of its own: `settings` (None: the project's) and a pacer of its own."""
        return cls(settings if settings is not None else project_settings(), LocalPacer())

    def call_gate(self) -> RunGate:
        """A gate for calls outside any run (one call, a stored conversation's), in this pacer."""
        return RunGate(self.settings, self.pacer)

    def gate(self, case: str, attempt: int, cache: frozenset[str] | None = None) -> RunGate:
        """The gate of attempt `attempt` of `case` (`cache`: its cached roles; None: the settings').

        Raises:
            EvalSetupError: The cassette's file cannot be read as one (replaying).
        """
        settings = self.settings
        cassette: ResponseStore | None = None
        if settings.record is not None or settings.replay is not None:
            from ._cassette import open_cassette  # with its request matching: only when asked

            cassette = open_cassette(settings, case, attempt)
        return RunGate(
            settings,
            self.pacer,
            case=case,
            attempt=attempt,
            cache=cache,
            cassette=cassette,
        )


class RunGate:
    """One run's model calls (see the module doc).

    Args:
        settings: The run's `ModelCalls`.
        pacer: Where its calls wait for their turn.
        case: The case's name (None: outside a run).
        attempt: Which repetition.
        cache: The roles cached in this run (None: the settings').
        cassette: The run's cassette, when the settings record or replay.
        clock: Monotonic seconds.
    """

    def __init__(
        self,
        settings: ModelCalls,
        pacer: Pacer,
        *,
        case: str | None = None,
        attempt: int = 0,
        cache: frozenset[str] | None = None,
        cassette: ResponseStore | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.pacer = pacer
        self.case = case
        self.attempt = attempt
        self.cached_roles = settings.cached if cache is None else cache
        self.cassette = cassette
        self._met = ProviderStats()
        self.meter = UsageMeter()
        """What the calls whose usage no event carries (judges, simulated tools) used."""
        self._clock = clock
        self._indexes: Counter[str] = Counter()
        self._waiting = 0
        self._since = 0.0
        self._waited = 0.0
        self._listeners: list[Callable[[bool], None]] = []

    def caches(self, role: str) -> bool:
        """Whether `role`'s answers are cached in this run."""
        return role_kind(role) in self.cached_roles

    def next_index(self, role: str) -> int:
        """The number of `role`'s next call in this run (from 1)."""
        self._indexes[role] += 1
        return self._indexes[role]

    def on_pause(self, listener: Callable[[bool], None]) -> None:
        """Calls ``listener(True)`` when the run starts waiting, ``listener(False)`` after."""
        self._listeners.append(listener)

    @property
    def waited(self) -> float:
        """Seconds some call of the run has waited so far (the wait going on included)."""
        current = self._clock() - self._since if self._waiting else 0.0
        return self._waited + current

    def wait_left(self) -> float:
        """Seconds of waiting the run may still spend (`ModelCalls.max_wait`)."""
        return max(0.0, self.settings.max_wait - self.waited)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """The code inside waits for a provider: it does not count as the run's time."""
        self._waiting += 1
        if self._waiting == 1:
            self._since = self._clock()
            for listener in self._listeners:
                listener(True)
        try:
            yield
        finally:
            self._waiting -= 1
            if self._waiting == 0:
                waited = self._clock() - self._since
                if waited >= _NOT_A_WAIT:  # (a shared pacer's round trip is not a wait)
                    self._waited += waited
                for listener in self._listeners:
                    listener(False)

    def record_usage(self, model: str, usage: object) -> None:
        """Records one response's `usage_metadata` for the current role (`usage_role`)."""
        self.meter.add(current_role(), model, usage)

    def count(self, met: ProviderStats) -> None:
        """Adds what one call met (``ProviderStats(retries=1)``; a field's name, checked)."""
        self._met += met

    def stats(self) -> ProviderStats:
        """What the run's calls met so far, and the seconds it waited."""
        return dataclasses.replace(self._met, waited_s=round(self.waited, 3))

    def close(self) -> None:
        """The run is over: its cassette, if it has one, is written out; nothing listens."""
        self._listeners.clear()  # they close over the run, which must not outlive its end
        if self.cassette is not None:
            self.cassette.close()


_GATE: ContextVar[RunGate | None] = ContextVar("adk_eval_run_gate", default=None)


def current_gate() -> RunGate:
    """The current run's gate, or a gate of its own for a call outside any run."""
    gate = _GATE.get()
    return gate if gate is not None else RunGate(project_settings(), LocalPacer())


@contextlib.contextmanager
def gating(gate: RunGate) -> Iterator[RunGate]:
    """Makes `gate` the gate of every model call made inside."""
    token = _GATE.set(gate)
    try:
        yield gate
    finally:
        _GATE.reset(token)


@contextlib.contextmanager
def outside_runs(settings: ModelCalls) -> Iterator[RunGate]:
    """The model calls made inside, outside any run, follow `settings` (one pacer for them)."""
    with gating(RunGate(settings, LocalPacer())) as gate:
        yield gate
