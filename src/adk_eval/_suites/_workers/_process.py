"""One worker process of `Workers`: the parent's handle on it, and the worker's main.

How a worker starts (`StartMethod`):

* ``fork``: forked from this process before its event loop runs (`Workers.prefork`,
  which ``adk-eval run`` calls): what this process imported, the case modules
  included, is there at no cost.
* ``forkserver``: forked from multiprocessing's fork server, which imported the
  harness, ADK and the model clients this process uses once (`_warm`); the worker
  then imports its case modules. Starting one blocks until the fork server is
  ready, so the pool starts them off the event loop.
* ``spawn``: a fresh interpreter, where there is no fork server (Windows).

The parent sends ``("setup", WorkerSetup)`` once, then ``(module, case name,
attempt)`` for each run and None to stop. The worker answers ``("ready",)`` once
its case modules are imported, then ``("result", data)`` for each run, where
``data`` is `EvalResult.to_data()`. A worker whose parent is gone exits: at once
on Linux (the kernel kills it), else when it reads the closed pipe.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Literal, TypeAlias

import anyio

from ..._lazy import imports_without_collections
from ..._result import EvalResult
from ...models._roles._clients import warm_clients
from .._jobs import CaseLoader, CaseRef, Job, WorkerSetup, error_result

__all__ = ["StartMethod", "WorkerProcess", "default_start_method", "fork_is_safe"]

StartMethod: TypeAlias = Literal["fork", "forkserver", "spawn"]

WARM_ENV = "ADK_EVAL_WARM_MODULES"
"""The modules the fork server imports besides the harness (comma-separated), set as it starts."""

_WARM_PREFIXES = ("google.adk.", "google.genai.")
_WARM_PACKAGES = ("litellm", "openai", "anthropic", "mcp")
_FORKSERVER_LOCK = threading.Lock()


def default_start_method() -> StartMethod:
    """``forkserver`` where this platform has one, else ``spawn``."""
    methods = multiprocessing.get_all_start_methods()
    return "forkserver" if "forkserver" in methods else "spawn"


def fork_is_safe() -> bool:
    """Whether this process may fork workers now: a fork platform and no other thread.

    A fork copies only the calling thread; locks another thread held stay held in
    the copy. Native threads (gRPC's, an exporter's) count too where the system
    lists them (``/proc/self/task``).
    """
    if "fork" not in multiprocessing.get_all_start_methods() or sys.platform == "darwin":
        return False
    if threading.active_count() > 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return True


class WorkerProcess:
    """One worker and the runs it has in flight.

    Starting one with ``forkserver`` blocks until the fork server has imported what
    it preloads (seconds, the first time): the pool starts workers in threads.

    Args:
        setup: Sent at once when given (else call `configure`).
        method: How it starts (default: `default_start_method`).

    Attributes:
        started: `time.perf_counter()` when it was asked to start.
        ready_after: Seconds from `started` to ready (case modules imported), once ready.
        in_flight: The runs sent to it and not answered, by (case name, attempt).
        gone: Whether it exited or closed its end of the pipe.
    """

    def __init__(self, setup: WorkerSetup | None = None, method: StartMethod | None = None) -> None:
        self.method: StartMethod = method or default_start_method()
        self.started = time.perf_counter()
        context = _context(self.method)
        self._conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child,), name="adk-eval-worker", daemon=False
        )
        self.process.start()
        child.close()
        self.ready_after: float | None = None
        self.in_flight: dict[tuple[str, int], Job] = {}
        self.gone = False
        if setup is not None:
            self.configure(setup)

    @staticmethod
    def any_ready(workers: Sequence[WorkerProcess]) -> bool:
        """Whether any of `workers` has something to say (or has ended), without waiting."""
        waitables = [item for worker in workers for item in worker._waitables()]
        return bool(wait(waitables, 0))

    def configure(self, setup: WorkerSetup) -> None:
        """Sends the suite's set-up: the worker imports `setup.preload`, then says it is ready."""
        try:
            self._conn.send(("setup", setup))
        except OSError:
            self.gone = True

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


def _context(method: StartMethod) -> Any:
    """The multiprocessing context of `method`; for ``forkserver``, its server started warm."""
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        _start_forkserver(context)
    return context


def _start_forkserver(context: Any) -> None:
    """Starts the fork server (once per process) preloading the harness and `warm_modules`."""
    from multiprocessing import forkserver

    with _FORKSERVER_LOCK:
        context.set_forkserver_preload(["adk_eval._suites._workers._warm"])
        previous = os.environ.get(WARM_ENV)
        os.environ[WARM_ENV] = ",".join(warm_modules())
        try:
            forkserver.ensure_running()  # a no-op when it runs already
        finally:
            if previous is None:
                del os.environ[WARM_ENV]
            else:
                os.environ[WARM_ENV] = previous


def warm_modules() -> list[str]:
    """What the fork server imports besides the harness.

    ADK's and the model clients' modules this process has loaded; never the user's
    own modules, which may change between two suites of one process.
    """
    names = [name for name in sys.modules if name.startswith(_WARM_PREFIXES)]
    return sorted(names) + [name for name in _WARM_PACKAGES if name in sys.modules]


def _serve(conn: Connection) -> None:
    """A worker's main: takes its set-up, says it is ready, then runs what the parent sends.

    When the parent is gone (its end of the pipe closed), the worker exits quietly.
    """
    # The parent decides (a terminal's Ctrl-C and a CI's SIGTERM reach the whole group).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with_parent()
    message = _receive(conn)
    if not message or message[0] != "setup":
        return
    setup: WorkerSetup = message[1]
    if setup.environ is not None:  # the parent's, as it is now
        os.environ.clear()
        os.environ.update(setup.environ)
    with imports_without_collections():  # the case modules, their agents and model clients
        loader = CaseLoader(setup)
        for module in setup.preload:
            loader.preload(module)
        warm_clients()  # ready means ready: no seconds of imports at the first model call
    if _send(conn, ("ready",)):
        anyio.run(_serve_jobs, conn, loader)


def _die_with_parent() -> None:
    """On Linux, asks the kernel to kill this process when its parent dies (no orphans).

    A worker busy in a run that never awaits would not read the closed pipe.
    """
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(0)


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
            try:
                data = (await loader.run(ref, attempt)).to_data()
            except Exception as error:
                # A run that raises here would end this task group while the thread
                # reading the pipe waits for the parent, which waits for this result.
                kind = type(error).__name__
                message = f"the worker could not send this run back: {kind}: {error}"
                data = error_result(ref.name, attempt, "WorkerResultError", message).to_data()
            if not _send(conn, ("result", data)):
                group.cancel_scope.cancel()

        while True:
            message = await anyio.to_thread.run_sync(_receive, conn)
            if message is None:
                group.cancel_scope.cancel()
                return
            module, name, attempt = message
            group.start_soon(run, CaseRef(module, name), attempt)
