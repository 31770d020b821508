"""Importing cheaply: public packages whose names load on first use, and loading without GC.

`lazy_names`: a public package's names are imported on first use (PEP 562).
`is_loaded_instance`: an ``isinstance`` test that does not import the class's
module (no instance of a class can exist before its module is imported).
`imports_without_collections`: what loads ADK and the eval files (the CLI's
``run``, a worker process) does it with the garbage collector off, and freezes
what it made.

``import adk_eval``, the pytest plugin and ``adk-eval --help`` must stay cheap, so
a public package lists each of its names once, with the private module that
defines it (``_EXPORTS``, in the order docs/api.md documents them), and
`lazy_names` turns that table into the package's ``__all__`` (the table's names,
in its order), ``__getattr__`` and ``__dir__``. Static type checkers and the import-layer
contract cannot run that code: they read the package's ``if TYPE_CHECKING:``
imports, which import each name as itself (``from ._case import EvalCase as
EvalCase``) so that strict checkers see it re-exported although ``__all__`` is
computed. A test (tests/test_exported_members.py) holds those imports to the table.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

__all__ = ["imports_without_collections", "is_loaded_instance", "lazy_names"]


def lazy_names(
    package: str, exports: Mapping[str, str], *, extra: Iterable[str] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for `package`, whose names come from `exports`.

    Args:
        package: The package's ``__name__``.
        exports: Each public name -> the module defining it, relative to `package` as
            a ``from`` import writes it (``._case``; ``.._errors`` for a parent's).
        extra: Names the package defines itself, listed by ``dir()`` too.
    """

    def __getattr__(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_name, package), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted([*exports, *extra])

    return list(exports), __getattr__, __dir__


def is_loaded_instance(value: object, module: str, name: str) -> bool:
    """Whether `value` is an instance of class `name` of `module`, without importing `module`.

    A module not imported yet has made no instance: False, at the cost of a dict
    lookup, where an ``isinstance`` test would import the module (and what it
    imports) for a class the process never uses.
    """
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))


@contextlib.contextmanager
def imports_without_collections() -> Iterator[None]:
    """No garbage collection while modules load; what they made is then left out of later ones.

    Importing ADK and the eval files makes hundreds of thousands of objects that
    live as long as the process; the collector would walk them all, repeatedly,
    while they load and then at every full collection of the runs. Frozen
    (`gc.freeze`), they are never walked again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
