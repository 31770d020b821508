"""The commands on simulated users against real ones: ``mine``, ``realism``."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import click

from .._seeds import DEFAULT_SEED
from ._common import console, fail
from ._reading import Filters, Reading, reading_options, session_filter_options

__all__ = ["mine", "realism"]


@click.command()
@click.argument("sessions")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="The folder for scenarios.evalset.json (ADK's EvalSet) and scenarios.jsonl.",
)
@session_filter_options
@reading_options("mine", seen="anything is mined or written")
@click.option(
    "--model",
    help="A model that reads each conversation's goal and constraints (a structured "
    "schema; it sees the redacted text). Default: rules only.",
)
def mine(sessions: str, out: Path, filters: Filters, reading: Reading, model: str | None) -> None:
    """Mine stored conversations into scenarios a simulated user plays again.

    SESSIONS is what `adk-eval score` reads (a session store, session JSON, traces).
    Each conversation becomes one case: the user's goal and first message, the facts
    they gave later (asked for or volunteered), their manner (measured by rules), and
    its source session. The store is only ever read.
    """
    import anyio

    from .._errors import AdkEvalError
    from .._sources._specs import open_sessions
    from ..realism._mine_files import mine_sessions

    out_console = console()
    try:
        source = open_sessions(sessions)
        anyio.run(source.check)
        mining = partial(
            mine_sessions,
            source,
            out,
            filters=filters.build(),
            redactor=reading.redactor(),
            model=model,
            include_open=reading.include_open,
        )
        summary = anyio.run(mining)
    except AdkEvalError as error:
        fail(str(error))
    out_console.print(summary.describe(), markup=False, highlight=False)


@click.command()
@click.argument("sessions")
@click.argument("runs", required=False, type=click.Path(dir_okay=False, path_type=Path))
@session_filter_options
@reading_options("measure")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report as JSON here.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report as one self-contained HTML page here (scenarios side by side).",
)
@click.option(
    "--calibrate",
    is_flag=True,
    help="Instead, find the persona settings whose users behave closest to these real "
    "users (fitted on 70 %% of them, checked on the rest); no RUNS needed.",
)
@click.option(
    "--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seeds the resampling."
)
def realism(
    sessions: str,
    runs: Path | None,
    filters: Filters,
    reading: Reading,
    json_path: Path | None,
    html_path: Path | None,
    calibrate: bool,
    seed: int,
) -> None:
    """Compare your real users with your simulated users, feature by feature.

    SESSIONS: the real conversations (what `adk-eval score` reads). RUNS: the JSON
    report (`adk-eval run --json`) of the simulated runs, typically of the cases
    `adk-eval mine` wrote from the same sessions. Each user side is measured by the
    same rules; each feature is compared with its interval and a test corrected for
    the number of features, said in words. With --calibrate: the persona settings
    closest to the real users, and how close they are on sessions held out.
    """
    import anyio

    from .._errors import AdkEvalError
    from .._sources._specs import open_sessions

    out = console()
    try:
        source = open_sessions(sessions)
        if calibrate:
            lines = anyio.run(lambda: _calibration(source, filters, reading, seed))
        elif runs is None:
            fail("give RUNS (a JSON report of the simulated runs), or --calibrate")
        else:
            written = (json_path, html_path)
            lines = anyio.run(lambda: _report(source, runs, filters, reading, seed, written))
    except AdkEvalError as error:
        fail(str(error))
    for line in lines:
        out.print(line, markup=False, highlight=False)


async def _report(
    source: Any,
    runs: Path,
    filters: Filters,
    reading: Reading,
    seed: int,
    written: tuple[Path | None, Path | None],
) -> list[str]:
    import json

    from ..realism._report import realism_report
    from ..realism._runs import runs_of_report

    report = await realism_report(
        source,
        runs_of_report(runs),
        filters=filters.build(),
        seed=seed,
        include_open=reading.include_open,
    )
    lines = report.lines()
    json_path, html_path = written
    if json_path is not None:
        _write(json_path, json.dumps(report.to_data(), indent=2, default=str) + "\n")
        lines.append(f"JSON report: {json_path}")
    if html_path is not None:
        from ..reporting._realism_html import render_realism_html

        _write(html_path, render_realism_html(report.to_data()))
        lines.append(f"HTML report: {html_path}")
    return lines


def _write(path: Path, text: str) -> None:
    path.write_text(text)


async def _calibration(source: Any, filters: Filters, reading: Reading, seed: int) -> list[str]:
    from ..realism._calibrate import calibrate_source

    found, left_out = await calibrate_source(
        source, filters.build(), seed=seed, include_open=reading.include_open
    )
    return [*left_out, *found.lines()]
