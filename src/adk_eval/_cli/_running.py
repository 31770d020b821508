"""The commands that run suites: ``run``, ``merge`` (CI shards), ``report``, ``list``.

Each imports the harness (and so ADK) inside the command, when it runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from rich.console import Console

from .. import __version__
from .._lazy import imports_without_collections, is_loaded_instance
from ._common import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    ModelChoice,
    console,
    db_option,
    exit_process,
    fail,
    model_options,
)
from ._finish import Reports, finish, report_options, write_reports
from ._model_calls import CallOptions, call_options
from ._opening import announce, command_of
from ._output import LiveProgress, runs_for_real_lines
from ._robustness import Measured, fault_options, faulted_line
from ._selection import (
    Placement,
    RunOptions,
    Selection,
    discover,
    keyword_option,
    placement_options,
    run_options,
    selection_options,
)

if TYPE_CHECKING:
    from .._case import EvalCase
    from .._result import EvalResult
    from .._suites._inventory import RunsForReal
    from .._suites._results import EvalSuiteResult
    from .._suites._run import Executor
    from .._suites._workers._executor import Workers
    from ..models._gateway._settings import ModelCalls
    from ._live import LiveRun

__all__ = ["list_cases", "merge", "report", "run"]


@click.command()
@click.argument("paths", nargs=-1, required=True)
@selection_options
@run_options
@report_options
@placement_options
@click.option(
    "--results",
    "results_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every run, whole, to FILE for `adk-eval merge`.",
)
@model_options
@call_options
def run(
    paths: tuple[str, ...],
    selection: Selection,
    options: RunOptions,
    reports: Reports,
    placement: Placement,
    results_path: Path | None,
    models: ModelChoice,
    calls: CallOptions,
) -> None:
    """Run the eval cases found in PATHS (files, folders or modules)."""
    _check_shards(selection, options)
    options = fault_options(options)
    settings = calls.settings()
    with imports_without_collections():  # ADK, the harness, the eval files
        from .._seeds import new_seed
        from ..models._gateway._gate import outside_runs
        from ..models._roles._clients import warm_clients
        from ._live import LiveRun

        out = console()
        threads_before = {thread.ident for thread in threading.enumerate()}
        durations = selection.durations()
        with outside_runs(settings):  # a cassette that replays needs no key, here either
            models.apply()
            found = selection.cases(paths, durations)
        warm_clients()  # litellm now, not at the first model call (and before workers fork)
    reports.check_store()
    _share_calibration(reports)
    cases = [item.case for item in found]
    executor = placement.choose(len(cases) * options.runs, models.model)
    seed = options.seed if options.seed is not None else new_seed()
    options = dataclasses.replace(options, seed=seed)
    inventory = announce(out, paths, cases, options, executor, settings)
    command = command_of(paths, selection, options)
    positions = {item.case.name: index for index, item in enumerate(found)}
    live = LiveRun.of(reports.store, command, cases, options, inventory, out)
    reports = dataclasses.replace(reports, live_run=live.start() if live else None)
    done = _Done(out, cases, options, settings, positions, results_path, inventory, live)
    suite = done.run(_forked_ahead(executor), durations)
    faulted = None if suite.interrupted else done.faulted(placement, models.model, durations)
    if suite.placement:
        out.print(f"processes: {suite.placement}", markup=False, highlight=False)
    if results_path is not None:
        done.write_results(suite)
    if suite.interrupted or (faulted is not None and faulted.interrupted):
        write_reports(out, suite, reports, f"{command} (interrupted)")
        exit_process(EXIT_TERMINATED if done.terminated else EXIT_INTERRUPTED, out, threads_before)
    if results_path is not None:
        out.print(f"results: {results_path}")
    measured = Measured.of(suite, faulted, options) if faulted is not None else None
    explained = _explained(out, suite, cases, options, settings)
    finish(out, explained, reports, command, threads_before, robustness=measured)


def _explained(
    out: Console,
    suite: EvalSuiteResult,
    cases: list[Any],
    options: RunOptions,
    model_calls: ModelCalls,
) -> EvalSuiteResult:
    """With ``--explain-failures``: the suite, its failures explained by counterfactual re-runs."""
    failed = sum(1 for result in suite.results if not result.passed)
    if not options.explain_failures or not failed:
        return suite
    import anyio

    from .._suites._counterfactuals import EXPLAINED_AT_MOST, explain_failures

    out.print(
        f"explaining {min(failed, EXPLAINED_AT_MOST)} failed run(s) by counterfactual re-runs "
        f"(at most {options.rerun_budget} each)"
    )
    explain = partial(explain_failures, max_reruns=options.rerun_budget, model_calls=model_calls)
    return anyio.run(explain, suite, cases)


def _share_calibration(reports: Reports) -> None:
    """Puts the judges' calibration from the runs database where every process reads it."""
    if reports.db is None or not reports.db.exists():
        return
    from .._errors import AdkEvalError
    from ..metrics._judge import CALIBRATION_ENV
    from ..reporting._reviews import judge_calibration, reviews
    from ..reporting._store import RunStore

    try:
        found = judge_calibration(reviews(RunStore(reports.db)))
    except AdkEvalError:  # not a runs database: --no-store runs never read it otherwise
        return
    rows = [[j.metric, j.model, j.prompt_hash, j.labels, j.kappa or 0.0] for j in found]
    if rows:  # workers inherit the environment
        os.environ[CALIBRATION_ENV] = json.dumps(rows)


def _check_shards(selection: Selection, options: RunOptions) -> None:
    """Refuses adaptive repeats with shards: a case's runs depend on its finished ones."""
    if selection.shard and not isinstance(options.repeat, int):
        fail(
            "--repeat auto decides each case's runs from its finished ones, so a case's runs "
            "cannot be split into shards; give --repeat N with --shard"
        )


def _forked_ahead(executor: Executor) -> Executor:
    """`Workers` with its worker processes forked now, before the event loop.

    The eval files are imported and no event loop or progress thread runs yet, so
    each worker starts with all of it, at no cost.
    """
    if is_loaded_instance(executor, "adk_eval._suites._workers._executor", "Workers"):
        return cast("Workers", executor).prefork()  # its module is imported only when chosen
    return executor


@dataclasses.dataclass
class _Done:
    """The runs of one ``run`` command as they finish, kept when it is interrupted."""

    out: Console
    cases: list[EvalCase]
    options: RunOptions
    model_calls: ModelCalls
    positions: dict[str, int]
    results_path: Path | None
    inventory: RunsForReal
    live: LiveRun | None = None
    finished: list[EvalResult] = dataclasses.field(default_factory=list)
    terminated: bool = False
    faults: float | None = None
    """With ``--faults``: the rate of this pass's injected faults (None: the cases as written)."""

    def run(self, executor: Executor, durations: dict[str, float] | None) -> EvalSuiteResult:
        """The suite on `executor`; on Ctrl-C or SIGTERM, what finished, marked interrupted."""
        import anyio

        from .._errors import AdkEvalError
        from .._suites._run import run_eval_suite

        started = time.perf_counter()
        try:
            with LiveProgress(self.out, len(self.cases) * self.options.runs) as progress:

                def on_result(result: EvalResult) -> None:
                    self.finished.append(result)
                    progress.finished(result)
                    if self.live is not None:
                        self.live.finished(self.finished)

                suite = anyio.run(
                    until_terminated,
                    lambda: run_eval_suite(
                        self.cases,
                        executor=executor,
                        max_concurrency=self.options.concurrency,
                        stop_on_first_failure=self.options.stop_on_first_failure,
                        repeat=self.options.repeat,
                        max_duration=self.options.timeout,
                        budget=self.options.budget,
                        sandbox=self.options.sandbox,
                        telemetry=self.options.telemetry,
                        durations=durations,
                        seed=self.options.seed,
                        faults=self.faults,
                        on_result=on_result,
                        model_calls=self.model_calls,
                    ),
                )
        except KeyboardInterrupt:
            return self._interrupted(started, "Interrupted")
        except AdkEvalError as error:
            fail(str(error))
        finally:
            if self.live is not None:
                self.live.close()  # the end stores the run whole, never a live write after it
        if suite is None:
            self.terminated = True
            return self._interrupted(started, "Terminated (SIGTERM)")
        return suite

    def faulted(
        self, placement: Placement, model: str | None, durations: dict[str, float] | None
    ) -> EvalSuiteResult | None:
        """``--faults``: the same runs with faults on every mocked tool (None: no ``--faults``).

        A pass with faults that SIGTERM stops marks this one terminated.
        """
        if self.options.faults is None:
            return None
        self.out.print()
        self.out.print(faulted_line(self.options), markup=False, highlight=False)
        executor = _forked_ahead(placement.choose(len(self.cases) * self.options.runs, model))
        again = dataclasses.replace(self, live=None, finished=[], faults=self.options.faults)
        suite = again.run(executor, durations)
        self.terminated = again.terminated
        return suite

    def _interrupted(self, started: float, how: str) -> EvalSuiteResult:
        from .._suites._results import suite_from_results

        total = len(self.cases) * self.options.runs
        self.out.print(f"[bold yellow]{how}:[/] {len(self.finished)} of {total} runs finished")
        for result in self.finished:
            self.out.print(f"  {result.outcome.upper():10} {result.name}")
        order = {case.name: index for index, case in enumerate(self.cases)}
        partial = suite_from_results(
            sorted(self.finished, key=lambda r: (order.get(r.name, len(order)), r.attempt)),
            case_names=[case.name for case in self.cases],
            repeat=self.options.runs,
            duration_ms=(time.perf_counter() - started) * 1000,
            stopped_early=True,
            seed=self.options.seed,
            runs_for_real=self.inventory,
        )
        if partial.not_run:
            self.out.print("not run: " + ", ".join(partial.not_run))
        return dataclasses.replace(partial, interrupted=True)

    def write_results(self, suite: EvalSuiteResult) -> None:
        """Writes every run, whole, for ``adk-eval merge``."""
        from .._suites._shards import write_results

        assert self.results_path is not None
        names = [case.name for case in self.cases]
        write_results(self.results_path, suite, names, self.positions)


async def until_terminated(
    work: Callable[[], Awaitable[EvalSuiteResult]],
) -> EvalSuiteResult | None:
    """What `work` returns, or None when a SIGTERM cancelled it (like Ctrl-C: CI stops).

    The handler is there only while `work` runs; a second SIGTERM then ends the process.
    """
    import anyio

    done: list[EvalSuiteResult] = []

    async def watch(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                scope.cancel()
                return

    async with anyio.create_task_group() as group:
        group.start_soon(watch, group.cancel_scope)
        done.append(await work())
        group.cancel_scope.cancel()
    return done[0] if done else None


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@report_options
def merge(files: tuple[Path, ...], reports: Reports) -> None:
    """Merge the results files of shards (adk-eval run --shard K/N --results FILE) into one run."""
    from .._errors import AdkEvalError
    from .._suites._shards import merge_results

    out = console()
    reports.check_store()
    try:
        suite = merge_results(files)
    except AdkEvalError as error:
        fail(str(error))
    out.print(f"adk-eval {__version__}: merged {len(files)} shard(s), {len(suite.cases)} case(s)")
    if suite.runs_for_real.lines():  # every shard's, each item once
        for line in runs_for_real_lines(suite.runs_for_real):
            out.print(line, markup=False, highlight=False)
    else:  # a shard's run always names its sandbox mode: these files never said
        out.print("runs for real: not recorded in these results files")
    finish(out, suite, reports, shlex.join(["adk-eval", "merge", *map(str, files)]), None)


@click.command()
@click.argument("run_id", metavar="RUN", type=int, required=False)
@db_option
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the run's self-contained HTML report here.",
)
def report(run_id: int | None, db: Path, html_path: Path) -> None:
    """Write the HTML report of a stored run (default: the newest)."""
    from .._errors import AdkEvalError
    from ..reporting._html import write_html_report
    from ..reporting._store import RunStore

    store = RunStore(db)
    try:
        if run_id is None:
            run_id = store.runs(1)[0].id
        stored = store.load(run_id)
    except IndexError:
        fail(f"no stored runs in {db} (adk-eval run stores each run there)")
    except AdkEvalError as error:
        fail(str(error))
    write_html_report(stored, html_path)
    console().print(f"HTML report of run {run_id}: {html_path}")


@click.command("list")
@click.argument("paths", nargs=-1, required=True)
@keyword_option
def list_cases(paths: tuple[str, ...], keyword: str | None) -> None:
    """List the eval cases found in PATHS, without running them."""
    from rich.table import Table

    selected = discover(paths, keyword)
    table = Table(header_style="bold")
    for column in ("Case", "Defined in", "Description"):
        table.add_column(column)
    for found in selected:
        description = found.case.description or ""
        if found.case.xfail:
            description += f" [xfail: {found.case.xfail}]"
        table.add_row(found.case.name, f"{found.source}:{found.attribute}", description)
    out = console()
    out.print(table)
    out.print(f"{len(selected)} case(s)")
