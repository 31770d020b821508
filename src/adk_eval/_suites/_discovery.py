"""Finding `EvalCase`s in Python files, folders and modules (what `adk-eval` runs).

The rule:

* a ``.py`` file is imported;
* a folder is searched recursively for ``evals.py``, ``eval_*.py``,
  ``*_eval.py`` and ``*_evals.py`` (hidden folders, ``__pycache__`` and virtual
  environments are skipped);
* anything else is taken as a dotted module name (``my_agent.evals``).

In each module, every module-level name bound to an `EvalCase`, or to a list or
tuple of them (``CASES = [...]``), is collected, in definition order; names
starting with ``_`` are left out. A case bound in several modules (one eval
file imports another's) is collected once.

Imports work as under pytest: the project's root (the nearest folder, from the
working directory up, holding ``pyproject.toml``, ``setup.py``, ``setup.cfg``,
``pytest.ini`` or ``tox.ini``; else the working directory) is put first on
``sys.path``, so eval files import the project's packages. A file inside a
package (its folder has an ``__init__.py``) is imported as part of that package,
so relative imports work; a file in a plain folder under the root is imported
by its dotted path from the root (``scratch/try_it.py`` is ``scratch.try_it``),
the name another eval file's ``from scratch.try_it import CASE`` finds, so the
case is one object, run once. When that path's first name is a module or
package elsewhere on the path (an eval folder ``llm_auditor/`` beside the agent
package ``llm_auditor``), the file is imported as pytest does by default: by
its basename, its folder first on ``sys.path``.

Every problem is one `DiscoveryError` line: a path that does not exist, a file
that fails to import (with the file and line), an eval file with no cases, two
cases with one name. An eval file that changes the model of an agent object
that an earlier file's cases run (``root_agent.model = ScriptedLlm(...)`` in
two files) gets a `SharedModelWarning`: only the last model set would run.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.machinery
import importlib.util
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from google.adk.agents import LlmAgent

from .._agent_tree import walk
from .._case import EvalCase
from .._errors import DiscoveryError, SharedModelWarning

__all__ = [
    "DiscoveredCase",
    "cases_in",
    "discover",
    "filter_cases",
    "import_file",
    "import_module",
    "keyword_matches",
    "looks_like_module",
    "project_root",
    "put_project_on_path",
]

EVAL_FILE_PATTERNS = ("evals.py", "eval_*.py", "*_eval.py", "*_evals.py")
_SKIP_DIRS = {"__pycache__", "node_modules", "venv", "site-packages"}


@dataclass(frozen=True)
class DiscoveredCase:
    """A case and where it was found.

    Attributes:
        case: The case.
        source: The file (or module) that defines it.
        attribute: The module-level name it was found under.
    """

    case: EvalCase
    source: str
    attribute: str


def _is_eval_file(path: Path) -> bool:
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in EVAL_FILE_PATTERNS)


def _eval_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).parts[:-1]
        if any(part.startswith(".") or part in _SKIP_DIRS for part in relative):
            continue
        if any(
            (folder.joinpath(*relative[: i + 1]) / "pyvenv.cfg").exists()
            for i in range(len(relative))
        ):
            continue
        if _is_eval_file(path):
            found.append(path)
    return found


def _user_location(error: BaseException, path: Path) -> str:
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<")
    ]
    user = [f for f in frames if Path(f.filename).resolve() == path.resolve()] or frames
    return f"{user[-1].filename}:{user[-1].lineno}" if user else str(path)


PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini")
"""A folder holding one of these is a project's root (pytest's rootdir rule, in short)."""


def project_root(start: Path | None = None) -> Path:
    """The nearest folder from `start` (the working directory) up that holds a project file."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / name).is_file() for name in PROJECT_FILES):
            return folder
    return here


def put_project_on_path(start: Path | None = None) -> Path:
    """Puts the project's root first on ``sys.path`` (if it is not there) and returns it."""
    root = project_root(start)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return root


def _module_name(path: Path) -> tuple[str, Path]:
    """The dotted name `path` is imported under, and the folder that name starts from."""
    parts = [path.stem]
    root = path.parent
    while (root / "__init__.py").exists():
        parts.insert(0, root.name)
        root = root.parent
    if root == path.parent:  # a plain folder: its dotted path from the project's root
        project = project_root()
        try:
            relative = path.with_suffix("").relative_to(project).parts
        except ValueError:
            relative = ()
        dotted = len(relative) > 1 and all(part.isidentifier() for part in relative)
        if dotted and not _claimed_elsewhere(relative[0], project):
            return ".".join(relative), project
    return ".".join(parts), root


def _claimed_elsewhere(top: str, project: Path) -> bool:
    """Whether `top` names a module or package other than the project's folder `top`.

    An eval folder named like an agent package (``llm_auditor/`` beside the
    installed ``llm_auditor``) would be shadowed by it, or shadow it, under a
    dotted name: its files are imported by their basename instead, their
    folder first on the path, as pytest does.
    """
    folder = str(project / top)
    loaded = sys.modules.get(top)
    if loaded is not None:
        return folder not in [str(Path(p).resolve()) for p in getattr(loaded, "__path__", [])]
    others = [p for p in sys.path if Path(p or ".").resolve() != project]
    spec = importlib.machinery.PathFinder.find_spec(top, others)
    return spec is not None and spec.origin is not None  # a namespace portion merges


def import_file(path: Path) -> ModuleType:
    """Imports a Python file as a module of its package, or by its path from the project root.

    Raises:
        DiscoveryError: The file does not import, or another module has its name.
    """
    path = path.resolve()
    module_name, root = _module_name(path)
    existing = sys.modules.get(module_name)
    if existing is not None:
        existing_file = getattr(existing, "__file__", None)
        if existing_file and Path(existing_file).resolve() == path:
            return existing
        raise DiscoveryError(
            f"cannot import {path}: a different module named `{module_name}` is already "
            f"loaded (from {existing_file}); rename the file or its package"
        )
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        return importlib.import_module(module_name)
    except SystemExit as error:  # an eval file must not end the run (and pass a CI) by exiting
        sys.modules.pop(module_name, None)
        raise DiscoveryError(
            f"cannot import {path} ({_user_location(error, path)}): it called "
            f"sys.exit({error.code!r}) while being imported; an eval file must only define cases"
        ) from None
    except Exception as error:
        sys.modules.pop(module_name, None)
        raise DiscoveryError(
            f"cannot import {path} ({_user_location(error, path)}): {type(error).__name__}: {error}"
        ) from error


def import_module(name: str) -> ModuleType:
    """Imports a module by its dotted name.

    Raises:
        DiscoveryError: The module does not import.
    """
    try:
        return importlib.import_module(name)
    except SystemExit as error:
        raise DiscoveryError(
            f"cannot import module `{name}`: it called sys.exit({error.code!r}) while being "
            "imported; an eval module must only define cases"
        ) from None
    except Exception as error:
        raise DiscoveryError(
            f"cannot import module `{name}`: {type(error).__name__}: {error}"
        ) from error


def cases_in(module: ModuleType) -> list[tuple[str, EvalCase]]:
    """The cases `module` binds at module level, with their names (the rule above)."""
    found: list[tuple[str, EvalCase]] = []
    seen: set[int] = set()
    for attribute, value in list(vars(module).items()):
        if attribute.startswith("_"):
            continue
        candidates = value if isinstance(value, list | tuple) else [value]
        for candidate in candidates:
            if isinstance(candidate, EvalCase) and id(candidate) not in seen:
                seen.add(id(candidate))
                found.append((attribute, candidate))
    return found


def looks_like_module(text: str) -> bool:
    """Whether `text` is a dotted module name (``package.module``)."""
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", text))


def discover(paths: Sequence[str | Path]) -> list[DiscoveredCase]:
    """Finds the cases under `paths` (files, folders or module names).

    Raises:
        DiscoveryError: With one line naming the problem (see the module doc).
    """
    put_project_on_path()
    loaders: list[tuple[str, Callable[[], ModuleType]]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if path.suffix != ".py":
                raise DiscoveryError(f"{path} is not a Python file")
            loaders.append((str(path), partial(import_file, path)))
        elif path.is_dir():
            files = _eval_files(path)
            if not files:
                raise DiscoveryError(
                    f"no eval files under {path} (looked for {', '.join(EVAL_FILE_PATTERNS)})"
                )
            loaders.extend((str(file), partial(import_file, file)) for file in files)
        elif looks_like_module(str(raw)) and importlib.util.find_spec(str(raw).split(".")[0]):
            loaders.append((str(raw), partial(import_module, str(raw))))
        else:
            raise DiscoveryError(f"no such file, folder or module: {raw}")

    discovered: list[DiscoveredCase] = []
    owners: dict[str, str] = {}
    models = _ModelWatch()
    for source, load in loaders:
        module = load()
        models.check(source)
        cases = cases_in(module)
        if not cases:
            raise DiscoveryError(
                f"{source} defines no EvalCase (adk-eval collects module-level EvalCase "
                "objects and lists or tuples of them)"
            )
        for attribute, case in cases:
            if any(found.case is case for found in discovered):
                continue
            if case.name in owners:
                raise DiscoveryError(
                    f"two cases are named `{case.name}` ({owners[case.name]} and "
                    f"{source}:{attribute}); case names must be unique"
                )
            owners[case.name] = f"{source}:{attribute}"
            discovered.append(DiscoveredCase(case=case, source=source, attribute=attribute))
            models.watch(case, source)
    return discovered


class _ModelWatch:
    """Notices an eval file that changes the model of an agent an earlier file's case runs."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[LlmAgent, Any, str]] = {}

    def watch(self, case: EvalCase, source: str) -> None:
        for agent, _ in walk(case.root_agent):
            if isinstance(agent, LlmAgent) and id(agent) not in self._seen:
                self._seen[id(agent)] = (agent, agent.model, source)

    def check(self, source: str) -> None:
        for key, (agent, model, first) in list(self._seen.items()):
            if agent.model is model:
                continue
            warnings.warn(
                f"{source} changed the model of agent `{agent.name}`, which cases of {first} "
                "also run: every case now runs on the last model set, not its own. Give each "
                f'case its model with EvalCase(models={{"{agent.name}": ...}}) instead of '
                "setting it on the shared agent.",
                SharedModelWarning,
                stacklevel=2,
            )
            self._seen[key] = (agent, agent.model, source)


_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def keyword_matches(expression: str, name: str) -> bool:
    """Whether `name` matches a pytest-style ``-k`` expression.

    Words match as case-insensitive substrings of the case name and combine
    with ``and``, ``or``, ``not`` and parentheses.

    Raises:
        DiscoveryError: If the expression is malformed.
    """
    tokens = _TOKEN.findall(expression)
    words: list[bool] = []
    pieces: list[str] = []
    for token in tokens:
        if token in ("(", ")", "and", "or", "not"):
            pieces.append(token)
        else:
            pieces.append(f"_w[{len(words)}]")
            words.append(token.lower() in name.lower())
    try:
        # Only the tokens above reach eval: operators, parentheses and `_w[i]`.
        return bool(eval(" ".join(pieces), {"__builtins__": {}}, {"_w": words}))
    except SyntaxError:
        raise DiscoveryError(
            f"invalid -k expression {expression!r}: use words, and, or, not, parentheses"
        ) from None


def filter_cases(cases: Iterable[DiscoveredCase], expression: str | None) -> list[DiscoveredCase]:
    """The cases whose name matches the ``-k`` expression (all of them for None)."""
    if not expression:
        return list(cases)
    return [found for found in cases if keyword_matches(expression, found.case.name)]
