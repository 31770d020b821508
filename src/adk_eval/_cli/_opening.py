"""The first lines of ``run``: what runs where, with which seed, and how its model calls go.

Printed before any case runs, so a user sees at once the processes, the seed
that repeats the injected faults, the providers' quotas, the cache or cassette
in use, and what will run for real.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from rich.console import Console

from .. import __version__
from ._model_calls import settings_lines
from ._output import runs_for_real_lines

if TYPE_CHECKING:
    from .._case import EvalCase
    from .._suites._inventory import RunsForReal
    from .._suites._run import Executor
    from ..models._gateway._settings import ModelCalls
    from ._selection import RunOptions, Selection

__all__ = ["announce", "command_of"]


def announce(
    out: Console,
    paths: tuple[str, ...],
    cases: list[EvalCase],
    options: RunOptions,
    executor: Executor,
    settings: ModelCalls,
) -> RunsForReal:
    """``run``'s first lines: what runs where, its model calls' settings, what runs for real."""
    from .._suites._run import runs_for_real
    from ..models._roles._vertex import vertex_credentials_line

    out.print(
        f"adk-eval {__version__}: {len(cases)} case(s)"
        + (f" x {options.repeat} repeats" if options.runs > 1 else "")
        + f" from {', '.join(paths)} ({where(options, executor)}, seed {options.seed})"
    )
    inventory = runs_for_real(cases, executor, sandbox=options.sandbox, telemetry=options.telemetry)
    vertex = vertex_credentials_line()  # which project a Vertex model bills, and why
    lines = [
        *([vertex] if vertex else []),
        *settings_lines(settings),
        *runs_for_real_lines(inventory),
    ]
    for line in lines:
        out.print(line, markup=False, highlight=False)
    return inventory


def command_of(paths: tuple[str, ...], selection: Selection, options: RunOptions) -> str:
    """The command that runs these cases again, for reports."""
    return shlex.join(
        ["adk-eval", "run", *paths]
        + (["-k", selection.keyword] if selection.keyword else [])
        + (["--repeat", repeat_word(options.repeat)] if options.runs > 1 else [])
        + (["--shard", selection.shard] if selection.shard else [])
        + (["--faults", f"{options.faults:g}"] if options.faults is not None else [])
    )


def where(options: RunOptions, executor: Executor) -> str:
    """How the runs are spread, for the first line of ``run``."""
    from .._suites._local import InProcess

    where = f"concurrency {options.concurrency}"
    if isinstance(executor, InProcess):  # the others are imported only when chosen
        return where
    from .._suites._ray._executor import Ray
    from .._suites._workers._executor import Workers

    if isinstance(executor, Ray):
        return f"{where} per Ray task, on {executor.address or 'a local Ray'}"
    if isinstance(executor, Workers):
        if executor.count == "auto":
            return f"{where} per process, up to {executor.processes} worker processes (auto)"
        return f"{where} per process, {executor.processes} worker processes"
    return where


def repeat_word(repeat: object) -> str:
    """``--repeat``'s value as typed: ``3`` or ``auto:10``."""
    return str(repeat) if isinstance(repeat, int) else f"auto:{getattr(repeat, 'max', '')}"
