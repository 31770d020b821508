"""What an audited event does outside the run: its kind and detail, or nothing to note.

The channels, by audit event:

* **process** started: ``subprocess.Popen``, ``os.system``, ``os.posix_spawn``,
  ``os.fork``, ``os.forkpty``, ``os.exec``;
* **signal** sent (``os.kill``, ``os.killpg``) to a process the run did not start:
  the run may signal its own subprocesses (through the handles it holds);
* **network**: a connection or a datagram (``socket.connect``, ``sendto``,
  ``sendmsg``) to an address that is not loopback, or to any Unix socket (a
  Docker or database socket is a way out of the run too);
* **bind**: a socket bound to an address that is not loopback (other machines can
  reach what listens there; a Unix socket's bind makes a file, noted as one);
* **dns**: a name lookup of a host that is not loopback, ``*.localhost`` included
  (see `_loopback.is_loopback`), and a reverse lookup of any address that is not loopback;
* **file** written: opened for writing, truncated, renamed, removed, a directory
  made or removed, a link made, its mode, owner or attributes changed, and an
  SQLite database opened (SQLite's C code writes it: ``sqlite3.connect`` is the
  only event).

Python's bytecode cache and ``/dev/null`` are not noted.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._loopback import is_loopback

__all__ = ["METADATA", "NETWORK", "PROCESS", "WATCHED", "describe"]

PROCESS = frozenset(
    {"subprocess.Popen", "os.system", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec"}
)
SIGNALS = frozenset({"os.kill", "os.killpg"})
NETWORK = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind"})
DNS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"})
_FILES: dict[str, tuple[int, str]] = {
    "open": (0, ""),
    "os.truncate": (0, ""),
    "os.rename": (1, "renamed to"),
    "os.remove": (0, "removed"),
    "shutil.rmtree": (0, "removed"),
    "os.rmdir": (0, "removed"),
    "os.mkdir": (0, "directory made"),
    "os.symlink": (1, "symbolic link to"),
    "os.link": (1, "hard link to"),
    "os.chmod": (0, "mode changed"),
    "os.chown": (0, "owner changed"),
    "os.setxattr": (0, "attributes changed"),
    "os.removexattr": (0, "attributes changed"),
    "os.chflags": (0, "flags changed"),
    "sqlite3.connect": (0, "SQLite database"),
}
"""A file event: which argument is the path, and what was done to it."""
METADATA = frozenset({"os.chmod", "os.chown", "os.setxattr", "os.removexattr", "os.chflags"})
"""File events that only change what a file says about itself (``shutil.copy`` does one
on the file it has just written)."""
WATCHED = PROCESS | SIGNALS | NETWORK | DNS | frozenset(_FILES)

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_INTERNET = (socket.AF_INET, socket.AF_INET6)
_UNIX = getattr(socket, "AF_UNIX", None)


def describe(
    event: str, args: tuple[Any, ...], started: Callable[[int], bool]
) -> tuple[str, str] | None:
    """What `event` does, if it reaches outside (None: nothing to note).

    Args:
        event: A watched audit event.
        args: Its arguments.
        started: Whether a pid is a process the run started (it may signal those).
    """
    if event in PROCESS:
        return "process", _command(event, args)
    if event in SIGNALS:
        target = _signalled(event, args, started)
        return None if target is None else ("signal", target)
    if event in NETWORK:
        return _socket(event, args)
    if event in DNS:
        host = os.fsdecode(args[0]) if isinstance(args[0], bytes) else str(args[0])
        if is_loopback(host) or (event != "socket.gethostbyaddr" and _is_address(host)):
            return None  # a numeric host is not looked up; a reverse lookup asks a name server
        return "dns", host
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


def _signalled(event: str, args: tuple[Any, ...], started: Callable[[int], bool]) -> str | None:
    """``SIGTERM to process 12`` (None: a process, or the group of one, the run started)."""
    target, number = args[0], args[1]
    if not isinstance(target, int):
        return None
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"  # 0 only asks whether the process is there
    if event == "os.kill" and target > 0:
        if started(target):
            return None
        whose = " (the eval's own)" if target == os.getpid() else ""
        return f"{name} to process {target}{whose}"
    if event == "os.kill" and target == -1:
        return f"{name} to every process it may signal"
    group = target if event == "os.killpg" else -target
    if group == 0:
        return f"{name} to the eval's own process group"
    if started(group):  # a subprocess of the run that leads a group of its own
        return None
    return f"{name} to process group {group}"


def _socket(event: str, args: tuple[Any, ...]) -> tuple[str, str] | None:
    family = getattr(args[0], "family", None)
    address = args[1] if len(args) > 1 else None
    if _UNIX is not None and family == _UNIX:
        if not isinstance(address, str | bytes) or not address:
            return None  # a message on a connected socket: its connection was seen
        text = os.fsdecode(address)
        abstract = text.startswith("\0")  # Linux's abstract names: no file
        where = "@" + text[1:] if abstract else os.path.abspath(text)
        if event != "socket.bind":
            return "network", f"the Unix socket {where}"
        return None if abstract else ("file", f"{where} (Unix socket made)")
    if family not in _INTERNET or not isinstance(address, tuple) or not address:
        return None  # netlink and other families stay on the machine
    host = str(address[0])
    if is_loopback(host):
        return None
    where = f"{host}:{address[1]}" if len(address) > 1 else host
    if event == "socket.bind":
        return "bind", where if host else f"every address, port {address[1]}"
    return "network", where


def _file(event: str, args: tuple[Any, ...]) -> tuple[str, str] | None:
    index, verb = _FILES[event]
    path = args[index] if len(args) > index else None
    if event == "open":
        flags = args[2] if len(args) > 2 else 0
        if not isinstance(flags, int) or not flags & _WRITE_FLAGS:
            return None
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str | bytes):
        return None  # an open file descriptor: its opening was seen
    text = os.fsdecode(path)
    if event == "sqlite3.connect":
        database = _database(text)
        if database is None:
            return None
        text = database
    if "__pycache__" in text or text in ("/dev/null", os.devnull):
        return None  # Python's bytecode cache
    resolved = str(Path(text).resolve()) if not os.path.isabs(text) else text
    if event in ("os.symlink", "os.link"):
        source = os.fsdecode(args[0]) if isinstance(args[0], str | bytes) else str(args[0])
        return "file", f"{resolved} ({verb} {source})"
    return "file", f"{resolved} ({verb})" if verb else resolved


def _database(name: str) -> str | None:
    """The file an ``sqlite3.connect`` may write (None: in memory, or read-only)."""
    if name.startswith("file:"):  # a URI (with ``uri=True``; the event does not tell)
        name, _, query = name[len("file:") :].partition("?")
        if "mode=ro" in query or "mode=memory" in query:
            return None
    return None if name in ("", ":memory:") else name


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True
