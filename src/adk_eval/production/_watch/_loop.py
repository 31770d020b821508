"""The watch loop: stored conversations scored as they finish, once, within a judge budget.

`watch_sessions(source, metrics, ...)` polls a source that grows (an ADK session
store, read-only as `score` reads it; a collector's span file) every `poll`
seconds. Each poll reads, through the one stream of stored conversations
(`StoredConversations`: redacted, open ones told by `_sources._open`), the
conversations last updated since the store was settled (see `_state`) and at
least `idle` seconds ago:

* a conversation is **finished** when nothing was written to it for `idle`
  seconds, or as soon as the `finished` function (a metrics file's
  ``conversation_finished``) says it ended, and it is not open (an agent stopped
  mid-turn in the last `open_for` seconds may still be running a tool): it is
  left for a later poll otherwise;
* a finished conversation is scored once; it is scored again only when its mark
  (last update time, number of events) moved, and the state file says which
  marks were scored, so a restart repeats nothing and loses nothing;
* cheap metrics score every conversation; judges only the seeded sample, within
  the judge budget per hour (`_sample`); what was left out is counted.

Each metric's verdict becomes a `WatchVerdict`, handed to every `on_verdict`
consumer once its conversation is committed to the state file: scored
conversations are committed in groups (`GROUP` of them, or after `GROUP_WAIT`
seconds, and at the end of each poll), then their verdicts handed on, with no
await in between: a watch cancelled there has done both or neither. A consumer may
return an `Alert` (or several): they are handed to `on_alert` and listed in the
summary, and a bounded run (`until`, `duration`) that raised one ends with its
`alerts` non-empty (``adk-eval watch`` exits 1).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from google.adk.sessions import Session

from ..._errors import AdkEvalError, EvalSetupError
from ..._result import EvalResult
from ..._seeds import DEFAULT_SEED
from ..._sources._filter import SessionFilter
from ..._sources._open import OPEN_FOR
from ..._sources._redact._redactor import Redactor
from ..._sources._source import SessionSource
from ..._sources._stored import StoredConversation, StoredConversations
from ...metrics._types import Metric
from ...models._gateway._gate import Gateway
from .._score import score_stored
from ._sample import JudgeBudget, is_judge, sampled
from ._state import WatchState
from ._summary import WatchSummary
from ._verdict import Alert, WatchVerdict

__all__ = ["OnVerdict", "WatchSummary", "watch_sessions"]

LATE_COMMIT = 10.0
"""Seconds a store may take to commit a write after stamping its update time (at
least): each poll reads this far behind the settled mark, or one idle time if longer,
so a late commit is still scored; what was scored as it is is skipped by its mark."""

GROUP = 200
"""Conversations committed together at most (one commit costs about as much as scoring one)."""

GROUP_WAIT = 1.0
"""Seconds a scored conversation waits at most for its group's commit (and its verdicts)."""

_TRACE_KEY = re.compile(r"trace:[0-9a-f]{32}")

_NO_LOCK = contextlib.nullcontext()

OnVerdict = Callable[[WatchVerdict], "Alert | Iterable[Alert] | None"]
"""A consumer of verdicts: it may return an alert, or several, or None."""


@dataclass
class _Watch:
    """One watch's settings and what it has done (see `watch_sessions`)."""

    source: SessionSource
    metrics: Sequence[Metric]
    state: WatchState
    budget: JudgeBudget
    filters: SessionFilter
    idle: float
    sample: float
    seed: int
    until: int | None
    open_for: float
    redactor: Redactor | None
    consumers: Sequence[OnVerdict]
    on_alert: Callable[[Alert], None] | None
    clock: Callable[[], float]
    finished: Callable[[Session], bool] | None = None
    summary: WatchSummary = field(default_factory=WatchSummary)
    gateway: Gateway = field(default_factory=Gateway.alone)
    started: int = 0
    _one_judged: anyio.Lock = field(default_factory=anyio.Lock)
    pending: list[tuple[list[WatchVerdict], bool]] = field(default_factory=list)
    flushed: float = field(default_factory=time.monotonic)

    @property
    def done(self) -> bool:
        return self.until is not None and self.summary.scored >= self.until

    async def run(
        self,
        at_once: int,
        every: float,
        duration: float | None,
        on_poll: Callable[[WatchSummary], None] | None,
    ) -> WatchSummary:
        """Polls every `every` seconds until `until` conversations or `duration` seconds."""
        deadline = None if duration is None else time.monotonic() + duration
        while True:
            await self.poll(at_once)
            if on_poll is not None:
                on_poll(self.summary)
            left = None if deadline is None else deadline - time.monotonic()
            if self.done or (left is not None and left <= 0):
                return self.summary
            await anyio.sleep(every if left is None else min(every, left))

    async def poll(self, at_once: int) -> None:
        """Reads what changed since the store was settled and scores what finished."""
        now = self.clock()
        horizon = now - self.idle
        stream = StoredConversations(
            self.source,
            # a declared end can finish a conversation before its idle time: read up to now
            self._window(horizon if self.finished is None else now),
            redactor=self.redactor,
            include_open=True,
            open_for=self.open_for,
        )
        oldest_open = [horizon]
        self.summary.open = 0

        async def work(_: int, stored: StoredConversation) -> None:
            if stored.opened is not None:
                self.summary.open += 1
                oldest_open.append(stored.session.last_update_time)
                return
            if stored.session.last_update_time > horizon and not self._ended(stored):
                oldest_open.append(stored.session.last_update_time)  # not idle yet
                return
            await self.one(stored)

        await stream.each(work, at_once)
        self.flush()
        self.summary.polls += 1
        self.summary.unreadable += stream.counts.unreadable.count
        if self.until is None or self.started < self.until:
            self.state.settle(min(oldest_open))  # (a bounded run that stopped early: not yet)

    def _ended(self, stored: StoredConversation) -> bool:
        """Whether the declared end says `stored` ended (False without one)."""
        if self.finished is None:
            return False
        try:
            return bool(self.finished(stored.session))
        except Exception as error:
            raise EvalSetupError(
                f"the declared end {getattr(self.finished, '__name__', self.finished)!r} "
                f"raised {type(error).__name__} on {stored.name}: {error}"
            ) from error

    def _window(self, horizon: float) -> SessionFilter:
        """The user's filters, narrowed to what finished since the store was settled."""
        settled = self.state.settled
        since = self.filters.since
        if settled is not None:
            # a window back: a write committed late (a loaded machine) still has its update time
            back = max(self.idle, LATE_COMMIT)
            since = max(since if since is not None else settled, settled - back)
        until = horizon if self.filters.until is None else min(horizon, self.filters.until)
        return dataclasses.replace(self.filters, since=since, until=until, limit=None)

    async def one(self, stored: StoredConversation) -> None:
        """Scores `stored` unless it was scored as it is; records it, hands its verdicts on."""
        session = stored.session
        mark = (session.last_update_time, len(session.events))
        before = self.state.mark_of(stored.name)
        if (self.until is not None and self.started >= self.until) or (
            before is not None and before >= mark
        ):
            return
        self.started += 1
        result, judged = await self._score(stored)
        at = self.clock()  # from here on, no await: recorded, or not at all
        verdicts = _verdicts(result, stored, at, judged)
        self.state.journal.conversation(stored, result, verdicts)
        self.state.record(stored.name, mark, at)
        self.pending.append((verdicts, before is not None))
        if len(self.pending) >= GROUP or time.monotonic() - self.flushed >= GROUP_WAIT:
            self.flush()

    def flush(self) -> None:
        """Commits what was scored since the last flush, then hands its verdicts on.

        No await: a watch cancelled before it has handed on nothing of the group,
        and its rows (never committed) are scored again by the next watch.
        """
        if not self.pending:
            return
        self.state.commit()
        pending, self.pending = self.pending, []
        self.flushed = time.monotonic()
        for verdicts, again in pending:
            self.summary.scored += 1
            self.summary.rescored += again
            for verdict in verdicts:
                self.summary.verdicts += 1
                self.summary.failed += verdict.passed is False
                self._hand_on(verdict)

    async def _score(self, stored: StoredConversation) -> tuple[EvalResult, bool]:
        """Cheap metrics always; judges when sampled and affordable (counted otherwise).

        Under a token or dollar budget, judged conversations are judged one at a
        time: what a judge used is known only once it answered, so the budget is
        passed by one conversation's judges at most.
        """
        judges = self._judges
        if not judges or not sampled(stored.name, self.seed, self.sample):
            self.summary.skipped_sample += bool(judges)
            return await score_stored(stored, self._cheap, self.gateway), False
        async with self._one_judged if self.budget.after_the_fact else _NO_LOCK:
            if not self.budget.take(len(judges)):
                self.summary.skipped_budget += 1
                return await score_stored(stored, self._cheap, self.gateway), False
            self.summary.judged += 1
            self.summary.judge_calls += len(judges)
            result = await score_stored(stored, self.metrics, self.gateway)
            used = [u for u in result.usage if u.role.startswith("judge:")]
            tokens, cost = sum(u.total_tokens for u in used), sum(u.cost_usd or 0.0 for u in used)
            self.budget.used(tokens, cost)
            self.summary.judge_tokens += tokens
            self.summary.judge_cost += cost
            return result, True

    @functools.cached_property
    def _judges(self) -> list[Metric]:
        return [m for m in self.metrics if is_judge(m)]

    @functools.cached_property
    def _cheap(self) -> list[Metric]:
        return [m for m in self.metrics if not is_judge(m)]

    def _hand_on(self, verdict: WatchVerdict) -> None:
        """`verdict` to every consumer; the alerts they return to `on_alert`."""
        for consumer in self.consumers:
            try:
                said = consumer(verdict)
            except AdkEvalError:
                raise
            except Exception as error:
                raise EvalSetupError(
                    f"the verdict consumer {getattr(consumer, '__name__', consumer)!r} raised "
                    f"{type(error).__name__}: {error}"
                ) from error
            for alert in [said] if isinstance(said, Alert) else list(said or ()):
                self.summary.alerts.append(alert)
                self.state.journal.alert(alert)
                if self.on_alert is not None:
                    self.on_alert(alert)


def _verdicts(
    result: EvalResult, stored: StoredConversation, at: float, judged: bool
) -> list[WatchVerdict]:
    """One `WatchVerdict` per metric of a scored conversation (nothing of what was said)."""
    party = result.attribution.party if result.attribution is not None else None
    key = stored.session.id
    # a trace conversation no span named a session for is keyed by its trace
    trace_id = stored.trace_id or (
        key.removeprefix("trace:") if _TRACE_KEY.fullmatch(key) else None
    )
    verdicts = []
    for name, found in result.metrics.items():
        passed = found.passed if found.applicable else None
        verdicts.append(
            WatchVerdict(
                conversation=stored.name,
                metric=name,
                passed=passed,
                score=found.score,
                party=party if passed is False else None,
                trace_id=trace_id,
                at=at,
                judged=judged,
            )
        )
    return verdicts


async def watch_sessions(
    source: SessionSource,
    metrics: Sequence[Metric],
    *,
    idle: float = 180.0,
    sample: float = 1.0,
    seed: int = DEFAULT_SEED,
    judge_calls_per_hour: int | None = None,
    judge_tokens_per_hour: int | None = None,
    judge_cost_per_hour: float | None = None,
    state: Path | str | None = None,
    until: int | None = None,
    duration: float | None = None,
    on_verdict: OnVerdict | Sequence[OnVerdict] = (),
    on_alert: Callable[[Alert], None] | None = None,
    on_poll: Callable[[WatchSummary], None] | None = None,
    filters: SessionFilter | None = None,
    poll: float = 5.0,
    max_concurrency: int = 8,
    open_for: float = OPEN_FOR,
    redactor: Redactor | None = None,
    finished: Callable[[Session], bool] | None = None,
) -> WatchSummary:
    """Scores the conversations of `source` as they finish, until stopped (see the module doc).

    Args:
        source: Where the conversations are (`open_sessions`); only ever read.
        metrics: The metrics, as `score_sessions` takes them.
        idle: Seconds without a write after which a conversation is finished.
        sample: The share of conversations the judges read (0 to 1), seeded by `seed`.
        seed: The sample's seed (stable per conversation, across restarts).
        judge_calls_per_hour: Judge calls allowed in any hour (None: no limit).
        judge_tokens_per_hour: Judge tokens allowed in any hour (None: no limit; see
            `JudgeBudget`: passed by one conversation's judges at most).
        judge_cost_per_hour: Judge US dollars allowed in any hour (None: no limit).
        state: The watch's own state file, to resume from (None: in memory only).
        until: Stop once this many conversations were scored (None: never).
        duration: Stop after this many seconds (None: never).
        on_verdict: Consumers of each `WatchVerdict`; each may return alerts.
        on_alert: Called with each alert a consumer returned.
        on_poll: Called with the summary after each poll.
        filters: Which conversations (`SessionFilter`; its ``limit`` is not used).
        poll: Seconds between polls.
        max_concurrency: Conversations scored at once.
        open_for: Seconds after its last update that a conversation stopped
            mid-turn counts as open (see `still_open`).
        redactor: Redacts each conversation before anything reads it (default: the
            built-in kinds; `Redactor.none()`: as stored).
        finished: Says from a (redacted) session that its conversation ended, so it is
            scored without waiting `idle` seconds (None: only the idle time ends one).

    Returns:
        What it did; its ``alerts`` are those the consumers returned.

    Raises:
        EvalSetupError: A setting out of range, a state file that is not a watch's
            or was written with another seed, a consumer that raised: one line.
    """
    _check(idle, sample, until, duration, poll, judge_calls_per_hour)
    for name, limit in (("tokens", judge_tokens_per_hour), ("cost", judge_cost_per_hour)):
        if limit is not None and limit < 0:
            raise EvalSetupError(f"the judge {name} budget must be >= 0, got {limit}")
    budget = JudgeBudget(judge_calls_per_hour, judge_tokens_per_hour, judge_cost_per_hour)
    consumers = [on_verdict] if callable(on_verdict) else list(on_verdict)
    memory = WatchState(None if state is None else Path(state), seed)
    watch = _Watch(
        source, metrics, memory, budget, filters or SessionFilter(),
        idle, sample, seed, until, open_for, redactor, consumers, on_alert, time.time,
        finished,
    )  # fmt: skip
    try:
        summary = await watch.run(max_concurrency, poll, duration, on_poll)
        memory.commit(everything=True)  # (everything scored was committed at its poll's end)
        return summary
    finally:
        memory.close()


def _check(
    idle: float,
    sample: float,
    until: int | None,
    duration: float | None,
    poll: float,
    budget: int | None,
) -> None:
    """Each setting in its range, or one line naming it."""
    problems = [
        (idle < 0, f"idle must be >= 0 seconds, got {idle}"),
        (not 0.0 <= sample <= 1.0, f"sample must be between 0 and 1, got {sample}"),
        (until is not None and until < 1, f"until must be >= 1 conversation, got {until}"),
        (duration is not None and duration <= 0, f"duration must be > 0 s, got {duration}"),
        (poll <= 0, f"poll must be > 0 seconds, got {poll}"),
        (budget is not None and budget < 0, f"the judge budget must be >= 0, got {budget}"),
    ]
    for wrong, said in problems:
        if wrong:
            raise EvalSetupError(said)
