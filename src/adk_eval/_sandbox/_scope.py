"""Which eval run the current code belongs to, and what its sandbox saw.

`run_eval` enters a `RunScope` for the whole run (the conversation and the
metrics). It lives in a context variable, so every task and thread that copies
the context (ADK's tool threads, `asyncio.to_thread`, anyio's workers, the
default executor `RunScope.enter` gives the loop) knows its run, and concurrent
runs of one process never mix. A thread that starts with a context of its own
(``threading.Thread``, a pool's worker) belongs to the run whose code started it
(`adopt_thread`, `active_scope`). Code inside a model call (the agent's, a user
agent's, a judge's, a summarizer's) is marked with `model_traffic`: its
connections are the run's model traffic, which the sandbox lets through.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

__all__ = [
    "CURRENT",
    "SANDBOX_MODES",
    "TELEMETRY_MODES",
    "Belonging",
    "RunScope",
    "SandboxEvent",
    "SandboxMode",
    "TelemetryMode",
    "active_scope",
    "adopt_thread",
    "in_model_call",
    "model_traffic",
    "runs_going",
    "set_model_call",
    "thread_owner",
]

SandboxMode = Literal["warn", "strict", "off"]
"""``warn``: what the run did outside is listed in its result; ``strict``: the first such
thing is refused and stops the run; ``off``: nothing is watched."""

SANDBOX_MODES: tuple[SandboxMode, ...] = ("warn", "strict", "off")

TelemetryMode = Literal["off", "keep"]
"""``off``: the user's exporters and litellm callbacks get nothing of the run; ``keep``:
they get it, tagged with the run and the case."""

TELEMETRY_MODES: tuple[TelemetryMode, ...] = ("off", "keep")


@dataclass(frozen=True)
class SandboxEvent:
    """One thing a run did outside its mocks and its model calls.

    Attributes:
        kind: ``process``, ``signal``, ``network``, ``bind``, ``dns`` or ``file``.
        detail: What exactly (``npx -y server``, ``203.0.113.5:443``, a path).
        origin: The code it came from (a tool, a callback, a plugin, an import).
        refused: Whether strict mode refused it before it happened.
    """

    kind: str
    detail: str
    origin: str
    refused: bool = False

    def line(self) -> str:
        """``sandbox: process `true` started, by callback ...`` (and `` (refused ...)``)."""
        what = {
            "process": f"process {self.detail} started",
            "signal": f"signal sent: {self.detail}",
            "network": f"connection to {self.detail}",
            "bind": f"socket bound to {self.detail}, open to other machines",
            "dns": f"name lookup of {self.detail}",
            "file": f"file written: {self.detail}",
        }.get(self.kind, f"{self.kind} {self.detail}")
        refused = " (refused: strict sandbox)" if self.refused else ""
        return f"sandbox: {what}, by {self.origin}{refused}"


@dataclass(eq=False)
class RunScope:
    """One run, as the sandbox and the telemetry guard see it.

    Attributes:
        case: The case's name.
        sandbox: What the audit hook does with what it sees.
        telemetry: Whether the user's exporters get the run's traffic.
        labels: The user's code of the case, ``(file, first line) -> label``.
        objects: The case's tools, toolsets and plugins, ``id -> label``.
        run_id: A fresh id, tagged on kept telemetry.
    """

    case: str
    sandbox: SandboxMode = "warn"
    telemetry: TelemetryMode = "off"
    labels: Mapping[tuple[str, int], str] = field(default_factory=dict)
    objects: Mapping[int, str] = field(default_factory=dict)
    """The case's tools, toolsets and plugins by id (``self`` on the stack names them)."""
    boundary: Any = None
    """The code object of the function the run is in (frames outside it are its caller's)."""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    events: list[SandboxEvent] = field(default_factory=list)
    violation: SandboxEvent | None = None
    _stop: list[Callable[[], None]] = field(default_factory=list, repr=False)
    loop: asyncio.AbstractEventLoop | None = None
    processes: list[weakref.ref[Any]] = field(default_factory=list)
    """Handles of the processes the run started (a ``Popen``): it may signal those."""

    def note(self, event: SandboxEvent) -> None:
        """Keeps `event` (once per kind, detail and origin); a refusal stops the run."""
        if event not in self.events:
            self.events.append(event)
        if event.refused and self.violation is None:
            self.violation = event
            loop = self.loop
            if loop is not None and not loop.is_closed():
                for stop in self._stop:
                    loop.call_soon_threadsafe(stop)

    def stop_with(self, stop: Callable[[], None]) -> None:
        """Calls `stop` (on the run's event loop) once something is refused: it ends the run."""
        self._stop.append(stop)

    def started(self, pid: int) -> bool:
        """Whether `pid` is a process the run started (read off the handles it still holds)."""
        return any(getattr(handle(), "pid", None) == pid for handle in self.processes)

    def warnings(self) -> tuple[str, ...]:
        """One line per thing seen (what a result lists)."""
        return tuple(event.line() for event in self.events)

    @contextmanager
    def enter(self) -> Iterator[RunScope]:
        """Makes this the current run for the code the caller runs (and what it starts)."""
        self.loop = _running_loop()
        if self.loop is not None:
            _copy_context_in_executor(self.loop)
        token = CURRENT.set(self)
        with _LOCK:
            _ACTIVE.add(self)
        try:
            yield self
        finally:
            CURRENT.reset(token)
            with _LOCK:
                _ACTIVE.discard(self)


CURRENT: contextvars.ContextVar[RunScope | None] = contextvars.ContextVar(
    "adk_eval_run_scope", default=None
)
_IN_MODEL_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "adk_eval_in_model_call", default=False
)
_ACTIVE: set[RunScope] = set()
_THREADS: weakref.WeakKeyDictionary[threading.Thread, tuple[RunScope, str]] = (
    weakref.WeakKeyDictionary()
)
"""Threads started by a run's code, with the run and the code that started them."""
_LOCK = threading.RLock()  # the hook may run inside (a `__del__` a collection calls)


class Belonging(NamedTuple):
    """The run the current code belongs to, and how that is known."""

    scope: RunScope | None
    guessed: bool = False
    """No context and no starter tell: the run is the only one going."""
    starter: str | None = None
    """The code of the run that started this thread (``tool `x` of agent `y```)."""


def active_scope() -> Belonging:
    """The run of the current code: its context's, else its thread's, else a guess.

    A thread with a context of its own belongs to the run whose code started it,
    while that run goes on (`adopt_thread`). Any other thread that lost the
    context is guessed to be the only run's (None if several are going).
    """
    scope = CURRENT.get()
    if scope is not None:
        return Belonging(scope)
    if not _ACTIVE:
        return Belonging(None, guessed=True)
    thread = threading.current_thread()
    with _LOCK:
        owner = _THREADS.get(thread) if _THREADS else None
        if owner is not None and owner[0] in _ACTIVE:
            return Belonging(owner[0], starter=owner[1])
        return Belonging(next(iter(_ACTIVE)) if len(_ACTIVE) == 1 else None, guessed=True)


def adopt_thread(thread: threading.Thread, scope: RunScope, starter: str) -> None:
    """Makes `thread` (about to start) belong to `scope`'s run, as started by `starter`."""
    with _LOCK:
        _THREADS[thread] = (scope, starter)


def thread_owner(thread: threading.Thread) -> tuple[RunScope, str] | None:
    """The run `thread` belongs to and the code that started it (None: no run's)."""
    with _LOCK:
        return _THREADS.get(thread)


def runs_going() -> bool:
    """Whether any run is going in this process."""
    return bool(_ACTIVE)


def in_model_call() -> bool:
    """Whether the current code is part of a model call (its connections are model traffic)."""
    return _IN_MODEL_CALL.get()


@contextmanager
def model_traffic() -> Iterator[None]:
    """Marks the code inside as a model call's (a judge's, a summarizer's)."""
    token = _IN_MODEL_CALL.set(True)
    try:
        yield
    finally:
        _IN_MODEL_CALL.reset(token)


def set_model_call(inside: bool) -> None:
    """Marks (or unmarks) the rest of the current context as inside a model call.

    For ADK's model callbacks, which bracket a call without a block to wrap.
    """
    _IN_MODEL_CALL.set(inside)


class _ContextExecutor(ThreadPoolExecutor):
    """The loop's default executor, running each job in the context of who submitted it.

    asyncio's own (``loop.getaddrinfo``, ``run_in_executor``) does not copy the
    context, so a name lookup would lose its run; this one does.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        context = contextvars.copy_context()
        return super().submit(context.run, fn, *args, **kwargs)


def _copy_context_in_executor(loop: asyncio.AbstractEventLoop) -> None:
    """Gives `loop` a context-copying default executor, if it has none of its own yet."""
    if getattr(loop, "_default_executor", "unknown") is None:
        loop.set_default_executor(_ContextExecutor(thread_name_prefix="adk_eval"))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
