"""What `Ray` ships to a cluster, worked out (and shown) before anything is shipped.

By default Ray's ``runtime_env`` gets ``py_modules``: the project's top-level
packages and modules that the suite imported (each loaded module under the
project's root, or under the root of a case's module, that is not installed in a
virtual environment or site-packages and is not adk-eval), and always those that
bind the cases. Installed packages are never shipped: the cluster must have them.
``Ray(working_dir=...)`` ships one chosen folder instead.

Every package goes out with `EXCLUDES` (caches, ``.git``, virtual environments,
and the secrets and databases of `NEVER_SHIPPED`) and the user's own excludes.
Ray honours the ``.gitignore`` and ``.rayignore`` inside each folder it zips;
those of the folders above a package, up to the project's root, are turned into
excludes here, since Ray never reads them. The files are listed with Ray's own
traversal (`_traversal`), so `ShippingPlan` is both the preview and the
``runtime_env``: one plan says what goes, and Ray ships exactly that.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from ..._errors import EvalSetupError
from .._discovery import project_root
from ._traversal import FALLBACK_LIMIT, Walker

__all__ = [
    "ALWAYS_EXCLUDED",
    "EXCLUDES",
    "FORWARDED_ENV_PREFIXES",
    "HELD_BACK_ENV_WORDS",
    "NEVER_SHIPPED",
    "Package",
    "ShippingPlan",
    "forwarded_env",
    "plan_shipping",
    "project_packages",
]

FORWARDED_ENV_PREFIXES = (
    "ADK_EVAL_",
    "LITELLM_",
    "GOOGLE_",
    "GEMINI_",
    "OPENAI_",
    "ANTHROPIC_",
    "VERTEXAI_",
)
"""Environment variables with these prefixes reach the Ray workers (see `HELD_BACK_ENV_WORDS`)."""

HELD_BACK_ENV_WORDS = ("PASSWORD", "SECRET", "TOKEN")
"""A variable whose name holds one of these is never forwarded, whatever its prefix."""

ALWAYS_EXCLUDED = ("__pycache__", "*.pyc", ".git", ".venv", "venv")
"""Left out of every package without a word: caches, version control, virtual environments."""

NEVER_SHIPPED: Mapping[str, str] = {
    ".env": "secrets",
    ".env.*": "secrets",
    "*.pem": "secrets",
    "*.key": "secrets",
    "id_rsa*": "secrets",
    "*.sqlite": "databases",
    "*.sqlite3": "databases",
    "*.db": "databases",
    ".adk_eval/": "adk-eval's runs database",
    ".adk/": "ADK's local state",
}
"""Patterns (``.gitignore`` style) never shipped; what they leave out is named, with why."""

EXCLUDES = (*ALWAYS_EXCLUDED, *NEVER_SHIPPED)
"""Ray's ``runtime_env["excludes"]``, before the user's own and the project's ignore files."""

_NAMED_AT_MOST = 10
"""Left-out paths named in the preview (the rest are counted)."""

_INSTALLED = {
    Path(sysconfig.get_paths()[name]).resolve()
    for name in ("stdlib", "platstdlib", "purelib", "platlib")
} | {Path(__file__).resolve().parents[2]}  # adk_eval/ (this is adk_eval/_suites/_ray/...)
"""Python's standard library, its installed packages and adk-eval: never the project's code."""

_INSTALLED_MODULES: set[tuple[str, tuple[str, ...]]] = set()
"""Modules (name, places) whose files and tops are installed code: never shipped, skipped after.

Most of ``sys.modules`` is installed packages, and resolving each one's top folder
is what a plan costs; where installed code lives does not change in a process.
A module is known by its places as well as its name, so one of the project's
(new, or reloaded from elsewhere) is always looked at.
"""


@dataclass(frozen=True)
class Package:
    """One folder or ``.py`` file as Ray zips it.

    Attributes:
        path: The folder or file.
        label: How it is shown (``shop/``, ``helpers.py``).
        files: Each file's name in Ray's zip, and its size in bytes.
        left_out: What of it is left out and named: its name as in the zip, and why.
    """

    path: Path
    label: str
    files: tuple[tuple[str, int], ...]
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def size(self) -> int:
        """The total size of its files, in bytes."""
        return sum(size for _, size in self.files)


@dataclass(frozen=True)
class ShippingPlan:
    """What `Ray` ships: one plan is both the preview and the ``runtime_env``.

    Attributes:
        kind: ``py_modules`` (the default), ``working_dir``, or ``nothing``.
        packages: What is zipped and shipped.
        excludes: Ray's ``runtime_env["excludes"]``.
        env_vars: The environment variables forwarded to the workers.
        held_back: Names with a forwarded prefix that are not forwarded (`HELD_BACK_ENV_WORDS`).
        limit: Ray's upload limit, in bytes.
        exact: Whether Ray's own traversal listed the files (else a close copy did).
    """

    kind: Literal["py_modules", "working_dir", "nothing"]
    packages: tuple[Package, ...]
    excludes: tuple[str, ...]
    env_vars: Mapping[str, str] = field(default_factory=dict)
    held_back: tuple[str, ...] = ()
    limit: int = FALLBACK_LIMIT
    exact: bool = True

    @property
    def size(self) -> int:
        """The total size of the shipped files (before compression), in bytes."""
        return sum(package.size for package in self.packages)

    def runtime_env(self) -> dict[str, Any]:
        """Ray's ``runtime_env`` for this plan."""
        env: dict[str, Any] = {"env_vars": dict(self.env_vars), "excludes": list(self.excludes)}
        if self.kind == "working_dir":
            env["working_dir"] = str(self.packages[0].path)
        elif self.kind == "py_modules" and self.packages:
            env["py_modules"] = [str(package.path) for package in self.packages]
        return env

    def check_size(self) -> None:
        """Refuses a plan Ray would refuse to upload.

        Raises:
            EvalSetupError: Naming the size, the limit and the ways to ship less.
        """
        if self.size < self.limit:
            return
        raise EvalSetupError(
            f"ray would ship {_size(self.size)} (largest: {self._largest()}), and Ray uploads "
            f"less than {_size(self.limit)}: leave files out with Ray(excludes=[...]) or a "
            ".rayignore in the shipped folder, or ship a smaller module (move data out of the "
            "shipped packages, or choose the folder with Ray(working_dir=...))"
        )

    def lines(self, address: str | None) -> list[str]:
        """What is shipped, as lines for the user: the code, the env vars, what must be there."""
        where = address or "a new local Ray"
        lines = [self._code_line(where)]
        if self.env_vars or self.held_back:
            line = "ray forwards env vars " + (", ".join(sorted(self.env_vars)) or "none")
            if self.held_back:
                words = ", ".join(HELD_BACK_ENV_WORDS[:-1]) + f" or {HELD_BACK_ENV_WORDS[-1]}"
                line += f"; held back: {', '.join(self.held_back)} (names with {words})"
            lines.append(line)
        lines.append("ray ships no installed package: the cluster must have them installed")
        if self.size >= self.limit:
            lines.append(
                f"ray refuses to ship {_size(self.size)}: its limit is {_size(self.limit)}"
            )
        return lines

    def _code_line(self, where: str) -> str:
        if not self.packages:
            return f"ray ships no code to {where}: the eval modules must be importable there"
        shipped = ", ".join(
            f"{p.label} ({_count(len(p.files))}, {_size(p.size)})" for p in self.packages
        )
        line = f"ray ships {self.kind} {shipped} to {where}"
        if self.size:
            line += f"; largest: {self._largest()}"
        left = [f"{name} ({why})" for p in self.packages for name, why in p.left_out]
        if left:
            line += "; left out: " + ", ".join(left[:_NAMED_AT_MOST])
            if len(left) > _NAMED_AT_MOST:
                line += f" and {len(left) - _NAMED_AT_MOST} more"
        return line

    def _largest(self) -> str:
        files = [item for package in self.packages for item in package.files]
        name, size = min(files, key=lambda item: (-item[1], item[0]), default=("none", 0))
        return f"{name} ({_size(size)})"


def forwarded_env(environ: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The variables of `environ` forwarded to Ray's workers, and the names held back."""
    chosen = {k: v for k, v in environ.items() if k.startswith(FORWARDED_ENV_PREFIXES)}
    held = tuple(sorted(k for k in chosen if any(w in k.upper() for w in HELD_BACK_ENV_WORDS)))
    return {k: v for k, v in chosen.items() if k not in held}, held


def plan_shipping(
    case_modules: Sequence[str],
    *,
    working_dir: Path | None = None,
    ship_modules: bool = True,
    excludes: Sequence[str] = (),
) -> ShippingPlan:
    """What `Ray` ships for a suite whose cases `case_modules` bind (see the module doc)."""
    walker = Walker.make()
    env, held = forwarded_env(os.environ)
    base = (*EXCLUDES, *excludes)
    common: dict[str, Any] = {"env_vars": env, "held_back": held, "limit": walker.limit}
    common["exact"] = walker.ray is not None
    if working_dir is not None:
        top = working_dir.resolve()
        root = project_root(top)
        base = (*base, *walker.ignored_above(top, root, base))
        package = _package(walker, top, root, (*walker.defaults, *base), "")
        return ShippingPlan("working_dir", (package,), base, **common)
    if not ship_modules:
        return ShippingPlan("nothing", (), base, **common)
    found = project_packages(case_modules)
    anchored = [pattern for top, root in found for pattern in walker.ignored_above(top, root, base)]
    base = (*base, *dict.fromkeys(anchored))
    packages = tuple(
        _package(walker, top, root, base, f"{top.name}/" if top.is_dir() else "")
        for top, root in found
    )
    return ShippingPlan("py_modules", packages, base, **common)


def project_packages(case_modules: Sequence[str]) -> list[tuple[Path, Path]]:
    """The project's top-level folders and ``.py`` files the suite loaded, each with its root."""
    roots = {project_root()}
    for name in case_modules:
        file = _namespace(sys.modules.get(name)).get("__file__")
        if isinstance(file, str):
            roots.add(project_root(Path(file).resolve().parent))
    case_tops = {name.split(".")[0] for name in case_modules}
    found: dict[Path, Path] = {}
    for name, module in list(sys.modules.items()):
        known = (name, _places(module))
        if known in _INSTALLED_MODULES:
            continue
        places = [Path(place).resolve() for place in known[1]]
        tops = _tops(name, places)
        if places and all(_installed(path) for path in [*places, *tops]):
            if all(os.path.isabs(place) for place in known[1]):  # not relative to the cwd
                _INSTALLED_MODULES.add(known)
            continue
        for top in tops:
            under = [root for root in roots if top.is_relative_to(root) and top != root]
            if (under or name.split(".")[0] in case_tops) and not _installed(top):
                found.setdefault(top, max(under, key=lambda r: len(r.parts), default=top.parent))
    return sorted(found.items())


def _namespace(module: ModuleType | None) -> dict[str, Any]:
    """A module's namespace, read without its ``__getattr__`` (which may import things)."""
    try:
        return dict(vars(module)) if module is not None else {}
    except TypeError:
        return {}


def _places(module: ModuleType | None) -> tuple[str, ...]:
    """A module's folders (a package's ``__path__``) or its ``.py`` file, as written."""
    namespace = _namespace(module)
    paths, file = namespace.get("__path__"), namespace.get("__file__")
    if paths is not None:
        with contextlib.suppress(TypeError):  # a `__path__` that is not a list of folders
            return tuple(str(place) for place in list(paths))
        return ()
    if isinstance(file, str) and file.endswith(".py"):
        return (file,)
    return ()


def _tops(name: str, places: Sequence[Path]) -> list[Path]:
    """Where the top-level package (or module) of module `name` lives, as Ray would ship it.

    Args:
        name: The module's name.
        places: Its folders or file (`_places`), resolved.
    """
    tops = []
    for top in places:
        for _ in range(name.count(".")):
            top = top.parent
        if (top.name if top.is_dir() else top.stem) == name.split(".")[0] and top.exists():
            tops.append(top)
    return tops


def _installed(path: Path) -> bool:
    """Whether `path` is installed code: Python's own, a virtual environment's, or adk-eval."""
    if {"site-packages", "dist-packages"} & set(path.parts):
        return True
    if any(path.is_relative_to(place) for place in _INSTALLED):
        return True
    return any((folder / "pyvenv.cfg").is_file() for folder in path.parents)


def _package(
    walker: Walker, top: Path, root: Path, patterns: Sequence[str], prefix: str
) -> Package:
    """`top` zipped with `prefix` before its files' names, and what of it is named, with why.

    A never-shipped path is named alone; the rest (left out by an ignore file or the
    user's excludes) by its highest folder that ships nothing; caches and the like not.
    """
    walk = walker.walk(top, patterns)
    files = tuple(
        (prefix + (p.relative_to(top).as_posix() if p != top else p.name), p.stat().st_size)
        for p in walk.kept
    )
    quiet = walker.matcher(top, [*ALWAYS_EXCLUDED, *walker.defaults])
    never = [
        (walker.matcher(top, [p]), f"never shipped: {why}") for p, why in NEVER_SHIPPED.items()
    ]
    named: dict[Path, str] = {}
    others: dict[Path, str] = {}
    for path in walk.skipped():
        why = next((why for match, why in never if match(path)), None)
        if why is not None:
            named[path] = why
        elif not quiet(path):
            others[path] = walker.ignored_by(path, root) or "excluded"
    named.update(walk.collapse(others))
    left = sorted(
        (prefix + p.relative_to(top).as_posix() + "/" * p.is_dir(), why) for p, why in named.items()
    )
    label = prefix or (top.name if top.is_file() else "./" if top == Path.cwd() else f"{top}/")
    return Package(top, label, files, tuple(left))


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024**2:
        return f"{max(1, round(count / 1024))} KiB"
    if count < 1024**3:
        return f"{count / 1024**2:.1f} MiB"
    return f"{count / 1024**3:.1f} GiB"


def _count(files: int) -> str:
    return f"{files} file" + ("" if files == 1 else "s")
