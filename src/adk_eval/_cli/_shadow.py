"""``adk-eval shadow``: a candidate agent replayed against stored conversations, safely.

Its options arrive grouped (`grouped`): the candidate (`Candidate`), which sessions
(`Filters`), how they are read (`Reading`) and what the command says and when it
fails (`Verdicts`). It imports the harness, ADK and the store's driver inside the
command, when it runs.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import click

from .. import __version__
from .._lazy import imports_without_collections
from ._common import EXIT_FAILED, console, fail, grouped
from ._reading import (
    Filters,
    Reading,
    print_named,
    print_open,
    reading_options,
    session_filter_options,
)

__all__ = ["Candidate", "Verdicts", "shadow"]

_OUTCOMES = ("same", "better", "worse", "diverged", "error")
_STYLE = {"same": "green", "better": "cyan", "worse": "red", "diverged": "yellow", "error": "red"}
_EXPLAINED = 50
"""Sessions explained in full (those with a difference), unless ``-v``."""


@dataclass(frozen=True)
class Candidate:
    """The agent replayed, what scores it, and who plays the user after a divergence.

    Attributes:
        agent_spec: ``LOCATION[:NAME]`` of the agent, App or Workflow.
        metrics_spec: ``FILE[:NAME]`` of the metrics (None: none).
        model_spec: The model that plays the user once a conversation diverges
            (None: the replay stops there).
    """

    agent_spec: str
    metrics_spec: str | None = None
    model_spec: str | None = None

    def load(self) -> tuple[Any, list[Any], Any]:
        """The agent, metrics and model (`AdkEvalError`, one line, for each mistake)."""
        from ..production._loading import load_agent, load_model
        from ..production._metrics_file import load_metrics

        agent = load_agent(self.agent_spec)
        metrics = load_metrics(self.metrics_spec) if self.metrics_spec else []
        model = load_model(self.model_spec) if self.model_spec else None
        return agent, metrics, model


candidate_options = grouped(
    "candidate",
    Candidate,
    click.option(
        "--agent",
        "agent_spec",
        required=True,
        metavar="LOCATION[:NAME]",
        help="The candidate: a file or module and its agent, App or Workflow "
        "(default NAME: root_agent, then app).",
    ),
    click.option(
        "--metrics",
        "metrics_spec",
        metavar="FILE[:NAME]",
        help="Metrics scored on the recording and the new run (every metric FILE binds, or NAME).",
    ),
    click.option(
        "--continue-with",
        "model_spec",
        metavar="MODEL",
        help="When a conversation leaves the recording, this model plays the user from there "
        "(a model name, or LOCATION:NAME of a model object); default: stop and report it.",
    ),
)
"""``--agent``, ``--metrics``, ``--continue-with``, handed to the command as ``candidate``."""


@dataclass(frozen=True)
class Verdicts:
    """What the command says of each session, where it writes them, and when it fails.

    Attributes:
        fail_on: The outcomes that make the command exit 1 (none given: worse, error).
        json_path: Where every comparison is written as JSON (None: not written).
        verbose: Explain every session, not only those with a difference.
    """

    fail_on: tuple[str, ...] = ()
    json_path: Path | None = None
    verbose: bool = False


verdict_options = grouped(
    "verdicts",
    Verdicts,
    click.option(
        "--fail-on",
        type=click.Choice(["worse", "error", "diverged", "better"]),
        multiple=True,
        metavar="OUTCOME",
        help="Exit 1 when a session has this outcome (repeatable; default: worse and error).",
    ),
    click.option(
        "--json",
        "json_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write every session's comparison to this JSON file.",
    ),
    click.option("-v", "--verbose", is_flag=True, help="Explain every session, not only changes."),
)
"""``--fail-on``, ``--json``, ``-v``, handed to the command as ``verdicts``."""


@click.command()
@click.argument("sessions")
@candidate_options
@session_filter_options
@reading_options(
    "replay",
    seen="the candidate's models see them",
    concurrency=(4, "Sessions replayed at once."),
)
@verdict_options
def shadow(
    sessions: str,
    candidate: Candidate,
    filters: Filters,
    reading: Reading,
    verdicts: Verdicts,
) -> None:
    """Replay a candidate agent against stored sessions and compare it with what happened.

    Recorded tool responses answer the candidate's tool calls (no tool body runs), and
    recorded user turns are the user. SESSIONS is as for `adk-eval score`; only read.
    """
    import anyio

    with imports_without_collections():
        from .._errors import AdkEvalError
        from ..production._shadow import shadow_sessions

    out = console()
    source, agent, metrics, model, chosen = _prepare(sessions, candidate, filters)
    names = ", ".join(m.name for m in metrics) or "none"
    then = f"continue with {candidate.model_spec}" if model else "stop"
    out.print(
        f"adk-eval {__version__}: shadow-replaying the sessions of {source.description} "
        f"with the agent of {candidate.agent_spec} (read-only); metrics: {names}; when a "
        f"conversation leaves the recording: {then}"
    )
    printer = _Printer(out, verdicts.verbose)
    started = time.perf_counter()
    replaying = partial(
        shadow_sessions,
        source,
        agent,
        metrics=metrics,
        filters=chosen,
        continue_with=model,
        max_concurrency=reading.concurrency,
        on_result=printer.print,
        redactor=reading.redactor(),
        include_open=reading.include_open,
    )
    try:
        results = anyio.run(replaying)
    except KeyboardInterrupt:
        fail(f"interrupted after {time.perf_counter() - started:.1f}s")
    except AdkEvalError as error:
        fail(str(error))
    _left_out(out, results.counts, reading.include_open)
    printer.finish(results, verdicts, time.perf_counter() - started)


def _left_out(out: Any, counts: Any, include_open: bool) -> None:
    """What the replay left out, and what its source said (`notes`)."""
    for note in counts.notes:
        out.print(note, markup=False, highlight=False)
    if counts.opened.count:
        named = [f"{name}: {why}" for name, why in counts.opened.first]
        print_open(out, named, counts.opened.count, include_open, "replays", "replayed")
    if counts.lacking.count:
        heading = (
            f"{counts.lacking.count} conversation(s) left out: their source carries no words "
            "to replay (content capture was off):"
        )
        print_named(out, heading, counts.lacking.first, counts.lacking.count)


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

    def finish(self, results: Any, verdicts: Verdicts, took: float) -> None:
        """The summary line, the JSON report, and exit 1 on a `fail_on` outcome."""
        json_path, fail_on = verdicts.json_path, verdicts.fail_on
        left = results.counts.opened.count + results.counts.lacking.count
        if not (results or left):
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
    sessions: str, candidate: Candidate, filters: Filters
) -> tuple[Any, Any, list[Any], Any, Any]:
    """The source (checked), agent, metrics, model and filters: each mistake one error line."""
    import anyio

    from .._errors import AdkEvalError
    from .._sources._specs import open_sessions

    try:
        source = open_sessions(sessions)
        chosen = filters.build()
        agent, metrics, model = candidate.load()
        anyio.run(source.check)
    except AdkEvalError as error:
        fail(str(error))
    return source, agent, metrics, model, chosen
