"""Public packages whose names are imported on first use (PEP 562).

``import adk_eval``, the pytest plugin and ``adk-eval --help`` must stay cheap, so
a public package lists each of its names with the private module that defines it,
and `lazy_names` turns that table into the package's ``__getattr__`` and
``__dir__``. Static type checkers and the import-layer contract read the same
names from the package's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, exports: Mapping[str, str], *, extra: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for `package`, whose names come from `exports`.

    Args:
        package: The package's ``__name__``.
        exports: Each public name -> the module (relative to `package`) defining it.
        extra: Names the package defines itself, listed by ``dir()`` too.
    """

    def __getattr__(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module_name}", package), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted([*exports, *extra])

    return __getattr__, __dir__
