"""The commands on simulated users against real ones: ``mine``."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import console, fail
from ._production import Filters, session_filter_options

__all__ = ["mine"]


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
