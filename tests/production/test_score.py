"""adk-eval score: stored sessions scored where ADK keeps them, read-only, as score_session."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval import score_session
from adk_eval._cli import main
from adk_eval.goldens import load_eval_set
from adk_eval.production import SessionFilter, open_sessions
from adk_eval.reporting import RunStore

from . import stores
from .stores import METRICS_FILE, score

TABLES = ["sessions", "events", "app_states", "user_states", "adk_internal_metadata"]


@pytest.fixture(autouse=True)
def _forget_metrics_files(isolated_imports):
    """Each test's metrics file is a module of its own (one name, many tmp folders)."""


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory) -> tuple[Path, list]:
    """An SQLite file ADK's DatabaseSessionService wrote: 12 sessions of 2 apps, 3 users."""
    path = tmp_path_factory.mktemp("store") / "sessions.db"
    keys = stores.fill(f"sqlite+aiosqlite:///{path}", 12)
    return path, keys


def verdicts(report: dict) -> dict[str, dict[str, bool]]:
    return {
        run["name"]: {name: metric["passed"] for name, metric in run["metrics"].items()}
        for run in report["results"]
    }


async def expected(url: str, keys) -> dict[str, dict[str, bool]]:
    """`score_session` on each session as ADK's own service reads it."""
    service = stores.adk_service(url)
    found = {}
    try:
        for app, user, session_id in keys:
            session = await service.get_session(app_name=app, user_id=user, session_id=session_id)
            results = await score_session(session, stores.METRICS)
            found[f"{app}/{user}/{session_id}"] = {n: r.passed for n, r in results.items()}
    finally:
        await stores.close(service)
    return found


def test_a_sqlite_store_scores_as_score_session_and_is_left_byte_for_byte(sqlite_store, tmp_path):
    path, keys = sqlite_store
    before = stores.checksum(path)
    copy = tmp_path / "copy.db"  # ADK's service may write to what it reads: a copy for it
    shutil.copy(path, copy)

    result, report = score(tmp_path, f"sqlite:///{path}")

    assert result.exit_code == 1, result.output  # odd `n` fails `even`
    assert stores.checksum(path) == before
    assert report["summary"]["total"] == 12
    wanted = asyncio.run(expected(f"sqlite+aiosqlite:///{copy}", keys))
    assert verdicts(report) == wanted
    assert "scoring the sessions of" in result.output
    assert "(read-only)" in result.output


def test_a_store_without_adks_newer_index_is_not_given_one(sqlite_store, tmp_path):
    """ADK's service builds missing indexes before any read: a real store would be changed."""
    path = tmp_path / "old.db"
    shutil.copy(sqlite_store[0], path)
    db = sqlite3.connect(path)
    db.execute("DROP INDEX idx_events_app_user_session_ts_id")
    db.commit()
    db.close()
    before = stores.checksum(path)

    result, report = score(tmp_path, f"sqlite:///{path}")

    assert report["summary"]["total"] == 12, result.output
    assert stores.checksum(path) == before


def test_every_filter(sqlite_store, tmp_path):
    path, keys = sqlite_store
    url = f"sqlite:///{path}"

    def names(*args: str) -> set[str]:
        result, report = score(tmp_path, url, *args)
        assert report, result.output
        return set(verdicts(report))

    every = {f"{a}/{u}/{s}" for a, u, s in keys}
    assert names() == every
    assert names("--app", "bank") == {n for n in every if n.startswith("bank/")}
    assert names("--user", "bob") == {n for n in every if "/bob/" in n}
    assert names("--app", "shop", "--user", "ann") == {
        n for n in every if n.startswith("shop/ann/")
    }
    chosen = [keys[0][2], keys[5][2]]
    assert names("--session", chosen[0], "--session", chosen[1]) == {
        n for n in every if n.rsplit("/", 1)[1] in chosen
    }
    assert len(names("--limit", "5")) == 5
    assert names("--since", "1d") == every
    assert names("--until", "1d") == set()
    tomorrow = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 86400))
    assert names("--since", tomorrow) == set()
    assert names("--until", tomorrow) == every


def test_limit_takes_the_most_recently_updated(sqlite_store):
    path, keys = sqlite_store

    async def read(limit: int) -> list[str]:
        return [
            s.id
            async for s in open_sessions(f"sqlite:///{path}").sessions(SessionFilter(limit=limit))
        ]

    assert asyncio.run(read(3)) == [key[2] for key in reversed(keys)][:3]


def test_adk_webs_own_sqlite_store_is_read_as_its_service_reads_it(tmp_path):
    path = tmp_path / "session.db"
    keys = stores.fill(f"sqlite:///{path}", 6)  # SqliteSessionService: `adk web`'s store
    before = stores.checksum(path)
    copy = tmp_path / "copy.db"
    shutil.copy(path, copy)

    result, report = score(tmp_path, f"sqlite:///{path}")

    assert stores.checksum(path) == before
    assert verdicts(report) == asyncio.run(expected(f"sqlite:///{copy}", keys)), result.output


def test_exported_session_json_is_scored_too(sqlite_store, tmp_path):
    path, keys = sqlite_store

    async def export() -> None:
        shutil.copy(path, tmp_path / "copy.db")
        service = stores.adk_service(f"sqlite+aiosqlite:///{tmp_path / 'copy.db'}")
        folder = tmp_path / "exported"
        folder.mkdir()
        try:
            for app, user, session_id in keys[:4]:
                session = await service.get_session(
                    app_name=app, user_id=user, session_id=session_id
                )
                (folder / f"{session_id}.json").write_text(session.model_dump_json())
        finally:
            await stores.close(service)

    asyncio.run(export())
    result, report = score(tmp_path, str(tmp_path / "exported"))
    assert set(verdicts(report)) == {f"{a}/{u}/{s}" for a, u, s in keys[:4]}, result.output


def test_golden_export_appends_the_selected_sessions_to_an_evalset(sqlite_store, tmp_path):
    path, _ = sqlite_store
    evalset = tmp_path / "mined.evalset.json"

    result, report = score(
        tmp_path,
        f"sqlite:///{path}",
        "--export-goldens",
        str(evalset),
        "--where",
        "looked_up passed",
    )

    looked = [name for name, v in verdicts(report).items() if v["looked_up"]]
    assert f"goldens: {len(looked)} session(s) where `looked_up` passed" in result.output
    mined = load_eval_set(evalset)
    assert sorted(case.eval_id for case in mined.eval_cases) == sorted(
        name.rsplit("/", 1)[1] for name in looked
    )
    typo = CliRunner().invoke(
        main,
        [
            "score",
            f"sqlite:///{path}",
            "--metrics",
            str(tmp_path / "metrics_eval.py"),
            "--export-goldens",
            str(evalset),
            "--where",
            "lookedup passed",
            "--no-store",
        ],
    )
    assert typo.exit_code == 2
    assert "did you mean `looked_up`?" in typo.output


def test_a_stored_score_run_is_marked_and_compares_like_any_run(sqlite_store, tmp_path):
    path, _ = sqlite_store
    db = tmp_path / "runs.db"
    metrics = tmp_path / "metrics_eval.py"
    metrics.write_text(METRICS_FILE)
    for _ in range(2):
        CliRunner().invoke(
            main, ["score", f"sqlite:///{path}", "--metrics", str(metrics), "--db", str(db)]
        )
    runs = RunStore(db).runs()
    assert len(runs) == 2
    assert all(run.command.endswith("(score)") for run in runs)
    compared = CliRunner().invoke(main, ["compare", "--db", str(db)])
    assert compared.exit_code == 0, compared.output


@pytest.mark.parametrize(
    ("sessions", "message"),
    [
        ("memory://", "an in-memory session store lives only in the process that ran the agent"),
        ("mysql://u:p@localhost/db", "MySQL stores are not supported yet"),
        ("redis://localhost", "unknown session store `redis://`"),
        ("sqlite:///nowhere.db", "no such SQLite file: nowhere.db"),
        ("nowhere/", "no such file or folder: nowhere/"),
    ],
)
def test_a_bad_source_is_one_clear_line(tmp_path, sessions, message):
    result, _ = score(tmp_path, sessions)
    assert result.exit_code == 2
    assert message in result.output
    assert result.output.count("\n") == 1, result.output
    assert not (tmp_path / "nowhere.db").exists()  # never created


def test_a_file_without_adks_tables_is_one_clear_line(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE things (x)")
    db.commit()
    db.close()
    before = stores.checksum(path)
    result, _ = score(tmp_path, f"sqlite:///{path}")
    assert result.exit_code == 2
    assert "has no ADK session tables (missing: events, sessions)" in result.output
    assert stores.checksum(path) == before


def test_a_metrics_file_with_no_metric_is_one_clear_line(sqlite_store, tmp_path):
    empty = tmp_path / "empty_eval.py"
    empty.write_text("x = 1\n")
    result = CliRunner().invoke(
        main, ["score", f"sqlite:///{sqlite_store[0]}", "--metrics", str(empty), "--no-store"]
    )
    assert result.exit_code == 2
    assert "binds no metric at module level" in result.output


class _Simulated:
    """A metric that reads what only a simulated run has."""

    name = "user_agents_spoke"
    needs_simulation = True

    def evaluate(self, trace):
        raise AssertionError("never called on a stored session")


def test_a_metric_that_needs_a_simulated_run_says_so_on_a_stored_session(sqlite_store):
    from adk_eval.production._score import score_sessions

    source = open_sessions(f"sqlite:///{sqlite_store[0]}")
    suite = asyncio.run(score_sessions(source, [_Simulated(), *stores.METRICS]))
    verdict = suite.results[0].metrics["user_agents_spoke"]
    assert not verdict.applicable
    assert "only a simulated run has" in verdict.evidence[0]


# -- PostgreSQL --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres_store(postgres) -> tuple[str, list]:
    postgres.create_database("shop_sessions")
    url = postgres.url("shop_sessions")
    return url, stores.fill(url, 9)


def test_a_postgresql_store_scores_as_score_session_and_is_left_unchanged(
    postgres, postgres_store, tmp_path
):
    url, keys = postgres_store
    counts, dump = (
        postgres.row_counts("shop_sessions", TABLES),
        postgres.dump_checksum("shop_sessions"),
    )

    result, report = score(tmp_path, url.replace("postgresql+asyncpg", "postgresql"))
    _, by_user = score(tmp_path, url, "--user", "ann")

    assert report["summary"]["total"] == 9, result.output
    assert verdicts(report) == asyncio.run(expected(url, keys))
    assert set(verdicts(by_user)) == {f"{a}/{u}/{s}" for a, u, s in keys if u == "ann"}
    assert postgres.row_counts("shop_sessions", TABLES) == counts
    assert postgres.dump_checksum("shop_sessions") == dump


def test_postgresql_problems_are_one_clear_line_each(postgres, tmp_path):
    postgres.create_database("empty_store")
    wrong = f"postgresql://{postgres.user}:not-the-password@{postgres.host}:{postgres.port}/x"
    closed = f"postgresql://{postgres.user}:{postgres.password}@127.0.0.1:9/shop_sessions"
    for sessions, message in [
        (wrong, "refused the password"),
        (closed, "cannot reach postgresql://127.0.0.1:9/shop_sessions"),
        (postgres.url("empty_store"), "has no ADK session tables"),
        (postgres.url("no_such_db"), "no such database"),
    ]:
        result, _ = score(tmp_path, sessions)
        assert result.exit_code == 2, (sessions, result.output)
        assert message in result.output
        assert result.output.count("\n") == 1, result.output
        assert "not-the-password" not in result.output


async def test_a_metric_that_needs_what_a_source_lacks_is_not_applicable_never_failed():
    from google.adk.sessions import Session

    from adk_eval._sources._stored import StoredConversation
    from adk_eval.metrics import llm_judge, never_said, trajectory_match
    from adk_eval.production._score import score_stored
    from adk_eval.testing import text_event, tool_call_event, user_event

    events = [
        user_event("where is my order A1"),
        tool_call_event("shop", "lookup", {"key": "A1"}),
        text_event("shop", "Your order has shipped."),
    ]
    session = Session(id="s1", app_name="shop", user_id="ann", events=events, state={})
    metrics = [
        *stores.METRICS,  # looked_up, one_reply, even (state)
        trajectory_match("by_name", ["lookup"], args="ignore"),
        trajectory_match("by_args", [("lookup", {"key": "A1"})]),
        never_said("internal use only"),
        llm_judge("polite", "The agent is polite.", model="gemini-2.5-flash"),
    ]

    whole = await score_stored(StoredConversation.build(session), stores.METRICS)
    assert whole.metrics["even"].applicable  # the store has state: scored (and failed: no n)

    lacks = frozenset({"state", "content"})
    lacking = await score_stored(StoredConversation.build(session, lacks=lacks), metrics)
    verdicts = {name: result.verdict for name, result in lacking.metrics.items()}
    assert verdicts == {
        "looked_up": "pass",
        "one_reply": "n/a",  # it counts messages: what was said
        "even": "n/a",
        "by_name": "pass",
        "by_args": "n/a",
        "never_said(internal use only)": "n/a",
        "polite": "n/a",
    }
    assert lacking.metrics["even"].evidence[0] == (
        "not applicable: it reads the state, which this trace lacks"
    )
    assert "content" in lacking.metrics["polite"].evidence[0]
    assert lacking.status == "passed"


@pytest.mark.parametrize("flags", [[], ["--no-redact"]], ids=["redacted", "as stored"])
def test_score_redacts_what_it_read_before_metrics_and_reports_see_it(tmp_path, flags):
    from google.adk.sessions import Session

    from adk_eval.testing import text_event, tool_call_event, user_event

    events = [
        user_event("card 4111 1111 1111 1111, mail ann@example.com"),
        tool_call_event("shop", "charge", {"card": "4111-1111-1111-1111"}),
        text_event("shop", "Charged 4111 1111 1111 1111; receipt sent to ANN@example.com"),
    ]
    stored = tmp_path / "s.json"
    stored.write_text(
        Session(id="s", app_name="shop", user_id="ann", events=events).model_dump_json()
    )
    metrics = tmp_path / "metrics_eval.py"
    metrics.write_text(
        "from adk_eval.metrics import never_in_arguments, never_said\n"
        "LEAK = never_said('<CARD_1>', name='card_repeated')\n"
        "ECHO = never_in_arguments('<CARD_1>', name='card_in_call')\n"
    )
    report = tmp_path / "report.json"
    args = ["score", str(stored), "--metrics", str(metrics), "--json", str(report), "--no-store"]
    result = CliRunner().invoke(main, [*args, *flags])

    text = report.read_text()
    (run,) = json.loads(text)["results"]
    if flags:
        assert "redacted" not in result.output
        assert run["metrics"]["card_repeated"]["passed"]  # nothing matches a marker
    else:  # the same card is one marker everywhere: a leak check still works on it
        assert "4111" not in text
        assert "ann@example.com" not in text.lower()
        said = " ".join(result.output.split())
        assert all(part in said for part in ("3 card numbers", "2 e-mails", "in 1 session"))
        assert not run["metrics"]["card_repeated"]["passed"]
        assert not run["metrics"]["card_in_call"]["passed"]


async def test_a_stored_conversation_is_one_trace_the_metrics_score_and_its_run_holds(tmp_path):
    from google.adk.sessions import Session

    from adk_eval.metrics import MetricResult
    from adk_eval.production._score import score_sessions
    from adk_eval.testing import text_event, user_event

    class Seeing:
        name = "seeing"

        def __init__(self) -> None:
            self.traces: list = []

        def evaluate(self, trace):
            self.traces.append(trace)
            return MetricResult(passed=True, evidence=[])

    stored = tmp_path / "s.json"
    events = [user_event("where is A1?"), text_event("shop", "Shipped.")]
    stored.write_text(
        Session(id="s", app_name="shop", user_id="a", events=events).model_dump_json()
    )
    seeing, runs = Seeing(), []

    await score_sessions(
        open_sessions(str(stored)), [seeing], on_result=lambda r, _: runs.append(r)
    )

    (run,) = runs
    assert run.trace is seeing.traces[0]  # one trace, not one for the metrics and one for the run
    assert run.trace.case_name == run.name == "shop/a/s"
