"""adk-eval watch: a bounded watch over a real store, its summary, resume and one-line errors."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval._sources._spans._collector import SpanCollector
from tests._sources._spans.conftest import capture_spans
from tests.production._watch.test_alerts import hook, url
from tests.production._watch.watching import write

__all__ = ["capture_spans", "hook"]  # (fixtures, shared)

METRICS = "from tests.production._watch.watching import CHEAP, Judge\nJUDGE = Judge()\n"


def _watch(tmp_path: Path, *args: str, metrics: str = METRICS, state: str = "watch.db"):
    module = tmp_path / f"metrics_{tmp_path.name}.py"  # (one module name per test)
    module.write_text(metrics)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    words = ["watch", store, "--metrics", str(module), "--state", str(tmp_path / state)]
    words += ["--poll", "0.01"]
    return CliRunner().invoke(main, [*words, *args])


def test_a_bounded_watch_scores_samples_resumes_and_exits_0(tmp_path: Path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 6, two_turns_every=99))
    first = _watch(tmp_path, "--idle", "0s", "--sample", "0.5", "--seed", "3", "--until", "6")
    assert first.exit_code == 0, first.output
    assert "watching" in first.output
    assert "read-only" in first.output
    summary = first.output.splitlines()[-1]
    assert summary.startswith("watched: 6 conversation(s) scored (0 again after a change)")
    assert "not sampled" in summary
    again = _watch(tmp_path, "--idle", "0", "--sample", "0.5", "--seed", "3", "--until", "0.2s")
    assert again.exit_code == 0, again.output
    assert again.output.splitlines()[-1].startswith("watched: 0 conversation(s) scored")
    other_seed = _watch(tmp_path, "--idle", "0", "--sample", "0.5", "--until", "1")
    assert other_seed.exit_code == 2
    assert "sampling with seed 3, not 0: give --seed 3" in other_seed.output


def test_wrong_bounds_and_durations_are_one_line(tmp_path: Path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 1))
    for args, said in (
        (["--until", "0"], "--until 0: give at least 1 conversation"),
        (["--idle", "soon"], "--idle 'soon' is not a duration (90s, 3m, 1h)"),
        (["--until", "10 years"], "--until '10 years' is not a duration"),
    ):
        result = _watch(tmp_path, *args)
        assert result.exit_code == 2, result.output
        assert said in result.output
        assert "Traceback" not in result.output


ONE_TURN = """from adk_eval.metrics import MetricResult


class OneTurn:
    name = "one_turn"

    def evaluate(self, trace):
        asked = [m for m in trace.messages if m.role == "user"]
        return MetricResult(passed=len(asked) == 1, evidence=[f"{len(asked)} user turn(s)"])


ONE_TURN = OneTurn()
del OneTurn  # (the class looks like a metric too)
"""


def _dropping_store(tmp_path: Path) -> None:
    """4 conversations (3 of one turn: they pass `one_turn`), then 12 of two turns (they fail)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    asyncio.run(write(url, 4, two_turns_every=99))
    asyncio.run(write(url, 12, pause=0.0, two_turns_every=1))


def test_a_metric_that_drops_alerts_on_one_line_and_the_bounded_run_exits_1(tmp_path, hook) -> None:
    _dropping_store(tmp_path)
    drop = ("--idle", "0s", "--until", "16", "--baseline", "0.95", "--alpha", "0.2")
    result = _watch(tmp_path, *drop, "--webhook", url(hook), metrics=ONE_TURN)
    assert result.exit_code == 1, result.output
    alerts = [line for line in result.stdout.splitlines() if line.startswith("ALERT ")]
    assert len(alerts) == 1, result.output
    assert alerts[0].startswith("ALERT one_turn: pass rate ")
    assert "against 95% " in alerts[0]
    assert result.stdout.splitlines()[-1].startswith("watched: 16 conversation(s) scored")
    assert "1 alert" in result.stdout.splitlines()[-1]
    ((path, kind, body),) = hook.received
    assert (path, kind) == ("/hooks/T0K3N", "application/json")
    assert json.loads(body)["line"] == alerts[0].removeprefix("ALERT ")

    again = _watch(tmp_path, *drop, "--json-alerts", metrics=ONE_TURN, state="json.db")
    assert again.exit_code == 1, again.output
    (line,) = again.stdout.splitlines()  # stdout holds the alerts alone
    alert = json.loads(line)
    assert alert["kind"] == "adk_eval.watch.alert"
    assert alert["metric"] == "one_turn"
    assert alert["baseline"] == 0.95
    assert alert["current"] < 0.5
    assert len(alert["conversations"]) == 5
    assert "watched: 16 conversation(s) scored" in again.stderr


def test_one_failure_in_six_does_not_alert_and_exits_0(tmp_path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 6, two_turns_every=99))
    steady = ("--idle", "0s", "--until", "6", "--baseline", "0.95", "--alpha", "0.2")
    result = _watch(tmp_path, *steady, metrics=ONE_TURN)
    assert result.exit_code == 0, result.output
    assert "ALERT" not in result.output


def test_each_verdict_reaches_an_otlp_endpoint_as_a_span(tmp_path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 3, two_turns_every=99))
    out = tmp_path / "spans.db"
    with SpanCollector(out, port=0) as collector:
        args = ("--idle", "0s", "--until", "3", "--otlp-endpoint", collector.endpoint)
        result = _watch(tmp_path, *args, metrics=ONE_TURN)
        kept = collector.stats.spans_kept
    assert result.exit_code == 0, result.output
    assert kept == 3  # sent before the command returned: the exporter is closed at the end
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as connection:
        rows = list(connection.execute("SELECT name, attributes_json FROM spans"))
    assert {name for name, _ in rows} == {"gen_ai.evaluation.result"}
    attributes = [json.loads(found) for _, found in rows]
    assert {a["gen_ai.evaluation.name"] for a in attributes} == {"one_turn"}
    labels = sorted(a["gen_ai.evaluation.score.label"] for a in attributes)
    assert labels == ["fail", "pass", "pass"]  # the first conversation has two turns
    assert len({a["adk_eval.conversation"] for a in attributes}) == 3


def test_wrong_outputs_are_one_line(tmp_path: Path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 1))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = f"127.0.0.1:{taken.getsockname()[1]}"
        for args, said in (
            (["--prometheus", "nowhere"], "--prometheus 'nowhere' is not HOST:PORT"),
            (["--prometheus", busy], f"--prometheus {busy}: cannot listen there"),
            (["--prometheus", "0.0.0.0:0"], "--allow-remote"),
            (["--webhook", "hooks.example.com"], "--webhook 'hooks.example.com' is not an http"),
            (["--otlp-endpoint", "127.0.0.1:4318"], "is not an OTLP/HTTP endpoint"),
        ):
            result = _watch(tmp_path, "--until", "1", *args)
            assert result.exit_code == 2, result.output
            assert said in result.output
            assert "Traceback" not in result.output
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.slow
def test_the_prometheus_endpoint_answers_while_the_watch_runs_and_stops_after(tmp_path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 3, two_turns_every=99))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    scraped: list[str] = []

    def scrape() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=1).text
            except httpx.HTTPError:
                time.sleep(0.02)
                continue
            scraped.append(text)
            if "adk_eval_watch_conversations_scored_total 3" in text:
                return
            time.sleep(0.02)

    scraper = threading.Thread(target=scrape)
    scraper.start()
    args = ("--idle", "0s", "--until", "1.5s", "--prometheus", f"127.0.0.1:{port}")
    result = _watch(tmp_path, *args, metrics=ONE_TURN)
    scraper.join()
    assert result.exit_code == 0, result.output
    assert f"Prometheus metrics at http://127.0.0.1:{port}/metrics" in result.output
    assert scraped, "the endpoint never answered during the run"
    last = scraped[-1]
    assert "adk_eval_watch_conversations_scored_total 3" in last
    assert 'adk_eval_watch_verdicts_total{metric="one_turn",outcome="pass"} 2' in last
    assert 'adk_eval_watch_verdicts_total{metric="one_turn",outcome="fail"} 1' in last
    with pytest.raises(httpx.ConnectError):  # stopped with the watch
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=1)


ENDS = METRICS + (
    "\ndef conversation_finished(session):\n"
    "    # ended: the user's last message was the second turn\n"
    "    said = [e for e in session.events if e.author == 'user']\n"
    "    return len(said) >= 2\n"
)


@pytest.mark.slow
def test_an_end_the_metrics_file_declares_scores_a_conversation_before_its_idle_time(
    tmp_path: Path,
) -> None:
    names = asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 6))
    result = _watch(tmp_path, "--idle", "10m", "--until", "1s", metrics=ENDS)
    assert result.exit_code == 0, result.output
    assert "`conversation_finished` says so (or after --idle 10m)" in result.output
    # the two two-turn conversations (every third) ended; the others wait their 10 minutes
    assert result.output.splitlines()[-1].startswith("watched: 2 conversation(s) scored")
    assert len(names) == 6


@pytest.mark.parametrize(
    ("end", "said"),
    [
        ("conversation_finished = 3\n", "is int, not a function of a session; define `def"),
        (
            "def conversation_finished(session):\n    return 1 / 0\n",
            "the declared end 'conversation_finished' raised ZeroDivisionError on shop/",
        ),
    ],
)
def test_an_end_that_is_not_a_function_or_raises_is_one_line(
    tmp_path: Path, end: str, said: str
) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 1))
    result = _watch(tmp_path, "--idle", "10m", "--until", "1", metrics=METRICS + end)
    assert result.exit_code == 2
    assert said in result.output
    assert len(result.output.strip().splitlines()) <= 3  # the banner lines and the one error
    assert "Traceback" not in result.output


def test_judge_budgets_in_calls_tokens_and_dollars_parse_and_wrong_ones_are_one_line(
    tmp_path: Path,
) -> None:
    from adk_eval._cli._watch import budget

    assert budget(("200", "50000tokens", "$2.50")) == {
        "judge_calls_per_hour": 200,
        "judge_tokens_per_hour": 50000,
        "judge_cost_per_hour": 2.5,
    }
    assert budget(("1 call", "0.75usd")) == {"judge_calls_per_hour": 1, "judge_cost_per_hour": 0.75}
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 1))
    for given, said in (
        ("2.5", "is not a budget: give calls (200), tokens (50000tokens) or US dollars"),
        ("$5tokens", "is not a budget"),
        ("lots", "is not a budget"),
    ):
        result = _watch(tmp_path, "--judge-budget", given, "--until", "1")
        assert result.exit_code == 2, result.output
        assert said in result.output
    twice = _watch(tmp_path, "--judge-budget", "5", "--judge-budget", "7calls", "--until", "1")
    assert "--judge-budget gives calls twice ('7calls')" in twice.output
    spent = _watch(tmp_path, "--judge-budget", "1000tokens", "--idle", "0", "--until", "1")
    assert spent.exit_code == 0, spent.output
    assert "judges read 1 (1 call(s), 0 tokens, $0.0000)" in spent.output  # a judge without usage


def test_a_watch_that_collects_the_apps_spans_itself_scores_its_conversations(
    tmp_path: Path,
    capture_spans,
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from tests._sources._spans.test_collector import run_adk

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    ran: list[str] = []

    def app() -> None:  # a real ADK app exporting through the SDK, once the watch listens
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.02)
        capture_spans.add(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        ran.extend(asyncio.run(run_adk()) for _ in range(2))

    module = tmp_path / "metrics_collecting.py"
    module.write_text(METRICS)
    spans = tmp_path / "spans.db"
    words = ["watch", f"adk-spans:{spans}", "--collect", f"127.0.0.1:{port}"]
    words += ["--metrics", str(module), "--state", str(tmp_path / "w.db"), "--poll", "0.05"]
    running = threading.Thread(target=app)
    running.start()
    result = CliRunner().invoke(main, [*words, "--idle", "0.3s", "--until", "2"])
    running.join()
    assert result.exit_code == 0, result.output
    assert f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:{port}/v1/traces" in result.output
    assert "watched: 2 conversation(s) scored" in result.output
    assert "collector stopped:" in result.output
    assert len(ran) == 2
    with pytest.raises(httpx.ConnectError):  # the collector stopped with the watch
        httpx.post(f"http://127.0.0.1:{port}/v1/traces", timeout=1)
    wrong = CliRunner().invoke(main, ["watch", "sqlite:///x.db", "--collect", "127.0.0.1:0",
                                      "--metrics", str(module)])  # fmt: skip
    assert wrong.exit_code == 2
    assert "give SESSIONS as adk-spans:PATH" in wrong.output
