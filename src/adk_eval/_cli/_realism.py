"""The commands on simulated users against real ones: ``mine``, ``realism``."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import console, fail
from ._production import Filters, session_filter_options

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
@click.option(
    "--no-redact",
    is_flag=True,
    help="Mine the text as stored (default: e-mails, phone, card and id numbers become "
    "<EMAIL_1>-style markers before anything is mined or written).",
)
def mine(sessions: str, out: Path, filters: Filters, no_redact: bool) -> None:
    """Mine stored conversations into scenarios a simulated user plays again.

    SESSIONS is what `adk-eval score` reads (a session store, session JSON, traces).
    Each conversation becomes one case: the user's goal and first message, the facts
    they gave later (asked for or volunteered), their manner (measured by rules), and
    its source session. The store is only ever read.
    """
    import anyio

    from .._errors import AdkEvalError
    from ..production._redact import Redactor
    from ..production._sources import open_sessions
    from ..realism._mine_files import mine_sessions

    out_console = console()
    try:
        source = open_sessions(sessions)
        anyio.run(source.check)
        redactor = Redactor.none() if no_redact else Redactor()
        summary = anyio.run(
            lambda: mine_sessions(source, out, filters=filters.build(), redactor=redactor)
        )
    except AdkEvalError as error:
        fail(str(error))
    out_console.print(summary.describe(), markup=False, highlight=False)


@click.command()
@click.argument("sessions")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@session_filter_options
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report as JSON here.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the resampling.")
def realism(sessions: str, runs: Path, filters: Filters, json_path: Path | None, seed: int) -> None:
    """Compare your real users with your simulated users, feature by feature.

    SESSIONS: the real conversations (what `adk-eval score` reads). RUNS: the JSON
    report (`adk-eval run --json`) of the simulated runs, typically of the cases
    `adk-eval mine` wrote from the same sessions. Each user side is measured by the
    same rules; each feature is compared with its interval and a test corrected for
    the number of features, said in words.
    """
    import json

    import anyio

    from .._errors import AdkEvalError
    from ..production._sources import open_sessions
    from ..realism._report import realism_report, runs_of_report

    out = console()
    try:
        simulated = runs_of_report(runs)
        source = open_sessions(sessions)
        report = anyio.run(
            lambda: realism_report(source, simulated, filters=filters.build(), seed=seed)
        )
    except AdkEvalError as error:
        fail(str(error))
    for line in report.lines():
        out.print(line, markup=False, highlight=False)
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_data(), indent=2, default=str) + "\n")
        out.print(f"JSON report: {json_path}", markup=False, highlight=False)
