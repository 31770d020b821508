"""One worker process of `Workers`: the parent's handle on it, and the worker's main.

The parent sends ``(module, case name, attempt)``; the worker answers
``("ready",)`` once its imports are done, then ``("result", data)`` for each run,
where ``data`` is `EvalResult.to_data()`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

import anyio

from .._lazy import imports_without_collections
from .._result import EvalResult
from ._jobs import CaseLoader, CaseRef, Job, WorkerSetup

__all__ = ["WorkerProcess"]

_SPAWN = multiprocessing.get_context("spawn")


class WorkerProcess:
    """One spawned worker and the runs it has in flight.

    Attributes:
        started: `time.perf_counter()` when it was spawned.
        ready_after: Seconds from spawn to ready (imports done), once ready.
        in_flight: The runs sent to it and not answered, by (case name, attempt).
        gone: Whether it exited or closed its end of the pipe.
    """

    def __init__(self, setup: WorkerSetup) -> None:
        self._conn, child = _SPAWN.Pipe()
        self.process = _SPAWN.Process(
            target=_serve, args=(child, setup), name="adk-eval-worker", daemon=False
        )
        self.started = time.perf_counter()
        self.process.start()
        child.close()
        self.ready_after: float | None = None
        self.in_flight: dict[tuple[str, int], Job] = {}
        self.gone = False

    @staticmethod
    def any_ready(workers: Sequence[WorkerProcess]) -> bool:
        """Whether any of `workers` has something to say (or has ended), without waiting."""
        waitables = [item for worker in workers for item in worker._waitables()]
        return bool(wait(waitables, 0))

    def send(self, ref: CaseRef, job: Job) -> bool:
        """Starts `job` (of the case `ref` names) on this worker; False when it is gone."""
        try:
            self._conn.send((ref.module, ref.name, job.attempt))
        except OSError:
            self.gone = True
            return False
        self.in_flight[(job.case, job.attempt)] = job
        return True

    def receive(self) -> list[EvalResult]:
        """The results waiting; notes readiness, and that the worker is gone if it is."""
        results = []
        try:
            while self._conn.poll():
                message = self._conn.recv()
                if message[0] == "ready":
                    self.ready_after = time.perf_counter() - self.started
                else:
                    result = EvalResult.from_data(message[1])
                    self.in_flight.pop((result.name, result.attempt), None)
                    results.append(result)
        except (EOFError, OSError):
            self.gone = True
        if not self.process.is_alive():
            self.gone = True
        return results

    def exit_cause(self) -> str:
        """How the process ended, in words."""
        self.process.join(1)
        code = self.process.exitcode
        if code is None:
            return "it closed its connection"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def stop(self, kill: bool) -> None:
        """Asks the worker to exit (or kills it) and waits for it."""
        if kill:
            self.process.kill()
        else:
            with contextlib.suppress(OSError):
                self._conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self._conn.close()

    def _waitables(self) -> list[Any]:
        return [self._conn, self.process.sentinel]


def _serve(conn: Connection, setup: WorkerSetup) -> None:
    """A worker's main: announces itself ready, then runs what the parent sends.

    When the parent is gone (its end of the pipe closed), the worker exits quietly.
    """
    # The parent decides (a terminal's Ctrl-C and a CI's SIGTERM reach the whole group).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with imports_without_collections():  # the case modules, their agents and model clients
        loader = CaseLoader(setup)
        for module in setup.preload:
            loader.preload(module)
    if _send(conn, ("ready",)):
        anyio.run(_serve_jobs, conn, loader)


def _send(conn: Connection, message: Any) -> bool:
    """Sends `message` to the parent; False when the parent is gone."""
    try:
        conn.send(message)
    except OSError:  # BrokenPipeError, ConnectionResetError: nobody is listening
        return False
    return True


def _receive(conn: Connection) -> Any:
    try:
        return conn.recv()
    except (EOFError, OSError):  # the parent is gone
        return None


async def _serve_jobs(conn: Connection, loader: CaseLoader) -> None:
    async with anyio.create_task_group() as group:

        async def run(ref: CaseRef, attempt: int) -> None:
            result = await loader.run(ref, attempt)
            if not _send(conn, ("result", result.to_data())):
                group.cancel_scope.cancel()

        while True:
            message = await anyio.to_thread.run_sync(_receive, conn)
            if message is None:
                group.cancel_scope.cancel()
                return
            module, name, attempt = message
            group.start_soon(run, CaseRef(module, name), attempt)
