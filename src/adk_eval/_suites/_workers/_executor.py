"""`Workers`: one suite on several worker processes of this machine.

`Workers(n)` runs a suite on n worker processes. They start warm (`_process`):
forked from this process when `prefork` ran before the event loop (``adk-eval
run`` does), else forked from a fork server that imported the harness, ADK and
the model clients once. Each worker imports the case modules of the suite once,
before it says it is ready, and runs cases by reference (see `_jobs`), so every
case must be bound at module level. While workers start, this process runs
cases itself; once they are all ready it only feeds them (see `_pool`).

The processes pace their model calls with one `Pacer`, the executor's, which
this process serves to its workers on a Unix socket while the suite runs
(`models._pacing._shared`: the socket's address is in the environment the
workers take); the suite's `ModelCalls` go to them in their `WorkerSetup`.

``Workers("auto")`` uses one worker per core, but only when it pays: it runs in
this process first and starts workers only if, after `AUTO_PROBE_SECONDS`, the
runs left would take at least `AUTO_MIN_SECONDS` more here. What it chose, and
why, is the suite's `placement`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ..._errors import EvalSetupError
from ...models._gateway._gate import Gateway
from ...models._pacing._pacer import LocalPacer, Pacer
from ...models._pacing._shared import PACER_ENV, serve_pacer
from .._jobs import WorkerSetup, case_refs
from .._plan import SuitePlan, available_cores
from .._results import EvalSuiteResult
from ._pool import AUTO_MIN_SECONDS, AUTO_PROBE_SECONDS, Pool, WarmWorkers
from ._process import fork_is_safe

__all__ = ["AUTO_MIN_SECONDS", "AUTO_PROBE_SECONDS", "Workers"]


@dataclass(frozen=True)
class Workers:
    """Runs a suite on processes of this machine, ``max_concurrency`` runs each.

    Example:
        ``await run_eval_suite(CASES, executor=Workers(2))``

    Attributes:
        count: How many worker processes, or ``"auto"``: one per core this
            process may use, when the suite is long enough to pay for them (see
            the module doc).
        default_model: The model of every `LlmAgent` that names none, in the
            workers (``adk-eval run --model``). In this process, set it with
            ``LlmAgent.set_default_model``.
        run_while_starting: This process runs cases until its workers are ready
            (the default), so their start-up is not lost. False: only workers run
            cases, so a case that crashes its process never takes the suite down.
    """

    count: int | Literal["auto"] = "auto"
    default_model: str | None = None
    run_while_starting: bool = True
    warm: WarmWorkers | None = field(default=None, repr=False, compare=False)
    """Workers forked ahead by `prefork` (internal)."""
    pacer: LocalPacer = field(default_factory=LocalPacer, init=False, repr=False, compare=False)
    """Where the model calls of the suites it runs wait, in every process."""
    applies_faults: ClassVar[bool] = True
    """Its processes give each case the plan's faults (`SuitePlan.faults`)."""

    def __post_init__(self) -> None:
        if self.count != "auto" and (not isinstance(self.count, int) or self.count < 1):
            raise EvalSetupError(f"Workers(count) must be >= 1 or 'auto', got {self.count!r}")

    @property
    def processes(self) -> int:
        """The number of worker processes `count` asks for (at most: ``auto`` may start none)."""
        return available_cores() if self.count == "auto" else int(self.count)

    def prefork(self) -> Workers:
        """This executor with its worker processes forked now, from this process as it is.

        Call it after importing the cases and before the event loop runs (``adk-eval
        run`` does): each worker then has every module this process imported, at
        no cost, and is ready at once. Where a fork is not safe (another thread
        runs, or no fork on this platform) it returns the executor unchanged, and
        workers start from the fork server as usual.
        """
        if self.warm is not None or not fork_is_safe():
            return self
        return dataclasses.replace(self, warm=WarmWorkers(self.processes))

    async def run(self, plan: SuitePlan) -> EvalSuiteResult:
        """Runs `plan` (see the module doc).

        Raises:
            EvalSetupError: A case no module binds.
        """
        refs = {ref.name: ref for ref in case_refs(plan.cases)}
        modules = tuple(dict.fromkeys(ref.module for ref in refs.values()))
        workers = min(self.processes, plan.total)
        shared = workers + (1 if self.run_while_starting else 0) > 1
        with _served_pacer(self.pacer, shared) as address:
            environ = {k: v for k, v in os.environ.items() if k != PACER_ENV}
            if address is not None:  # (else each worker paces alone)
                environ[PACER_ENV] = address
            setup = dataclasses.replace(
                WorkerSetup.of(plan, self.default_model), preload=modules, environ=environ
            )
            pool = Pool(
                plan,
                refs,
                setup,
                Gateway(plan.model_calls, self.pacer),
                workers=workers,
                interim=self.run_while_starting,
                auto=self.count == "auto" and self.run_while_starting,
                warm=self.warm,
            )
            return await pool.run()


@contextlib.contextmanager
def _served_pacer(pacer: Pacer, shared: bool) -> Iterator[str | None]:
    """Where this process serves `pacer` to the suite's workers while the suite runs.

    None when it serves none: one process paces alone, and where no Unix socket
    can be served each process paces alone.
    """
    if not shared:
        yield None
        return
    try:
        served = serve_pacer(pacer)
    except OSError:
        yield None
        return
    with served:
        yield served.address
