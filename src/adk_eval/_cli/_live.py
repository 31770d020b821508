"""A run stored while it runs: ``adk-eval view`` shows it appear and fill in.

``adk-eval run`` stores its run in the runs database as it starts (no run
finished, marked running by its process), rewrites it as runs finish (at most
about once a second, from a thread of its own), and stores the whole report at
the end in the same row.
Writing it never stops the suite: if the database cannot be written meanwhile,
the run goes on, a warning says so, and the end stores it as before.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from .._case import EvalCase
    from .._result import EvalResult
    from .._suites._inventory import RunsForReal
    from ._selection import RunOptions

__all__ = ["LiveRun"]

_EVERY_S = 1.0
"""The shortest time between two writes (longer when a write takes long: 10 times it)."""


@dataclass
class LiveRun:
    """The row of one ``run`` in the runs database, kept up to date as its runs finish.

    Attributes:
        db: The runs database.
        command: The command stored with the run.
        case_names: The suite's cases, in order.
        repeat: Runs asked per case.
        seed: The suite's seed.
        inventory: What runs for real (the block every report carries).
        out: Where a warning goes when the database cannot be written.
    """

    db: Path
    command: str
    case_names: list[str]
    repeat: int
    seed: int | None
    inventory: RunsForReal
    out: Console
    run_id: int | None = None
    _started: float = field(default_factory=time.perf_counter)
    _every_s: float = _EVERY_S
    _results: list[EvalResult] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _writer: threading.Thread | None = None

    @classmethod
    def of(
        cls,
        db: Path | None,
        command: str,
        cases: list[EvalCase],
        options: RunOptions,
        inventory: RunsForReal,
        out: Console,
    ) -> LiveRun | None:
        """The live row of a ``run`` of `cases` (None when the run is not stored)."""
        if db is None:
            return None
        names = [case.name for case in cases]
        return cls(db, command, names, options.runs, options.seed, inventory, out)

    def start(self) -> int | None:
        """Stores the run, none of it finished yet; its id (None: it cannot be stored now)."""
        self._write([])
        return self.run_id

    def finished(self, results: list[EvalResult]) -> None:
        """`results` finished so far: stored within about a second, off the event loop.

        The writer thread starts at the first finished run (after any worker
        processes were forked, which a running thread must not see).
        """
        with self._lock:
            self._results = list(results)
        if self._writer is None and self.run_id is not None:
            self._writer = threading.Thread(target=self._keep, name="adk-eval-live", daemon=True)
            self._writer.start()

    def close(self) -> None:
        """Stops writing (before the run's end stores it whole), waiting for a write under way."""
        self._stop.set()
        if self._writer is not None:
            self._writer.join()

    def _keep(self) -> None:
        while not self._stop.wait(self._every_s):
            with self._lock:
                results, self._results = self._results, None
            if results is not None:
                self._write(results)

    def _write(self, results: list[EvalResult]) -> None:
        import sqlite3

        from .._errors import AdkEvalError
        from .._suites._results import suite_from_results
        from ..reporting._json_report import suite_report
        from ..reporting._store import RunStore

        began = time.perf_counter()
        suite = suite_from_results(
            results,
            case_names=self.case_names,
            repeat=self.repeat,
            duration_ms=(began - self._started) * 1000,
            stopped_early=True,
            seed=self.seed,
            runs_for_real=self.inventory,
        )
        report = suite_report(suite)
        store = RunStore(self.db)
        try:
            if self.run_id is None:
                self.run_id = store.begin(report, command=self.command)
            else:
                live = {**report, "running": {"pid": os.getpid()}}
                store.append(live, command=self.command, run_id=self.run_id)
        except (AdkEvalError, sqlite3.Error) as error:  # e.g. locked: the suite goes on
            self.out.print(f"warning: the run is stored at its end only: {error}", markup=False)
            self._stop.set()
            return
        self._every_s = max(_EVERY_S, 10 * (time.perf_counter() - began))
