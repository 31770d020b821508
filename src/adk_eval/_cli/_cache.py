"""``adk-eval cache``: the model-output cache's file, its entries, clearing and pruning.

``path``, ``list``, ``clear`` and ``prune`` read and write the cache's SQLite file
only: they import no ADK. Each takes ``--cache-path`` to name another file (else
the run's settings, then ``$ADK_EVAL_CACHE_DIR``, then the user's cache folder).
Reading commands never make a file that is not there, and no command changes a
file that is not a model cache: ``clear`` deletes a damaged file only when it
carries the cache's mark.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .._errors import AdkEvalError
from ..models._gateway._cache_file import CacheBusyError
from ._common import console, fail

if TYPE_CHECKING:
    from ..models._gateway._cache import CacheEntry, ModelCache

__all__ = ["cache"]

_F = TypeVar("_F", bound=Callable[..., Any])

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


class _Age(click.ParamType):  # type: ignore[type-arg]
    """Seconds, given as ``90``, ``90s``, ``30m``, ``12h``, ``7d`` or ``2w``."""

    name = "age"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, int | float):
            return float(value)
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", str(value))
        if found is None:
            self.fail(f"{value!r} is not an age (90, 90s, 30m, 12h, 7d, 2w)", param, ctx)
        return float(found.group(1)) * _UNITS[found.group(2) or "s"]


_AGE = _Age()


def _path_option(function: _F) -> _F:
    return click.option(
        "--cache-path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="The cache's SQLite file (default: $ADK_EVAL_CACHE_DIR/models.sqlite, else the "
        "user's cache folder's adk-eval/models.sqlite).",
    )(function)


def _filters(function: _F) -> _F:
    function = click.option(
        "--model", metavar="GLOB", help="Only entries of this model (a glob: 'gemini-*')."
    )(function)
    return click.option(
        "--role",
        metavar="ROLE",
        help="Only entries of this role (judge:quality) or kind (agent, users, judges, tools).",
    )(function)


def _file(cache_path: Path | None) -> Path:
    from ..models._gateway._cache import cache_file
    from ..models._gateway._settings import project_settings

    try:
        settings = project_settings()
    except (AdkEvalError, CacheBusyError) as error:
        fail(str(error))
    if cache_path is not None:
        settings = settings.replace(cache_path=cache_path)
    return cache_file(settings).absolute()


def _store(path: Path) -> ModelCache:
    from ..models._gateway._cache import open_cache
    from ..models._gateway._settings import ModelCalls

    return open_cache(ModelCalls(cache_path=path))


@click.group()
def cache() -> None:
    """The model-output cache: where it is, what it holds, clearing and pruning it."""


@cache.command()
@_path_option
def path(cache_path: Path | None) -> None:
    """Print the cache's file."""
    click.echo(str(_file(cache_path)))


@cache.command(name="list")
@_path_option
@_filters
def list_entries(cache_path: Path | None, role: str | None, model: str | None) -> None:
    """List the cached answers, oldest first, and what they stand for."""
    from rich.table import Table

    file = _file(cache_path)
    out = console()
    if not file.exists():
        out.print(f"no model cache at {file} yet")
        return
    try:
        found = _store(file).entries(role=role, model=model)
    except (AdkEvalError, CacheBusyError) as error:
        fail(str(error))
    table = Table(header_style="bold")
    for column in ("Role", "Model", "Case", "Age", "Tokens", "Cost"):
        right = column in ("Age", "Tokens", "Cost")
        table.add_column(
            column, justify="right" if right else "left", no_wrap=column != "Case", min_width=4
        )
    now = time.time()
    for entry in found:
        attempt = f" (attempt {entry.attempt})" if entry.attempt else ""
        table.add_row(
            entry.role,
            entry.model,
            (entry.case or "-") + attempt,
            _age(now - entry.created),
            f"{entry.input_tokens}+{entry.output_tokens}",
            _usd(entry.cost_usd),
        )
    if found:
        out.print(table)
    out.print(f"{_count(len(found))} in {file}, {_standing_for(found)}")


@cache.command()
@_path_option
@_filters
@click.option(
    "--older-than", type=_AGE, metavar="AGE", help="Only entries older than AGE (90s, 12h, 7d)."
)
def clear(
    cache_path: Path | None, role: str | None, model: str | None, older_than: float | None
) -> None:
    """Delete the cached answers (all, or those the filters select); a damaged cache whole."""
    from ..models._gateway._cache import remove_damaged

    file = _file(cache_path)
    if not file.exists():
        click.echo(f"no model cache at {file}: nothing to clear")
        return
    whole = role is None and model is None and older_than is None
    try:
        deleted = _store(file).clear(role=role, model=model, older_than=older_than)
    except (AdkEvalError, CacheBusyError) as error:
        if whole and remove_damaged(file):  # the fix a damaged cache's error names
            click.echo(f"deleted {file}: a damaged model cache")
            return
        fail(str(error))
    click.echo(f"deleted {_count(deleted)} from {file}")


@cache.command()
@_path_option
@click.option(
    "--ttl", type=click.FloatRange(min=0), metavar="SECONDS", help="Delete entries older than this."
)
@click.option("--older-than", type=_AGE, metavar="AGE", help="The same, as an age (12h, 7d).")
def prune(cache_path: Path | None, ttl: float | None, older_than: float | None) -> None:
    """Delete the expired answers and compact the file."""
    if ttl is None and older_than is None:
        fail("prune needs --ttl SECONDS or --older-than AGE: the age past which answers expire")
    if ttl is not None and older_than is not None:
        fail("give --ttl or --older-than, not both")
    age = ttl if ttl is not None else older_than
    file = _file(cache_path)
    if not file.exists():
        click.echo(f"no model cache at {file}: nothing to prune")
        return
    before = _disk(file)
    try:
        deleted = _store(file).prune(older_than=age)
    except (AdkEvalError, CacheBusyError) as error:
        fail(str(error))
    after = _disk(file)
    click.echo(
        f"deleted {_count(deleted)} older than {_age(age or 0.0)} from {file}; "
        f"compacted {_size(before)} -> {_size(after)}"
    )


def _count(number: int) -> str:
    return f"{number} entr{'y' if number == 1 else 'ies'}"


def _standing_for(entries: list[CacheEntry]) -> str:
    """``standing for $0.0123 of model calls`` (and how many are of unpriced models)."""
    priced = [entry.cost_usd for entry in entries if entry.cost_usd is not None]
    unpriced = len(entries) - len(priced)
    text = f"standing for {_usd(sum(priced))} of model calls"
    return text + (f" ({unpriced} of models without a known price)" if unpriced else "")


def _usd(cost: float | None) -> str:
    """``$0.000080``, ``$1.25``; ``?`` for a model without a known price."""
    if cost is None:
        return "?"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.6f}"


def _age(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0)):
        if seconds >= size:
            return f"{seconds // size:.0f}{unit}"
    return f"{max(seconds, 0.0):.0f}s"


def _disk(file: Path) -> int:
    """Bytes of the file and its write-ahead log."""
    wal = Path(f"{file}-wal")
    return file.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _size(size: int) -> str:
    return f"{size / 1024:.0f} KiB" if size >= 1024 else f"{size} B"
