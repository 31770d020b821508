"""Scoring stored sessions: the same metrics as simulated runs, streamed, concurrently.

`score_sessions(source, metrics)` reads the sessions of a `SessionSource` one
batch at a time, scores each with `score_session`'s code (the metrics read only
events and state), and returns a `StoreScore`: an `EvalSuiteResult`, so the
summary table, the JSON, JUnit and HTML reports, the runs database, ``compare``
and ``view`` work on it as on a suite of simulated runs. Each session is one
run, named ``app/user/session-id``.

Memory stays flat: a session is dropped once scored, and the score keeps counts
and a bounded number of runs (see `_tally`).

Two kinds of session are left out, counted and named:

* an **open** conversation, still being written (see `_open`), unless
  ``include_open``: scored then, and said to be open in its description;
* a session whose rows cannot be read (a malformed row): skipped, unless
  ``strict``, which stops the score there.

A metric with ``needs_simulation = True`` (it reads what only a simulated run
has: the mocks' records, the simulated users' events) is not applicable on a
stored session, and says so, instead of failing on what is not there.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from google.adk.sessions import Session

from .._errors import AdkEvalError, EvalSetupError
from .._result import EvalResult, run_status
from .._sources._files import OnUnreadable, Unreadable
from .._sources._filter import SessionFilter
from .._sources._open import OPEN_FOR, still_open
from .._sources._redact._redactor import Redactor, redact_session
from .._sources._source import SessionSource
from .._state import scoped_view
from .._trace import EvalTrace
from ..metrics._scoring import score_trace
from ..metrics._types import Metric, MetricResult
from ._tally import KEEP_EVENTS, KEEP_RUNS, StoreScore, Tally

__all__ = ["KEEP_EVENTS", "KEEP_RUNS", "StoreScore", "score_sessions", "session_name"]


def session_name(session: Session) -> str:
    """A stored session's run name: ``app/user/session-id``."""
    return f"{session.app_name}/{session.user_id}/{session.id}"


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
    """Scores the stored sessions of `source` that pass `filters` with `metrics`.

    Args:
        source: Where the sessions are (`open_sessions`).
        metrics: The metrics, as cases use them.
        filters: Which sessions (all by default).
        max_concurrency: Sessions scored at once (judges wait on models).
        on_result: Called with each run and its session as it is scored, in the
            order they finish (the session is gone afterwards: export it here).
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
    started, now = time.perf_counter(), time.time()
    tally = Tally(keep)
    redactor = redactor if redactor is not None else Redactor()
    problems: list[AdkEvalError] = []
    send, receive = anyio.create_memory_object_stream[tuple[int, Session, str | None]](
        max_concurrency
    )

    async def worker(sessions: MemoryObjectReceiveStream[tuple[int, Session, str | None]]) -> None:
        async with sessions:
            async for index, session, opened in sessions:
                session = _redacted(session, redactor, tally)
                lacks = lacks_of(session) if lacks_of is not None else frozenset()
                result = await score_stored(session, metrics, opened=opened, lacks=lacks)
                try:
                    outcome = on_result(result, session) if on_result is not None else None
                    if outcome is not None:
                        await outcome
                except AdkEvalError as error:  # raised as it is, not in a group
                    problems.append(error)
                    group.cancel_scope.cancel()
                    return
                tally.add(index, result)

    skip = _stop(source.description) if strict else tally.skipped
    lacks_of: Callable[[Session], frozenset[str]] | None = getattr(source, "lacks_of", None)
    async with anyio.create_task_group() as group:
        for _ in range(max_concurrency):
            group.start_soon(worker, receive.clone())
        receive.close()
        async with send:
            try:
                index = 0
                async for session in source.sessions(filters, unreadable=skip):
                    opened = still_open(session, now, open_for)
                    if opened is not None:
                        tally.opened(session_name(session), opened)
                        if not include_open:
                            continue
                    await send.send((index, session, opened))
                    index += 1
            except EvalSetupError as error:  # the store: raised as it is, not in a group
                problems.append(error)
                group.cancel_scope.cancel()
    if problems:
        raise problems[0]
    return tally.score((time.perf_counter() - started) * 1000)


def _redacted(session: Session, redactor: Redactor, tally: Tally) -> Session:
    """`session` redacted (what was replaced added to `tally`), or as it is."""
    if not redactor.enabled:
        return session
    session, found = redact_session(session, redactor)
    tally.redacted = found if tally.redacted is None else tally.redacted + found
    return session


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
    session: Session,
    metrics: Sequence[Metric],
    *,
    opened: str | None = None,
    lacks: frozenset[str] = frozenset(),
) -> EvalResult:
    """One stored session scored as a run (see the module doc).

    Args:
        session: The stored session.
        metrics: What to score.
        opened: Why it is open, if it is.
        lacks: Facts its source does not carry (``"state"``, ``"content"``: a
            trace's); a metric that ``needs`` one is not applicable.
    """
    began = time.perf_counter()
    trace = EvalTrace.from_session(session, case_name=session_name(session))
    skipped = {id(m): why for m in metrics if (why := _why_not(m, lacks)) is not None}
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
        name=session_name(session),
        status=run_status(None, None, results),
        metrics=results,
        events=tuple(session.events),
        duration_ms=(time.perf_counter() - began) * 1000,
        turns=sum(1 for e in session.events if e.author == "user" and e.content is not None),
        final_state=scoped_view(session.state),
        agent_name=session.app_name,
        description=f"stored session of user {session.user_id} in app {session.app_name}, "
        f"last updated {updated.isoformat(timespec='seconds')}"
        + (f"; open: {opened}" if opened else ""),
    )
