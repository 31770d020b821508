"""How Ray zips a folder it ships: its own traversal, or a close copy without its private API.

Ray zips a ``py_modules`` package or a ``working_dir`` by walking it
(``ray._private.runtime_env.packaging._dir_travel``): a path that matches the
``runtime_env`` excludes, or the ``.gitignore`` (unless
``RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1``) or ``.rayignore`` of a folder it is
in, is left out with everything below it. `Walker` runs that same traversal,
so what it lists is what Ray zips. The API is private: when it cannot be read,
a copy (``.gitignore`` patterns as globs over ``pathlib`` paths) stands in.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

__all__ = ["FALLBACK_LIMIT", "Matcher", "Walk", "Walker", "anchored"]

Matcher = Callable[[Path], bool]
"""Whether a path is left out."""

FALLBACK_LIMIT = 512 * 1024 * 1024
"""Ray's upload limit (``GCS_STORAGE_MAX_SIZE``) when its private API cannot be read."""

_RAY_DEFAULTS = (".git", ".venv", "venv", "__pycache__")
"""Ray's default excludes of a ``working_dir`` when its private API cannot be read."""

_LOG = logging.getLogger(__name__)


@dataclass
class Walk:
    """What one traversal of `top` kept (the files Ray zips) and the paths it saw."""

    top: Path
    kept: list[Path] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)
    folders: list[Path] = field(default_factory=list)

    def keep(self, path: Path) -> None:
        """Ray's handler: called on each path not left out."""
        self.seen.add(path)
        if path.is_dir():
            self.folders.append(path)
        elif path.is_file():
            self.kept.append(path)

    def skipped(self) -> list[Path]:
        """The paths left out (what is below a folder left out is never looked at)."""
        return [p for f in self.folders for p in sorted(f.iterdir()) if p not in self.seen]

    def collapse(self, paths: Mapping[Path, str]) -> dict[Path, str]:
        """Each path, or its highest folder below `top` that ships nothing, with the first why."""
        shipping = {parent for path in self.kept for parent in path.parents}
        out: dict[Path, str] = {}
        for path, why in paths.items():
            while path.parent != self.top and path.parent not in shipping:
                path = path.parent
            out.setdefault(path, why)
        return out


@dataclass(frozen=True)
class Walker:
    """Ray's traversal, its upload limit and its settings (see the module doc).

    Attributes:
        ray: Ray's private ``packaging`` module, or None where the copy stands in.
        limit: Ray's upload limit, in bytes.
        defaults: Ray's default excludes of a ``working_dir`` (not of ``py_modules``).
        include_gitignore: Whether Ray honours ``.gitignore`` files.
    """

    ray: ModuleType | None
    limit: int
    defaults: tuple[str, ...]
    include_gitignore: bool
    _ignore_files: dict[Path, list[tuple[str, Matcher]]] = field(default_factory=dict)

    @classmethod
    def make(cls) -> Walker:
        """Reads Ray's traversal, limit and settings from its private API, or their stand-ins."""
        name = "RAY_RUNTIME_ENV_IGNORE_GITIGNORE"
        try:
            packaging = importlib.import_module("ray._private.runtime_env.packaging")
            constants = importlib.import_module("ray._private.ray_constants")
            _ = packaging._dir_travel, packaging._get_excludes, packaging._get_ignore_file
            limit = int(packaging.GCS_STORAGE_MAX_SIZE)
            defaults = tuple(constants.get_runtime_env_default_excludes())
            name = constants.RAY_RUNTIME_ENV_IGNORE_GITIGNORE
        except (ImportError, AttributeError, TypeError, ValueError):
            packaging, limit, defaults = None, FALLBACK_LIMIT, _RAY_DEFAULTS
        return cls(packaging, limit, defaults, os.environ.get(name, "0") != "1")

    def matcher(self, base: Path, patterns: Sequence[str]) -> Matcher:
        """Whether a path under `base` matches the ``.gitignore``-style `patterns`."""
        if self.ray is not None:
            return self.ray._get_excludes(base, list(patterns))  # type: ignore[no-any-return]
        return _glob_matcher(base, patterns)

    def ignore_files(self, folder: Path) -> list[tuple[str, Matcher]]:
        """The ``.gitignore`` and ``.rayignore`` of `folder` that Ray honours, by name."""
        if folder not in self._ignore_files:
            names = (".gitignore", ".rayignore") if self.include_gitignore else (".rayignore",)
            found: list[tuple[str, Matcher]] = []
            for name in names:
                if self.ray is not None:
                    match = self.ray._get_ignore_file(folder, name)
                elif (folder / name).is_file():
                    match = _glob_matcher(folder, (folder / name).read_text().splitlines())
                else:
                    match = None
                found += [(name, match)] if match is not None else []
            self._ignore_files[folder] = found
        return self._ignore_files[folder]

    def walk(self, top: Path, patterns: Sequence[str], extra: Sequence[Matcher] = ()) -> Walk:
        """What Ray zips of `top` with `patterns` as its excludes (and the `extra` ones)."""
        walk = Walk(top)
        excludes = [self.matcher(top, patterns), *extra]
        if self.ray is not None:
            git = self.include_gitignore
            self.ray._dir_travel(top, excludes, walk.keep, include_gitignore=git, logger=_LOG)
        else:
            self._travel(top, excludes, walk.keep)
        return walk

    def _travel(self, path: Path, excludes: list[Matcher], keep: Callable[[Path], None]) -> None:
        """Ray's ``_dir_travel``, copied: a folder's ignore files apply to it and below."""
        if path.is_dir():
            excludes = [*excludes, *(match for _, match in self.ignore_files(path))]
        if any(exclude(path) for exclude in excludes):
            return
        keep(path)
        for child in path.iterdir() if path.is_dir() else ():
            self._travel(child, excludes, keep)

    def ignored_above(self, top: Path, root: Path, patterns: Sequence[str]) -> list[str]:
        """Excludes (`anchored` in `top`) for what ignore files above `top` leave out of it.

        Those of the folders from `top`'s parent up to `root` count: Ray reads only the
        ones inside the folder it zips.
        """
        above = [folder for folder in top.parents if folder.is_relative_to(root)]
        ignores = [match for folder in above for _, match in self.ignore_files(folder)]
        if not ignores or not top.is_dir():
            return []
        walk = self.walk(top, patterns, [lambda p: p != top and any(m(p) for m in ignores)])
        ignored = {p: "" for p in walk.skipped() if any(m(p) for m in ignores)}
        return [anchored(p.relative_to(top).as_posix(), p.is_dir()) for p in walk.collapse(ignored)]

    def ignored_by(self, path: Path, root: Path) -> str | None:
        """The ignore file (its path from `root`) that leaves `path` out, if one does."""
        for folder in path.parents:
            if not folder.is_relative_to(root):
                break
            for name, match in self.ignore_files(folder):
                if match(path):
                    return (folder / name).relative_to(root).as_posix()
        return None


def anchored(relative: str, folder: bool) -> str:
    """An exclude that matches exactly `relative` (a path from the top of a package)."""
    return "/" + re.sub(r"([\\*?\[\]!#])", r"\\\1", relative) + ("/" if folder else "")


def _glob_matcher(base: Path, lines: Iterable[str]) -> Matcher:
    """``.gitignore`` patterns relative to `base`, closely enough (the copy without Ray)."""
    rules = []
    for line in (line.strip() for line in lines):
        if line and not line.startswith("#"):
            negate, line = line.startswith("!"), line.removeprefix("!")
            folder, line = line.endswith("/"), line.rstrip("/").removeprefix("**/")
            rules.append((_glob_regex(line.lstrip("/")), negate, folder, "/" in line))
    base = base.absolute()

    def match(path: Path) -> bool:
        parts = path.absolute().relative_to(base).parts
        hit = False
        for regex, negate, folder, anchored in rules:
            ends = range(1, len(parts) + (0 if folder else 1))  # `dir/` matches what is below
            names = ("/".join(parts[:end]) if anchored else parts[end - 1] for end in ends)
            if any(regex.fullmatch(name) for name in names):
                hit = not negate
        return hit

    return match


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob (``*``, ``**``, ``?``, ``[...]``, backslash escapes) as a regular expression."""
    out, index = [], 0
    while index < len(pattern):
        char, index = pattern[index], index + 1
        if char == "\\" and index < len(pattern):
            out.append(re.escape(pattern[index]))
            index += 1
        elif char == "*" and pattern[index : index + 1] == "*":
            out.append(".*")
            index += 1
        elif char in "*?":
            out.append("[^/]*" if char == "*" else "[^/]")
        elif char == "[" and "]" in pattern[index + 1 :]:
            end = pattern.index("]", index + 1)
            body = pattern[index:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            index = end + 1
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.DOTALL)
