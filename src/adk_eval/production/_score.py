"""Scoring stored sessions: the same metrics as simulated runs, streamed, concurrently.

`score_sessions(source, metrics)` reads the sessions of a `SessionSource` one
batch at a time, scores each with `score_session`'s code (the metrics read only
events and state), and returns an `EvalSuiteResult`, so the summary table, the
JSON, JUnit and HTML reports, the runs database, ``compare`` and ``view`` work on
it as on a suite of simulated runs. Each session is one run, named
``app/user/session-id``.

Memory stays flat: a session is dropped once scored; a run keeps its events and
final state only when it did not pass (for its explanation), and at most
`KEEP_EVENTS` of those; the others keep their verdicts.

A metric with ``needs_simulation = True`` (it reads what only a simulated run
has: the mocks' records, the simulated users' events) is not applicable on a
stored session, and says so, instead of failing on what is not there.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._result import EvalResult, run_status
from .._state import scoped_view
from .._suites._results import EvalSuiteResult, suite_from_results
from .._trace import EvalTrace
from ..metrics._scoring import score_trace
from ..metrics._types import Metric, MetricResult
from ._sources import SessionFilter, SessionSource

__all__ = ["KEEP_EVENTS", "score_sessions", "session_name"]

KEEP_EVENTS = 200
"""Runs that did not pass and keep their events (for explanations and reports)."""


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
) -> EvalSuiteResult:
    """Scores the stored sessions of `source` that pass `filters` with `metrics`.

    Args:
        source: Where the sessions are (`open_sessions`).
        metrics: The metrics, as cases use them.
        filters: Which sessions (all by default).
        max_concurrency: Sessions scored at once (judges wait on models).
        on_result: Called with each run and its session as it is scored, in the
            order they finish (the session is gone afterwards: export it here).

    Raises:
        EvalSetupError: The source cannot be read (one line naming it).
    """
    filters = filters or SessionFilter()
    started = time.perf_counter()
    results: list[EvalResult] = []
    names: list[str] = []
    kept = 0
    send, receive = anyio.create_memory_object_stream[Session](max_concurrency)

    async def score(session: Session) -> None:
        nonlocal kept
        result = await score_stored(session, metrics)
        if on_result is not None:
            outcome = on_result(result, session)
            if outcome is not None:
                await outcome
        if not result.passed and kept < KEEP_EVENTS:
            kept += 1
        else:  # its verdicts stay; its conversation and state go with the session
            result = dataclasses.replace(result, events=(), final_state={})
        results.append(result)

    async def worker(sessions: MemoryObjectReceiveStream[Session]) -> None:
        async with sessions:
            async for session in sessions:
                await score(session)

    problems: list[EvalSetupError] = []
    async with anyio.create_task_group() as group:
        for _ in range(max_concurrency):
            group.start_soon(worker, receive.clone())
        receive.close()
        async with send:
            try:
                async for session in source.sessions(filters):
                    names.append(session_name(session))
                    await send.send(session)
            except EvalSetupError as error:  # the store: raised as it is, not in a group
                problems.append(error)
                group.cancel_scope.cancel()
    if problems:
        raise problems[0]
    return suite_from_results(
        results,
        case_names=names,
        repeat=1,
        duration_ms=(time.perf_counter() - started) * 1000,
        stopped_early=False,
        seed=None,
    )


async def score_stored(session: Session, metrics: Sequence[Metric]) -> EvalResult:
    """One stored session scored as a run (see the module doc)."""
    began = time.perf_counter()
    trace = EvalTrace.from_session(session, case_name=session_name(session))
    simulated_only = {id(m) for m in metrics if getattr(m, "needs_simulation", False)}
    scored, _ = await score_trace([m for m in metrics if id(m) not in simulated_only], trace)
    results: dict[str, MetricResult] = {}
    for metric in metrics:
        if id(metric) in simulated_only:
            results[metric.name] = MetricResult(passed=False, evidence=[]).not_applicable(
                "not applicable: it reads what only a simulated run has (mocks, simulated "
                "users); a stored session has none"
            )
        else:
            results[metric.name] = scored[metric.name]
    updated = datetime.fromtimestamp(session.last_update_time, tz=UTC)
    return EvalResult(
        name=session_name(session),
        status=run_status(None, None, results),
        metrics=results,
        events=tuple(session.events),
        duration_ms=(time.perf_counter() - began) * 1000,
        turns=sum(1 for e in session.events if e.author == "user" and e.content is not None),
        final_state=scoped_view(session.state),
        agent_name=session.app_name,
        description=f"stored session of user {session.user_id} in app {session.app_name}, "
        f"last updated {updated.isoformat(timespec='seconds')}",
    )
