"""The audit hook: what a run does outside its mocks and model calls, and whose code did it.

One hook per process (PEP 578 hooks cannot be removed), installed at the first
watched run. While no run is watched it returns at once. For the code of a run
(see `_scope`), it notes:

* a process started (``subprocess``, ``os.system``, ``os.posix_spawn``, fork, exec);
* a connection to, or a datagram sent to, an address that is not loopback;
* a name lookup of a host that is not loopback;
* a file opened for writing, renamed, removed or truncated, wherever it is:
  every write of the case's code is noted (a run has no folder of its own to
  exempt: its sessions, artifacts and memory are in memory), Python's bytecode
  cache and ``/dev/null`` aside;

with the code it came from: the case's tool, callback, plugin or toolset whose
code is on the stack, else an import in progress, else the first frame outside
Python and its packages. The run's model calls (the agent's, the user agents',
a judge's, a summarizer's) make the connections they must; those are not noted.
In strict mode the hook refuses the first thing it notes before it happens: it
raises `EvalSandboxError` at the call (a `RuntimeError`, which clients pass on
rather than retry) and stops the run, so code that swallows the error still
ends the run.

What it cannot see: native code making its own system calls (gRPC's core, Ray's
workers, libcurl, a database driver's file I/O), calls through ctypes, what a
child process does, a multiprocessing ``spawn`` start, and reads and writes on
descriptors opened before.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import sys
import sysconfig
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from .._errors import EvalSandboxError
from .._quiet import quiet
from ._scope import RunScope, SandboxEvent, active_scope, in_model_call

__all__ = ["install", "installed"]

_PROCESS = frozenset(
    {"subprocess.Popen", "os.system", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec"}
)
_NETWORK = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
_DNS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"})
_FILES = frozenset({"open", "os.rename", "os.remove", "os.truncate", "shutil.rmtree"})
_WATCHED = _PROCESS | _NETWORK | _DNS | _FILES
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
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
    """Adds the hook to this process, once."""
    global _installed
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


def installed() -> bool:
    """Whether this process has the hook."""
    return _installed


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event not in _WATCHED or getattr(_state, "busy", False):
        return
    refusal: EvalSandboxError | None = None
    _state.busy = True  # what the hook itself does is audited too
    try:
        scope, guessed = active_scope()
        if scope is None or scope.sandbox == "off":
            return
        seen = _describe(event, args)
        if seen is None:
            return
        kind, detail = seen
        origin, whose = _origin(scope)
        if guessed and whose == "library":
            return  # a library's own thread, not the case's code
        if whose != "case" and in_model_call():
            return  # the model call's own work (a client asking `uname`, its connection)
        noted = SandboxEvent(kind, detail, origin, refused=scope.sandbox == "strict")
        scope.note(noted)
        if noted.refused:
            refusal = EvalSandboxError(noted.line())
            quiet(refusal)  # the result reports it: ADK need not log its traceback too
    finally:
        _state.busy = False
    if refusal is not None:
        if event in _NETWORK and hasattr(args[0], "close"):
            args[0].close()  # refused for good: the caller's code may not close it on our error
        raise refusal


def _describe(event: str, args: tuple[Any, ...]) -> tuple[str, str] | None:
    """What `event` does, if it reaches outside (None: nothing to note)."""
    if event in _PROCESS:
        return "process", _command(event, args)
    if event in _NETWORK:
        address = args[1] if len(args) > 1 else None
        if not isinstance(address, tuple) or not address or _is_local(str(address[0])):
            return None  # a Unix socket, netlink, or loopback
        return "network", f"{address[0]}:{address[1]}" if len(address) > 1 else str(address[0])
    if event in _DNS:
        host = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
        return None if _is_local(host) or _is_address(host) else ("dns", host)
    return _file(event, args)


def _command(event: str, args: tuple[Any, ...]) -> str:
    if event == "subprocess.Popen" or event == "os.posix_spawn":
        argv = args[1] if len(args) > 1 else args[0]
        words = [str(word) for word in argv] if isinstance(argv, list | tuple) else [str(argv)]
        return f"`{' '.join(words)}`"
    if event == "os.system":
        command = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
        return f"`{command}`"
    if event == "os.exec":
        return f"`{' '.join(str(word) for word in args[1])}`" if len(args) > 1 else "exec"
    return f"({event})"  # a fork: the child is a copy of this process


def _file(event: str, args: tuple[Any, ...]) -> tuple[str, str] | None:
    path = args[0]
    if event == "open":
        flags = args[2] if len(args) > 2 else 0
        if not isinstance(path, str | bytes) or not isinstance(flags, int):
            return None  # an open file descriptor: its opening was seen
        if not flags & _WRITE_FLAGS:
            return None
    elif event == "os.rename":
        path = args[1] if len(args) > 1 else path
    if not isinstance(path, str | bytes):
        return None
    text = os.fsdecode(path)
    if "__pycache__" in text or text in ("/dev/null", os.devnull):
        return None  # Python's bytecode cache
    verb = {"os.rename": "renamed to", "os.remove": "removed", "shutil.rmtree": "removed"}
    resolved = str(Path(text).resolve()) if not os.path.isabs(text) else text
    return "file", f"{resolved} ({verb[event]})" if event in verb else resolved


def _is_local(host: str) -> bool:
    if host in ("localhost", "ip6-localhost", "ip6-loopback") or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True


def _origin(scope: RunScope) -> tuple[str, str]:
    """The code the event came from, and whose it is (``case``, ``user`` or ``library``).

    ``case``: the case's own code (a tool, a callback, a plugin, a toolset, or
    an import they run); ``user``: other code outside Python and its packages.
    """
    frames: list[FrameType] = []
    frame: FrameType | None = sys._getframe(2)
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
