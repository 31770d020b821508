"""Scoring stored conversations: the same metrics as simulated runs, streamed, concurrently.

`score_sessions(source, metrics)` reads the stored conversations of a
`SessionSource` (`StoredConversations`: redacted, open ones and unreadable ones
left out, counted and named), scores each with `score_session`'s code (the
metrics read only events and state), and returns a `StoreScore`: an
`EvalSuiteResult`, so the summary table, the JSON, JUnit and HTML reports, the
runs database, ``compare`` and ``view`` work on it as on a suite of simulated
runs. Each conversation is one run, named ``app/user/session-id``.

Memory stays flat: a conversation is dropped once scored, and the score keeps
counts and a bounded number of runs (see `_tally`).

The judges' model calls follow the project's settings (``[tool.adk-eval.limits]``)
through one `Gateway`: each conversation gets a gate of its own (its wait
budget), and all of them wait in the gateway's one pacer, so a limit holds
across the conversations scored at once.

Two kinds of session are left out, counted and named:

* an **open** conversation, still being written (see `_sources._open`), unless
  ``include_open``: scored then, and said to be open in its description;
* a session whose rows cannot be read (a malformed row): skipped, unless
  ``strict``, which stops the score there.

A metric with ``needs_simulation = True`` (it reads what only a simulated run
has: the mocks' records, the simulated users' events) is not applicable on a
stored conversation, and says so, instead of failing on what is not there; so is
a metric that ``needs`` what the conversation's source lacks (a trace's state).
Each conversation is one trace: the metrics score it, and its run holds it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._result import EvalResult, run_status
from .._sources._files import OnUnreadable, Unreadable
from .._sources._filter import SessionFilter
from .._sources._open import OPEN_FOR
from .._sources._redact._redactor import Redactor
from .._sources._source import SessionSource
from .._sources._stored import StoredConversation, StoredConversations
from .._trace import EvalTrace
from ..metrics._scoring import score_trace
from ..metrics._types import Metric, MetricResult
from ..models._gateway._gate import Gateway, gating
from ._tally import KEEP_EVENTS, KEEP_RUNS, StoreScore, Tally

__all__ = ["KEEP_EVENTS", "KEEP_RUNS", "StoreScore", "score_sessions", "score_stored"]


async def score_sessions(
    source: SessionSource,
    metrics: Sequence[Metric],
    *,
    filters: SessionFilter | None = None,
    max_concurrency: int = 8,
    on_result: Callable[[EvalResult, Session], Awaitable[None] | None] | None = None,
    strict: bool = False,
    include_open: bool = False,
    open_for: float = OPEN_FOR,
    keep: int | None = KEEP_RUNS,
    redactor: Redactor | None = None,
) -> StoreScore:
    """Scores the stored conversations of `source` that pass `filters` with `metrics`.

    Args:
        source: Where the sessions are (`open_sessions`).
        metrics: The metrics, as cases use them.
        filters: Which sessions (all by default).
        max_concurrency: Conversations scored at once (judges wait on models).
        on_result: Called with each run and its (redacted) session as it is scored,
            in the order they finish (the session is gone afterwards: export it here).
        strict: Stop at the first session that cannot be read, instead of skipping it.
        include_open: Score open conversations (still being written) too.
        open_for: Seconds after its last update that a conversation stopped
            mid-turn counts as open (see `still_open`).
        keep: Runs the score lists, at most (None: every run); all are counted.
        redactor: Redacts each session before anything reads it (default: the
            built-in kinds; `Redactor.none()`: as stored).

    Raises:
        EvalSetupError: The source cannot be read, or (`strict`) a session of it
            cannot: one line naming it; a negative `keep`.
        AdkEvalError: `on_result` raised one (it stops the score, as it is).
    """
    started = time.perf_counter()
    tally, gateway = Tally(keep), Gateway.alone()
    stop = _stop(source.description) if strict else None
    stream = StoredConversations(
        source,
        filters,
        redactor=redactor,
        include_open=include_open,
        open_for=open_for,
        unreadable=stop,
    )

    async def score(index: int, stored: StoredConversation) -> None:
        result = await score_stored(stored, metrics, gateway)
        outcome = on_result(result, stored.session) if on_result is not None else None
        if outcome is not None:
            await outcome
        tally.add(index, result)

    await stream.each(score, max_concurrency)
    return tally.score((time.perf_counter() - started) * 1000, stream.counts)


def _why_not(metric: Metric, lacks: frozenset[str]) -> str | None:
    """Why `metric` is not applicable to a stored session lacking `lacks`, or None."""
    if getattr(metric, "needs_simulation", False):
        return (
            "not applicable: it reads what only a simulated run has (mocks, simulated "
            "users); a stored session has none"
        )
    missing = sorted(frozenset(getattr(metric, "needs", ())) & lacks)
    if missing:
        return f"not applicable: it reads the {' and '.join(missing)}, which this trace lacks"
    return None


def _stop(source: str) -> OnUnreadable:
    """`strict`: an unreadable session stops the score, naming it."""

    def stop(found: Unreadable) -> None:
        raise EvalSetupError(
            f"stopped at stored session `{found.name}` of {source}, which cannot be read "
            f"(strict): {found.reason}"
        )

    return stop


async def score_stored(
    stored: StoredConversation, metrics: Sequence[Metric], gateway: Gateway | None = None
) -> EvalResult:
    """One stored conversation scored as a run (see the module doc).

    A metric that reads what `stored` lacks, or what only a simulated run has, is
    not applicable; the others score its one trace, which its run holds. Their
    model calls go through a gate of its own on `gateway` (None: one of its own).
    """
    began = time.perf_counter()
    session = stored.session
    trace = EvalTrace.from_session(session, case_name=stored.name)
    skipped = {id(m): why for m in metrics if (why := _why_not(m, stored.lacks)) is not None}
    gate = (gateway if gateway is not None else Gateway.alone()).call_gate()
    with gating(gate):
        scored, _ = await score_trace([m for m in metrics if id(m) not in skipped], trace)
    results: dict[str, MetricResult] = {}
    for metric in metrics:
        if id(metric) in skipped:
            results[metric.name] = MetricResult(passed=False, evidence=[]).not_applicable(
                skipped[id(metric)]
            )
        else:
            results[metric.name] = scored[metric.name]
    updated = datetime.fromtimestamp(session.last_update_time, tz=UTC)
    return EvalResult.from_fields(
        stored.name,
        run_status(None, None, results),
        trace=trace,
        metrics=results,
        usage=tuple(gate.meter.usage()),  # the judges' calls (the session's own are in it)
        duration_ms=(time.perf_counter() - began) * 1000,
        turns=sum(1 for e in session.events if e.author == "user" and e.content is not None),
        agent_name=session.app_name,
        description=f"stored session of user {session.user_id} in app {session.app_name}, "
        f"last updated {updated.isoformat(timespec='seconds')}"
        + (f"; open: {stored.opened}" if stored.opened else ""),
    )
