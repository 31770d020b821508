"""The commands that read stored runs: ``runs``, ``compare``, ``view``.

``runs`` and ``compare`` read the runs database only: they import no ADK.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import click

from .._errors import AdkEvalError
from ..reporting._store import RunStore
from ._common import EXIT_FAILED, console, db_option, fail
from ._comparing import comparison_summary, comparison_table
from ._output import runs_table
from ._serving import Serving, server_options

__all__ = ["compare", "judges", "runs", "view"]


@click.command()
@db_option
@click.option("-n", "limit", type=click.IntRange(min=1), default=20, show_default=True)
def runs(db: Path, limit: int) -> None:
    """List the stored runs, newest first."""
    try:
        stored = RunStore(db).runs(limit)
    except AdkEvalError as error:
        fail(str(error))
    console().print(runs_table(stored))


@click.command()
@click.argument("run_a", type=int, required=False)
@click.argument("run_b", type=int, required=False)
@db_option
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when the test decides a case, or the suite, regressed (not on noise).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="The significance level: the chance of calling noise a regression.",
)
def compare(
    run_a: int | None, run_b: int | None, db: Path, fail_on_regression: bool, alpha: float
) -> None:
    """Compare two stored runs (default: the last two): regressed, improved or no evidence."""
    from ..reporting._compare import compare_reports, noise_floor

    store = RunStore(db)
    try:
        if run_a is None:
            run_a, run_b = store.last_two()
        elif run_b is None:
            run_b = store.runs(1)[0].id
        comparison = compare_reports(store.load(run_a), store.load(run_b), alpha=alpha)
        noise = {name: noise_floor(rates) for name, rates in store.case_rates(run_b).items()}
    except AdkEvalError as error:
        fail(str(error))
    out = console()
    out.print(comparison_table(comparison, run_a, run_b, noise))
    out.print(comparison_summary(comparison))
    regressed = comparison.decided_regressions or comparison.decision == "regressed"
    sys.exit(EXIT_FAILED if fail_on_regression and regressed else 0)


@click.command()
@db_option
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every human label (the viewer's reviews) to this JSON file.",
)
def judges(db: Path, labels_path: Path | None) -> None:
    """How each LLM judge agrees with the people who reviewed its verdicts (Cohen's kappa)."""
    import json

    from rich.table import Table

    from ..reporting._reviews import judge_calibration, reviews

    try:
        labels = reviews(RunStore(db))
    except AdkEvalError as error:
        fail(str(error))
    found = judge_calibration(labels)
    out = console()
    table = Table(header_style="bold")
    for column in ("Judge", "Model", "Prompt", "Labels", "Agreement", "Kappa", "People pass"):
        table.add_column(column)
    table.add_column("Self-consistency")
    for judge in found:
        kappa = "-" if judge.kappa is None else f"{judge.kappa:.2f}"
        consistency = judge.self_consistency
        table.add_row(
            judge.metric,
            judge.model,
            judge.prompt_hash,
            str(judge.labels),
            f"{judge.raw:.0%}",
            kappa,
            f"{judge.base_rate:.0%}",
            "-" if consistency is None else f"{consistency:.0%}",
        )
    out.print(table)
    out.print(
        f"{len(labels)} label(s) on {len(found)} judge(s); kappa: 1 is full agreement, 0 what "
        "chance gives at these pass rates"
    )
    if labels_path is not None:
        labels_path.write_text(json.dumps([label.to_data() for label in labels], indent=2) + "\n")
        out.print(f"labels: {labels_path}")


@click.command()
@db_option
@server_options(8766, "ADK_EVAL_VIEWER_TOKEN")
@click.option(
    "--realism",
    "realism_paths",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also show this realism report (`adk-eval realism ... --json`), read only; repeatable.",
)
@click.option(
    "--watch",
    "watch_path",
    type=click.Path(path_type=Path),
    help="Also show the live page of the watch keeping this state file (its --state), read only.",
)
def view(
    db: Path, serving: Serving, realism_paths: tuple[Path, ...], watch_path: Path | None
) -> None:
    """Browse the stored runs: pass rates over time, each run's cases and conversations, compare.

    With --realism, also a realism report's behaviours and its scenarios side by side;
    with --watch, a watch's live page: pass rates, alerts, the newest failing conversations.
    """
    from ..reporting._viewer import run_viewer
    from ..reporting._viewer_realism import load_realism_reports
    from ..reporting._viewer_watch import load_watch

    serving.check()
    try:
        if watch_path is None or db.exists():  # a watch alone needs no stored runs
            RunStore(db).runs(1)
        realism = load_realism_reports(realism_paths)
        watch = None if watch_path is None else load_watch(watch_path)
    except AdkEvalError as error:
        fail(str(error))
    serving.serve(console(), partial(run_viewer, db, realism=realism, watch=watch))
