"""``adk-eval watch``: stored conversations scored as they finish, until stopped or a bound.

It reads what ``score`` reads, with the same filters (but ``--until``, which here
bounds the run, and ``--limit``) and the same reading flags (``--no-redact``,
``--concurrency``; ``--include-open`` scores a conversation stopped mid-turn as
soon as it is idle), and keeps its place in its own state file. A metrics file
binding ``conversation_finished(session) -> bool`` declares an end: a
conversation it says ended is scored at once, the others after ``--idle``. Its verdicts go
to a drop monitor, always, and to OTLP, Prometheus and a webhook when asked
(`_watch_outputs`). It prints one line per alert (or a JSON line), a summary line
at most every `_EVERY` seconds while conversations are scored, and a final
summary. A bounded run (``--until N`` conversations or a duration) exits 0, or 1
when an alert fired; so does a watch stopped with Ctrl-C.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from .. import __version__
from .._seeds import DEFAULT_SEED
from ._common import console, fail, grouped, host_and_port
from ._reading import Filters, Reading, reading_options
from ._watch_outputs import Outputs, output_options

__all__ = ["watch"]

_EVERY = 30.0
"""Seconds between the summary lines a watch prints while it scores."""

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds(value: str, flag: str) -> float:
    """``90``, ``90s``, ``3m``, ``1.5h`` or ``1d`` as seconds; a wrong value is one line."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", value.strip())
    if not found:
        fail(f"{flag} {value!r} is not a duration (90s, 3m, 1h)")
    return float(found.group(1)) * _UNITS[found.group(2) or "s"]


_BUDGET = re.compile(r"(?P<dollar>\$)?(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>calls?|tokens?|usd)?")
_KINDS = {"": "calls", "call": "calls", "calls": "calls", "token": "tokens", "tokens": "tokens"}


def budget(values: tuple[str, ...]) -> dict[str, Any]:
    """``--judge-budget``s as `watch_sessions`' judge limits; a wrong one is one line."""
    limits: dict[str, Any] = {}
    for value in values:
        found = _BUDGET.fullmatch(value.strip().lower())
        kind = None
        if found is not None:
            unit = found["unit"] or ""
            kind = "cost" if found["dollar"] or unit == "usd" else _KINDS[unit]
            if (found["dollar"] and unit not in ("", "usd")) or (
                kind != "cost" and "." in found["n"]
            ):
                kind = None
        if found is None or kind is None:
            fail(
                f"--judge-budget {value!r} is not a budget: give calls (200), tokens "
                "(50000tokens) or US dollars (2.50usd)"
            )
        if f"judge_{kind}_per_hour" in limits:
            fail(f"--judge-budget gives {kind} twice ({value!r}); give each kind once")
        number = float(found["n"])
        limits[f"judge_{kind}_per_hour"] = number if kind == "cost" else int(number)
    return limits


def bound(value: str | None) -> tuple[int | None, float | None]:
    """``--until``: a number of conversations (``500``) or a duration (``10m``)."""
    if value is None:
        return None, None
    if value.strip().isdigit():
        if int(value) < 1:
            fail(f"--until {value}: give at least 1 conversation, or a duration (10m)")
        return int(value), None
    return None, seconds(value, "--until")


watch_filter_options = grouped(
    "filters",
    Filters,
    click.option("--app", help="Only this app's sessions."),
    click.option("--user", help="Only this user's sessions."),
    click.option("--since", metavar="WHEN", help="Updated at or after WHEN (2026-11-18, 7d)."),
    click.option("--session", multiple=True, metavar="ID", help="Only this session (repeatable)."),
)
"""``score``'s filters but ``--until`` (the run's bound here) and ``--limit``."""


@click.command()
@click.argument("sessions")
@click.option(
    "--metrics",
    "metrics_spec",
    required=True,
    metavar="FILE[:NAME]",
    help="The metrics: every metric FILE binds at module level, or FILE's NAME.",
)
@click.option(
    "--idle",
    default="3m",
    show_default=True,
    metavar="DURATION",
    help="A conversation is finished once nothing was written to it for this long.",
)
@click.option(
    "--sample",
    type=click.FloatRange(0.0, 1.0),
    default=1.0,
    show_default=True,
    help="Share of conversations the judges read (cheap metrics read all).",
)
@click.option(
    "--seed", type=int, default=DEFAULT_SEED, show_default=True, help="The sample's seed."
)
@click.option(
    "--judge-budget",
    multiple=True,
    metavar="LIMIT",
    help="Judges' spend allowed in any hour: CALLS (200), TOKENS (50000tokens) or US "
    "dollars (2.50usd); repeatable (default: no limit).",
)
@click.option(
    "--state",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path(".adk_eval") / "watch.db",
    show_default=True,
    help="The watch's own state file: a restart resumes from it.",
)
@click.option(
    "--until",
    "until",
    metavar="N|DURATION",
    help="Stop after N conversations, or after DURATION (10m); exit 1 on an alert.",
)
@click.option(
    "--poll",
    default="5s",
    show_default=True,
    metavar="DURATION",
    help="Time between two reads of the source.",
)
@click.option(
    "--collect",
    metavar="HOST:PORT",
    help="Also receive the app's spans over OTLP/HTTP here (port 0: any free one), into "
    "SESSIONS (adk-spans:PATH), and watch them as they arrive.",
)
@output_options
@watch_filter_options
@reading_options(
    "score",
    seen="any metric, judge or verdict sees them",
    concurrency=(8, "Conversations scored at once."),
)
def watch(
    sessions: str,
    metrics_spec: str,
    idle: str,
    sample: float,
    seed: int,
    judge_budget: tuple[str, ...],
    state: Path,
    until: str | None,
    poll: str,
    collect: str | None,
    outputs: Outputs,
    filters: Filters,
    reading: Reading,
) -> None:
    """Watch stored sessions and score each as it finishes (an ADK session store, traces).

    SESSIONS: sqlite:///PATH, postgresql://USER:PASSWORD@HOST:PORT/DB, otlp:PATH or
    adk-spans:PATH (a collector's span file; with --collect, the one it writes). A
    store is only ever read.
    """
    count, duration = bound(until)
    idle_s, poll_s = seconds(idle, "--idle"), seconds(poll, "--poll")
    # with --json-alerts stdout holds the alerts alone, for jq or a log shipper
    out = (
        Console(highlight=False, soft_wrap=True, stderr=True) if outputs.json_alerts else console()
    )
    collector = None if collect is None else _collector(sessions, collect, outputs, out)
    try:
        _watch(out, sessions, metrics_spec, filters, outputs, reading, state, idle, {
            "idle": idle_s, "sample": sample, "seed": seed, **budget(judge_budget),
            "state": state, "until": count, "duration": duration, "poll": poll_s,
        })  # fmt: skip
    finally:
        if collector is not None:
            out.print(f"collector stopped: {collector.stop().summary()}", highlight=False)


def _watch(
    out: Any,
    sessions: str,
    metrics_spec: str,
    filters: Filters,
    outputs: Outputs,
    reading: Reading,
    state: Path,
    idle: str,
    settings: dict[str, Any],
) -> None:
    """The watch itself, once its collector (if any) listens; exits with its code."""
    source, chosen, metrics, finished = _prepare(sessions, metrics_spec, filters)
    out.print(
        f"adk-eval {__version__}: watching {source.description} with {len(metrics)} metric(s): "
        f"{', '.join(m.name for m in metrics)} (read-only; state in {state})"
    )
    if finished is not None:
        out.print(f"a conversation also ends when {metrics_spec.partition(':')[0]}'s "
                  f"`{finished.__name__}` says so (or after --idle {idle})")  # fmt: skip
    settings.update(
        filters=chosen,
        max_concurrency=reading.concurrency,
        redactor=reading.redactor(),
        finished=finished,
        **({"open_for": 0.0} if reading.include_open else {}),
    )
    from ..production._watch._alerts import exit_code

    try:
        summary = _run(out, source, metrics, settings, outputs)
    finally:
        outputs.close()
    out.print(f"watched: {summary.line()}", highlight=False)
    raise SystemExit(exit_code(summary.alerts))


def _collector(sessions: str, address: str, outputs: Outputs, out: Any) -> Any:
    """A collector receiving spans into the watched spans file, started; or one line."""
    from .._errors import EvalSetupError
    from .._sources._spans._collector import SpanCollector

    scheme, _, path = sessions.partition(":")
    if scheme != "adk-spans" or not path:
        fail(
            f"--collect writes the spans it receives to a spans file and watches it: give "
            f"SESSIONS as adk-spans:PATH (a file it creates or appends to), not {sessions!r}"
        )
    host, port = host_and_port(address, "--collect", "127.0.0.1:4318")
    collector = SpanCollector(path, host=host, port=port, allow_remote=outputs.allow_remote)
    try:
        collector.start()
    except EvalSetupError as error:
        fail(f"--collect: {error}")
    except OSError as error:
        fail(f"--collect {address}: cannot listen there ({error.strerror or error})")
    out.print(
        f"collecting: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={collector.endpoint}/v1/traces "
        f"(spans go to {path})",
        markup=False,
        highlight=False,
    )
    return collector


def _run(
    out: Any, source: Any, metrics: list[Any], settings: dict[str, Any], outputs: Outputs
) -> Any:
    """`watch_sessions` with the command's settings and outputs, printing summaries."""
    import anyio

    from .._errors import AdkEvalError
    from ..production._watch._loop import watch_sessions
    from ..production._watch._summary import WatchSummary

    consumers, on_alert = outputs.open(out)

    last = {"at": time.monotonic(), "scored": 0}
    seen = WatchSummary()

    def on_poll(summary: Any) -> None:
        nonlocal seen
        seen = summary
        outputs.follow(summary)
        if summary.scored != last["scored"] and time.monotonic() - last["at"] >= _EVERY:
            out.print(f"so far: {summary.line()}", highlight=False)
            last.update(at=time.monotonic(), scored=summary.scored)

    async def go() -> Any:
        return await watch_sessions(
            source, metrics, on_verdict=consumers, on_alert=on_alert, on_poll=on_poll, **settings
        )

    try:
        seen = anyio.run(go)
        outputs.follow(seen)
        return seen
    except KeyboardInterrupt:
        out.print(f"stopped; the state file keeps the place ({settings['state']})")
        return seen
    except AdkEvalError as error:
        fail(str(error))


def _prepare(sessions: str, metrics_spec: str, filters: Filters) -> tuple[Any, Any, list[Any], Any]:
    """The source (checked), the filters, the metrics and the declared end (or None).

    A source that cannot be read, a wrong filter or metrics file: one line.
    """
    import anyio

    from .._errors import AdkEvalError
    from .._sources._specs import open_sessions
    from ..production._metrics_file import load_end, load_metrics

    try:
        source = open_sessions(sessions)
        chosen = filters.build()
        metrics = load_metrics(metrics_spec)
        finished = load_end(metrics_spec)
        anyio.run(source.check)
    except AdkEvalError as error:
        fail(str(error))
    return source, chosen, metrics, finished
