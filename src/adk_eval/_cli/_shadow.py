"""``adk-eval shadow``: a candidate agent replayed against stored conversations, safely.

It imports the harness, ADK and the store's driver inside the command, when it runs.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import click

from .. import __version__
from .._lazy import imports_without_collections
from ._common import EXIT_FAILED, console, fail
from ._production import Filters, session_filter_options

__all__ = ["shadow"]

_OUTCOMES = ("same", "better", "worse", "diverged", "error")
_STYLE = {"same": "green", "better": "cyan", "worse": "red", "diverged": "yellow", "error": "red"}
_EXPLAINED = 50
"""Sessions explained in full (those with a difference), unless ``-v``."""


@click.command()
@click.argument("sessions")
@click.option(
    "--agent",
    "agent_spec",
    required=True,
    metavar="LOCATION[:NAME]",
    help="The candidate: a file or module and its agent, App or Workflow "
    "(default NAME: root_agent, then app).",
)
@click.option(
    "--metrics",
    "metrics_spec",
    metavar="FILE[:NAME]",
    help="Metrics scored on the recording and the new run (every metric FILE binds, or NAME).",
)
@click.option(
    "--continue-with",
    "model_spec",
    metavar="MODEL",
    help="When a conversation leaves the recording, this model plays the user from there "
    "(a model name, or LOCATION:NAME of a model object); default: stop and report it.",
)
@session_filter_options
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Sessions replayed at once.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["worse", "error", "diverged", "better"]),
    multiple=True,
    metavar="OUTCOME",
    help="Exit 1 when a session has this outcome (repeatable; default: worse and error).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every session's comparison to this JSON file.",
)
@click.option("-v", "--verbose", is_flag=True, help="Explain every session, not only changes.")
@click.option(
    "--no-redact",
    is_flag=True,
    help="Replay the text as stored (default: e-mails, phone, card and id numbers become "
    "<EMAIL_1>-style markers before the candidate's models see them).",
)
def shadow(
    sessions: str,
    agent_spec: str,
    metrics_spec: str | None,
    model_spec: str | None,
    filters: Filters,
    concurrency: int,
    fail_on: tuple[str, ...],
    json_path: Path | None,
    verbose: bool,
    no_redact: bool,
) -> None:
    """Replay a candidate agent against stored sessions and compare it with what happened.

    Recorded tool responses answer the candidate's tool calls (no tool body runs), and
    recorded user turns are the user. SESSIONS is as for `adk-eval score`; only read.
    """
    import anyio

    with imports_without_collections():
        from .._errors import AdkEvalError
        from .._sources._redact._redactor import Redactor
        from ..production._shadow import shadow_sessions

    out = console()
    source, agent, metrics, model, chosen = _prepare(
        sessions, agent_spec, metrics_spec, model_spec, filters
    )
    names = ", ".join(m.name for m in metrics) or "none"
    out.print(
        f"adk-eval {__version__}: shadow-replaying the sessions of {source.description} "
        f"with the agent of {agent_spec} (read-only); metrics: {names}; when a "
        f"conversation leaves the recording: {f'continue with {model_spec}' if model else 'stop'}"
    )
    printer = _Printer(out, verbose)
    started = time.perf_counter()

    replaying = partial(
        shadow_sessions,
        source,
        agent,
        metrics=metrics,
        filters=chosen,
        continue_with=model,
        max_concurrency=concurrency,
        on_result=printer.print,
        redactor=Redactor.none() if no_redact else None,
    )
    try:
        results = anyio.run(replaying)
    except KeyboardInterrupt:
        fail(f"interrupted after {time.perf_counter() - started:.1f}s")
    except AdkEvalError as error:
        fail(str(error))
    printer.finish(results, json_path, fail_on, time.perf_counter() - started)


class _Printer:
    """One line per session as it finishes, and the explanation of those that changed."""

    def __init__(self, out: Any, verbose: bool) -> None:
        self.out = out
        self.verbose = verbose
        self.counts: Counter[str] = Counter()
        self.explained = 0

    def print(self, result: Any) -> None:
        self.counts[result.outcome] += 1
        style = _STYLE[result.outcome]
        note = "" if result.changed else "  (no difference)"
        self.out.print(f"[{style}]{result.outcome.upper():<8}[/] {result.name}{note}")
        self.explained += result.changed
        if self.verbose or (result.changed and self.explained <= _EXPLAINED):
            for line in result.explain().splitlines()[1:]:
                self.out.print(f"    {line}", markup=False)

    def finish(
        self, results: list[Any], json_path: Path | None, fail_on: tuple[str, ...], took: float
    ) -> None:
        """The summary line, the JSON report, and exit 1 on a `fail_on` outcome."""
        if not results:
            self.out.print("no stored session matched the filters")
        summary = ", ".join(f"{self.counts[o]} {o}" for o in _OUTCOMES)
        self.out.print(f"{len(results)} session(s): {summary} ({took:.1f}s)")
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
            self.out.print(f"wrote {json_path}")
        if any(self.counts[o] for o in set(fail_on or ("worse", "error"))):
            raise SystemExit(EXIT_FAILED)


def _prepare(
    sessions: str,
    agent_spec: str,
    metrics_spec: str | None,
    model_spec: str | None,
    filters: Filters,
) -> tuple[Any, Any, list[Any], Any, Any]:
    """The source (checked), agent, metrics, model and filters: each mistake one error line."""
    import anyio

    from .._errors import AdkEvalError
    from .._sources._source import open_sessions
    from ..production._loading import load_agent, load_model
    from ..production._metrics_file import load_metrics

    try:
        source = open_sessions(sessions)
        chosen = filters.build()
        agent = load_agent(agent_spec)
        metrics = load_metrics(metrics_spec) if metrics_spec else []
        model = load_model(model_spec) if model_spec else None
        anyio.run(source.check)
    except AdkEvalError as error:
        fail(str(error))
    return source, agent, metrics, model, chosen
