"""watch_sessions: a real ADK app writes while the watch scores each finished conversation once."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from pathlib import Path

import anyio
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from adk_eval._errors import EvalSetupError
from adk_eval._sources._spans._collector import SpanCollector
from adk_eval.production import open_sessions, watch_sessions
from adk_eval.production._watch._loop import WatchSummary
from adk_eval.production._watch._sample import sampled
from adk_eval.production._watch._verdict import Alert, WatchVerdict
from tests._sources._spans.conftest import capture_spans  # noqa: F401  (the fixture)
from tests._sources._spans.test_collector import run_adk
from tests.production._watch.watching import CHEAP, Judge, stopped_halfway, write
from tests.production.stores import checksum

IDLE = 0.4


def _url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"


async def _first(url: str) -> list[str]:
    """One conversation written first, so the store exists before the watch opens it."""
    return await write(url, 1, two_turns_every=1)


@pytest.mark.slow
def test_every_finished_conversation_is_scored_once_while_the_app_writes(tmp_path: Path) -> None:
    url = _url(tmp_path)
    seen: list[WatchVerdict] = []

    async def main() -> tuple[list[str], object]:
        names = await _first(url)
        writer = asyncio.create_task(write(url, 12, pause=IDLE / 3))
        summary = await watch_sessions(
            open_sessions(url.replace("+aiosqlite", "")),
            CHEAP,
            idle=IDLE,
            poll=0.05,
            until=13,
            on_verdict=seen.append,
            state=tmp_path / "watch.db",
        )
        return names + await writer, summary

    names, summary = asyncio.run(main())
    scored = [v.conversation for v in seen]
    assert sorted(scored) == sorted(names)  # every one, exactly once
    assert summary.rescored == 0  # none scored between its turns (it would be scored again)
    assert summary.scored == 13
    assert all(v.passed is True and v.metric == "replied" for v in seen)


async def _written_while_watched(
    url: str, source: str, count: int, state: Path, idle: float = IDLE
) -> tuple:
    """`count` conversations written while a watch scores them, stopped halfway and restarted.

    A two-turn conversation whose turns the loaded machine leaves more than `idle` apart
    is finished by definition and scored again after its second turn: `idle` must exceed
    the longest gap the writer leaves (0.02 s asked; seconds on a loaded CI machine).

    Returns the names written, those the first watch scored and those the second did.
    """
    second: list[str] = []
    names = await _first(url)
    writer = asyncio.create_task(write(url, count - 1, pause=0.02))
    watched = open_sessions(source)
    kw = {"idle": idle, "poll": 0.05, "state": state, "max_concurrency": 2}
    first = await stopped_halfway(watched, count, **kw)
    names += await writer
    await watch_sessions(
        watched,
        CHEAP,
        until=count - len(first),
        **kw,
        on_verdict=lambda v: second.append(v.conversation),
    )
    return names, first, second


@pytest.mark.slow
def test_a_restart_in_the_middle_repeats_nothing_and_loses_nothing(tmp_path: Path) -> None:
    url = _url(tmp_path)
    written = _written_while_watched(url, url.replace("+aiosqlite", ""), 20, tmp_path / "w.db")
    names, first, second = asyncio.run(written)
    assert 10 <= len(first) < 20
    assert not set(first) & set(second)  # nothing repeated
    assert sorted(first + second) == sorted(names)  # nothing lost


@pytest.mark.slow
def test_a_thousand_conversations_on_sqlite_restarted_halfway(tmp_path: Path) -> None:
    url = _url(tmp_path)
    written = _written_while_watched(
        url, url.replace("+aiosqlite", ""), 1000, tmp_path / "w.db", idle=2.0
    )  # (a minute of writing under the whole suite's load: gaps of seconds)
    names, first, second = asyncio.run(written)
    assert len(first) >= 500
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(names)


def _connections(postgres, database: str) -> int:
    """Connections open to `database`, as the server counts them (pg_stat_activity)."""
    query = f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{database}'"
    return int(postgres.psql("postgres", query).strip())


@pytest.mark.slow
def test_a_watch_cancelled_anywhere_in_a_poll_leaves_no_postgresql_connection_open(
    postgres,
) -> None:
    postgres.create_database("cancelled")
    url = postgres.url("cancelled")
    asyncio.run(write(url, 12, two_turns_every=99, pause=0))
    source = open_sessions(url.replace("postgresql+asyncpg", "postgresql"))
    kw = {"idle": 0.0, "poll": 0.001, "max_concurrency": 2}

    async def cancelled_after(delay: float, by_task: bool) -> int:
        if by_task:  # as Ctrl-C cancels asyncio.run's task: once
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(watch_sessions(source, CHEAP, **kw), delay)
        else:  # as a task group cancels: every await after it is cancelled too
            with anyio.move_on_after(delay):
                await watch_sessions(source, CHEAP, **kw)
        return _connections(postgres, "cancelled")  # before anything is collected

    async def main() -> list[tuple[float, int]]:
        await watch_sessions(source, CHEAP, until=12, **kw)  # warm
        started = time.perf_counter()
        await watch_sessions(source, CHEAP, until=12, **kw)  # one poll, start to end
        whole = time.perf_counter() - started
        # connecting, reading the layout and the rows, disposing; then a second poll
        delays = [whole * step / 8 for step in range(1, 17)]
        return [(delay, await cancelled_after(delay, n % 2 == 1)) for n, delay in enumerate(delays)]

    left = asyncio.run(main())
    assert [opened for _, opened in left] == [0] * len(left), left
    gc.collect()  # nothing left to collect either (it would fail whatever test ran next)
    assert _connections(postgres, "cancelled") == 0


def test_a_changed_conversation_is_scored_again_and_the_store_is_untouched(
    tmp_path: Path,
) -> None:
    url, state = _url(tmp_path), tmp_path / "watch.db"
    names = asyncio.run(write(url, 3, two_turns_every=99))
    store = tmp_path / "store.db"
    before = checksum(store)
    source = open_sessions(f"sqlite:///{store}")

    def run(**kw: object):
        return asyncio.run(watch_sessions(source, CHEAP, idle=0.0, poll=0.01, state=state, **kw))

    assert run(until=3).scored == 3
    assert checksum(store) == before  # read-only: not a byte written
    assert run(duration=0.05).scored == 0  # nothing changed: nothing scored again

    async def one_more_turn() -> None:
        from google.adk.agents import LlmAgent
        from google.adk.runners import Runner
        from google.adk.sessions import DatabaseSessionService

        from adk_eval.testing import ScriptedLlm
        from tests.production.stores import close, message

        service = DatabaseSessionService(db_url=url)
        agent = LlmAgent(name="shop", model=ScriptedLlm(responder=lambda r: "Again."))
        runner = Runner(agent=agent, app_name="shop", session_service=service)
        _, user, sid = names[0].split("/")
        async for _ in runner.run_async(user_id=user, session_id=sid, new_message=message("hi")):
            pass
        await close(service)

    asyncio.run(one_more_turn())
    again = run(until=1)
    assert (again.scored, again.rescored) == (1, 1)


def test_judges_read_the_seeded_sample_only_redacted_and_within_the_budget(
    tmp_path: Path,
) -> None:
    url, state = _url(tmp_path), tmp_path / "watch.db"
    names = asyncio.run(write(url, 20, two_turns_every=99))
    source = open_sessions(f"sqlite:///{tmp_path / 'store.db'}")
    judge = Judge()
    verdicts: list[WatchVerdict] = []
    summary = asyncio.run(
        watch_sessions(source, [*CHEAP, judge], idle=0.0, poll=0.01, sample=0.4, seed=7,
                       state=state, until=20, on_verdict=verdicts.append)
    )  # fmt: skip
    judged = {v.conversation for v in verdicts if v.metric == "judged"}
    assert judged == {n for n in names if sampled(n, 7, 0.4)}  # the seeded sample, stable
    assert 0 < len(judged) < 20
    assert all(v.judged for v in verdicts if v.metric == "judged")
    assert summary.skipped_sample == 20 - len(judged)
    assert summary.judge_calls == len(judged)
    assert judge.read  # what the judge read was redacted
    assert not any("@example.com" in text for text in judge.read)
    assert b"example.com" not in state.read_bytes()
    with pytest.raises(EvalSetupError, match="seed 7"):
        asyncio.run(watch_sessions(source, CHEAP, state=state, seed=8, until=1))

    budget = Judge("budgeted")
    capped = asyncio.run(
        watch_sessions(source, [budget], idle=0.0, poll=0.01, until=20, judge_calls_per_hour=4)
    )
    assert (capped.judge_calls, capped.skipped_budget) == (4, 16)


def test_a_real_judges_tokens_and_dollars_are_counted_and_budgeted(tmp_path: Path) -> None:
    import json

    from adk_eval.metrics import llm_judge
    from adk_eval.testing import ScriptedLlm

    asyncio.run(write(_url(tmp_path), 8, two_turns_every=99))
    source = open_sessions(f"sqlite:///{tmp_path / 'store.db'}")
    said = json.dumps({"passed": True, "score": 1.0, "reasoning": "polite"})
    model = ScriptedLlm(responder=lambda request: said, model="gemini-2.5-flash")  # priced
    judge = llm_judge("polite", "Is the agent polite?", model=model)

    def watch(**budget: float) -> WatchSummary:
        return asyncio.run(
            watch_sessions(source, [*CHEAP, judge], idle=0.0, poll=0.01, until=8, **budget)
        )

    free = watch()
    assert free.judge_calls == 8
    assert free.judge_tokens > 0  # the judge's own usage, from its responses
    assert free.judge_cost > 0
    per_conversation = free.judge_tokens / 8
    tokens = watch(judge_tokens_per_hour=int(per_conversation * 2.5))
    assert (tokens.judge_calls, tokens.skipped_budget) == (3, 5)  # passed by one at most
    dollars = watch(judge_cost_per_hour=free.judge_cost / 8 * 1.5)
    assert (dollars.judge_calls, dollars.skipped_budget) == (2, 6)


def test_consumers_alerts_end_a_bounded_run_and_are_counted(tmp_path: Path) -> None:
    url = _url(tmp_path)
    asyncio.run(write(url, 2, two_turns_every=99))
    source = open_sessions(f"sqlite:///{tmp_path / 'store.db'}")
    heard: list[Alert] = []

    def monitor(verdict: WatchVerdict) -> Alert:
        return Alert(verdict.metric, 0.9, 0.5, (0.1, 0.6), (verdict.conversation,), test="t")

    summary = asyncio.run(
        watch_sessions(source, CHEAP, idle=0.0, poll=0.01, until=2, on_verdict=[monitor],
                       on_alert=heard.append)
    )  # fmt: skip
    assert len(summary.alerts) == 2
    assert heard == summary.alerts

    def broken(verdict: WatchVerdict) -> None:
        raise RuntimeError("sink down")

    with pytest.raises(EvalSetupError, match="'broken' raised RuntimeError: sink down"):
        asyncio.run(watch_sessions(source, CHEAP, idle=0.0, until=1, on_verdict=broken))
    with pytest.raises(EvalSetupError, match="sample must be between 0 and 1"):
        asyncio.run(watch_sessions(source, CHEAP, sample=2.0))


def test_a_collectors_span_file_is_watched_as_the_app_exports_it(
    tmp_path: Path,
    capture_spans,  # noqa: F811  (the fixture)
) -> None:
    out = tmp_path / "traces.db"
    seen: list[str] = []
    traced: dict[str, str | None] = {}

    def on_verdict(verdict) -> None:
        seen.append(verdict.conversation)
        traced[verdict.conversation.rsplit("/", 1)[-1]] = verdict.trace_id

    async def main() -> list[str]:
        ids = [await run_adk()]
        watching = asyncio.create_task(
            watch_sessions(
                open_sessions(f"adk-spans:{out}"), CHEAP, idle=IDLE, poll=0.05, until=3,
                on_verdict=on_verdict, state=tmp_path / "w.db",
            )
        )  # fmt: skip
        for _ in range(2):
            await asyncio.sleep(0.1)
            ids.append(await run_adk())
        summary = await watching
        assert summary.rescored == 0
        return ids

    with SpanCollector(out, port=0) as collector:
        capture_spans.add(OTLPSpanExporter(endpoint=collector.endpoint + "/v1/traces"))
        ids = asyncio.run(main())
        spans = capture_spans.spans()
    assert sorted(name.rsplit("/", 1)[-1] for name in seen) == sorted(ids)
    # each verdict carries its conversation's own trace id (the app's, as exported)
    trace_of = {
        span.attributes.get("gen_ai.conversation.id"): f"{span.context.trace_id:032x}"
        for span in spans
        if span.attributes.get("gen_ai.conversation.id")
    }
    assert traced == {session: trace_of[session] for session in ids}


def test_a_verdict_carries_the_trace_id_of_a_conversation_keyed_by_its_trace(
    tmp_path: Path,
) -> None:
    from google.adk.events import Event
    from google.adk.sessions import Session
    from google.genai import types

    from adk_eval._sources._stored import StoredConversation
    from adk_eval.production._score import score_stored
    from adk_eval.production._watch._loop import _verdicts

    said = types.Content(role="model", parts=[types.Part(text="Done.")])
    events = [Event(author="desk", invocation_id="i1", content=said, timestamp=1.0)]
    names = {"trace:" + "ab" * 16: "ab" * 16, "0f3c-session": None}
    for key, trace_id in names.items():
        session = Session(id=key, app_name="desk", user_id="", events=events, last_update_time=1)
        stored = StoredConversation.build(session)
        result = asyncio.run(score_stored(stored, CHEAP))
        (verdict,) = _verdicts(result, stored, 2.0, False)
        assert verdict.trace_id == trace_id
        assert (verdict.conversation, verdict.passed, verdict.at) == (f"desk//{key}", True, 2.0)


def test_a_watch_cancelled_mid_group_hands_on_nothing_it_did_not_commit(
    tmp_path: Path, monkeypatch
) -> None:
    from adk_eval.metrics import MetricResult
    from adk_eval.production._watch import _loop

    monkeypatch.setattr(_loop, "GROUP", 1000)  # one group per poll: commit at its end
    asyncio.run(write(_url(tmp_path), 10, two_turns_every=99))
    source = open_sessions(f"sqlite:///{tmp_path / 'store.db'}")
    state, scored = tmp_path / "w.db", []
    five = asyncio.Event()

    class Slow:
        name = "slow"

        async def evaluate(self, trace) -> MetricResult:
            scored.append(trace.case_name)
            if len(scored) >= 5:
                five.set()
            await asyncio.sleep(0.05)
            return MetricResult(passed=True)

    async def cancelled() -> list[WatchVerdict]:
        seen: list[WatchVerdict] = []
        task = asyncio.create_task(
            watch_sessions(source, [Slow()], idle=0.0, poll=0.01, until=10, state=state,
                           max_concurrency=2, on_verdict=seen.append)
        )  # fmt: skip
        await five.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return seen

    assert asyncio.run(cancelled()) == []  # scored, never committed: nothing handed on
    again: list[WatchVerdict] = []
    summary = asyncio.run(
        watch_sessions(source, [Slow()], idle=0.0, poll=0.01, until=10, state=state,
                       on_verdict=again.append)
    )  # fmt: skip
    assert summary.scored == 10  # nothing lost
    assert len({v.conversation for v in again}) == 10
