"""The audit hook: what a run does outside its mocks and model calls, and whose code did it.

One hook per process (PEP 578 hooks cannot be removed), installed at the first
watched run. While no run is watched it returns at once, and at the
interpreter's exit (when a module's globals may be gone) too. For the code of a
run (see `_scope`), it notes what `_channels` describes: processes started,
signals sent, connections and binds off loopback, name lookups and file writes,
with the code it came from: the case's tool, callback, plugin or toolset whose
code is on the stack, else an import in progress, else the first frame outside
Python and its packages. The run's model calls (the agent's, the user agents',
a judge's, a summarizer's) make the connections they must; those are not noted.
In strict mode the hook refuses the first thing it notes before it happens: it
raises `EvalSandboxError` at the call (a `RuntimeError`, which clients pass on
rather than retry) and stops the run, so code that swallows the error still
ends the run.

Threads: Python 3.11 raises no audit event when a thread starts, so
``threading.Thread.start`` is wrapped (once, with the hook): a thread started by
the code of a run (not a library's own, not a model call's) belongs to that run
(`_scope.adopt_thread`), and what a library does in it is told as ``a thread
started by tool `x```. A pool's workers are started by the jobs submitted to
it: a pool belongs to the run whose code started its first worker, so a pool
made during the run is covered, and a pool that had workers before (one shared
with a client, the loop's default executor) never takes the run's name.

What it cannot see: native code making its own system calls (gRPC's core, Ray's
workers, libcurl, a database driver's file I/O), calls through ctypes, what a
child process does, a multiprocessing ``spawn`` start, threads started with
``_thread.start_new_thread`` or by native code, jobs given to a pool whose
threads were started before the run, and reads and writes on descriptors opened
before.
"""

from __future__ import annotations

import functools
import itertools
import sys
import sysconfig
import threading
import weakref
from collections.abc import Callable, Set
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any

from .._errors import EvalSandboxError
from .._quiet import quiet
from ._channels import METADATA, NETWORK, PROCESS, WATCHED, describe
from ._scope import (
    Belonging,
    RunScope,
    SandboxEvent,
    active_scope,
    adopt_thread,
    in_model_call,
    runs_going,
    thread_owner,
)

__all__ = ["install", "installed"]

_LIBRARIES = tuple(
    str(Path(path))
    for path in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]}
    | {sysconfig.get_paths()["platlib"]}
)
_HARNESS = str(Path(__file__).resolve().parents[1])

_LIBRARY = "code of an installed package"
_state = threading.local()
_installed = False
_install_lock = threading.Lock()


def install() -> None:
    """Adds the hook to this process, and has threads tell which run started them; once."""
    global _installed
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            # No audit event tells a thread's start before Python 3.12; this wrapper does.
            start = _adopting(threading.Thread.start)
            threading.Thread.start = start  # type: ignore[method-assign,assignment]
            _installed = True


def installed() -> bool:
    """Whether this process has the hook."""
    return _installed


def _hook(
    event: str,
    args: tuple[Any, ...],
    *,
    _watched: frozenset[str] = WATCHED,
    _finalizing: Callable[[], bool] = sys.is_finalizing,
) -> None:
    # Bound as defaults: at the interpreter's exit a module's globals may be None already.
    if event not in _watched or _finalizing() or getattr(_state, "busy", False):
        return
    refusal: EvalSandboxError | None = None
    _state.busy = True  # what the hook itself does is audited too
    try:
        belonging = active_scope()
        scope = belonging.scope
        if scope is None or scope.sandbox == "off":
            return
        seen = describe(event, args, scope.started)
        if seen is None:
            return
        kind, detail = seen
        caller = sys._getframe(1)
        attributed = _attribute(scope, belonging, caller)
        if attributed is None or (event in METADATA and _written(scope, detail)):
            return
        noted = SandboxEvent(kind, detail, attributed[0], refused=scope.sandbox == "strict")
        scope.note(noted)
        if noted.refused:
            refusal = EvalSandboxError(noted.line())
            quiet(refusal)  # the result reports it: ADK need not log its traceback too
        elif event in PROCESS:
            _keep_handle(scope, caller)
    finally:
        _state.busy = False
    if refusal is not None:
        if event in NETWORK and hasattr(args[0], "close"):
            args[0].close()  # refused for good: the caller's code may not close it on our error
        raise refusal


def _adopting(start: Callable[[threading.Thread], None]) -> Callable[[threading.Thread], None]:
    """`start`, first making the thread its run's if the run's code starts it."""
    finalizing = sys.is_finalizing

    @functools.wraps(start)
    def adopting_start(self: threading.Thread) -> None:
        if not finalizing() and runs_going():
            _adopt(self, sys._getframe(1))
        start(self)

    return adopting_start


def _adopt(thread: threading.Thread, frame: FrameType) -> None:
    workers = _pool_workers(frame)
    if workers:  # a pool's next worker serves whoever its first one serves
        owner = thread_owner(next(iter(workers)))
        if owner is not None:
            adopt_thread(thread, *owner)
        return
    belonging = active_scope()
    scope = belonging.scope
    if scope is None or scope.sandbox == "off":
        return
    attributed = _attribute(scope, belonging, frame)
    if attributed is not None and attributed[1] is not None:
        adopt_thread(thread, scope, attributed[1])


def _pool_workers(frame: FrameType) -> Set[threading.Thread] | None:
    """The workers of the `ThreadPoolExecutor` starting a thread at `frame` (None: no pool)."""
    if frame.f_code.co_name != "_adjust_thread_count":
        return None
    pool = frame.f_locals.get("self")
    return getattr(pool, "_threads", None) if isinstance(pool, ThreadPoolExecutor) else None


def _attribute(
    scope: RunScope, belonging: Belonging, frame: FrameType
) -> tuple[str, str | None] | None:
    """Who the code at `frame` is, and who the threads it starts are said to be started by.

    None: not the run's code (a library's own thread, a model call's own work).
    The starter is None for a library's own code: its threads stay its own.
    """
    origin, whose = _origin(scope, frame)
    starter = belonging.starter
    if starter is not None and whose != "case":  # a library (or a helper) in the run's thread
        inside = f"a thread started by {starter}"
        return (f"{origin}, in {inside}" if whose == "user" else inside), starter
    if belonging.guessed and whose == "library":
        return None  # a library's own thread, not the case's code
    if whose != "case" and in_model_call():
        return None  # the model call's own work (a client asking `uname`, its connection)
    return origin, None if whose == "library" else origin


def _written(scope: RunScope, detail: str) -> bool:
    """Whether the run noted a write of the file `detail` names already.

    ``shutil.copy`` writes a file, then sets its mode: one line says it.
    """
    path = detail.rsplit(" (", 1)[0]
    return any(seen.kind == "file" and seen.detail.split(" (")[0] == path for seen in scope.events)


def _keep_handle(scope: RunScope, frame: FrameType) -> None:
    """Keeps the handle (a ``Popen``) of a process the run starts: it may signal it later.

    Its ``pid`` is read when a signal is sent (a fork's is set after the event).
    """
    handle = frame.f_locals.get("self")
    if handle is not None:
        try:
            scope.processes.append(weakref.ref(handle))
        except TypeError:  # not weakly referable: no signal to it goes unnoted
            return


def _origin(scope: RunScope, start: FrameType) -> tuple[str, str]:
    """The code at `start` (and its callers), and whose it is (``case``, ``user`` or ``library``).

    ``case``: the case's own code (a tool, a callback, a plugin, a toolset, or
    an import they run); ``user``: other code outside Python and its packages.
    """
    frames: list[FrameType] = []
    frame: FrameType | None = start
    while frame is not None and frame.f_code is not scope.boundary:  # the caller's is not
        frames.append(frame)
        frame = frame.f_back
    label = next((found for f in frames if (found := scope.labels.get(_key(f))) is not None), None)
    module = None
    for inner, outer in itertools.pairwise(frames):  # a module's code run by import
        if inner.f_code.co_name == "<module>" and outer.f_code.co_filename.startswith(
            "<frozen importlib"
        ):
            module = inner.f_code.co_filename
            break
    if module is not None:
        return f"the import of {module}" + (f" in {label}" if label else ""), (
            "case" if label else "user"
        )
    if label is not None:
        return label, "case"
    owner = _owner(scope, frames)
    if owner is not None:
        return owner, "case"
    user = next((f for f in frames if not _is_library(f.f_code.co_filename)), None)
    if user is not None:
        return f"code at {user.f_code.co_filename}:{user.f_lineno}", "user"
    return _LIBRARY, "library"


def _owner(scope: RunScope, frames: list[FrameType]) -> str | None:
    """ADK's own tool, toolset or plugin of the case whose object a frame holds.

    ``self`` first, then the other locals (a toolset's server parameters, held by
    the client code that starts its process).
    """
    for frame in frames:
        names = frame.f_locals
        for value in (names.get("self"), *names.values()):
            owner = scope.objects.get(id(value))
            if owner is not None:
                return owner
    return None


def _key(frame: FrameType) -> tuple[str, int]:
    return frame.f_code.co_filename, frame.f_code.co_firstlineno


def _is_library(filename: str) -> bool:
    return filename.startswith(("<", _HARNESS, *_LIBRARIES))
