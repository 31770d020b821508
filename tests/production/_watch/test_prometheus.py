"""The metrics endpoint scraped over HTTP: the text format, strictly parsed (and by promtool)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import httpx
import pytest

from adk_eval import EvalSetupError
from adk_eval.production._watch._loop import WatchSummary
from adk_eval.production._watch._prometheus import CONTENT_TYPE, PrometheusEndpoint
from adk_eval.production._watch._verdict import Alert, WatchVerdict

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{((?:{_LABEL})(?:,{_LABEL})*)?\}})? (\S+)$")
_VALUE = re.compile(r"^(NaN|[+-]Inf|[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$")


def parse(text: str) -> dict[str, tuple[str, str, dict[frozenset, float]]]:
    """A strict parser of the text format (0.0.4) for counters and gauges: any slip raises."""
    families: dict[str, tuple[str, str, dict[frozenset, float]]] = {}
    helps: dict[str, str] = {}
    assert text.endswith("\n")
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert re.fullmatch(_NAME, name), line
            assert name not in helps, f"HELP twice: {line}"
            helps[name] = help_text
        elif line.startswith("# TYPE "):
            name, kind = line[7:].split(" ")
            assert kind in ("counter", "gauge"), line
            assert name in helps, f"TYPE before HELP: {line}"
            assert name not in families, f"TYPE twice: {line}"
            families[name] = (kind, helps[name], {})
        else:
            match = _SAMPLE.match(line)
            assert match, f"not a sample: {line!r}"
            name, value = match.group(1), match.group(match.lastindex or 0)
            assert name == list(families)[-1], f"sample outside its family: {line}"
            assert _VALUE.match(value), line
            labels = frozenset(re.findall(_LABEL, match.group(2) or ""))
            samples = families[name][2]
            assert labels not in samples, f"sample twice: {line}"
            samples[labels] = float(value)
    return families


def fed(endpoint: PrometheusEndpoint) -> PrometheusEndpoint:
    for passed in (True, True, True, False):
        endpoint(WatchVerdict("shop/ann/s1", "helpful", passed, party=None if passed else "agent"))
    endpoint(WatchVerdict("shop/ann/s1", 'odd "name"\\x', None))
    endpoint(WatchVerdict("shop/ann/s2", "tone", False, 0.2, "user", judged=True))
    endpoint.scored(5)
    endpoint.skipped("sampled_out", 40)
    endpoint.skipped("budget")
    endpoint.judge_spend(calls=1, tokens=812, cost=0.0015)
    endpoint.alert(Alert("helpful", 0.9, 0.75, (0.05, 0.25)))
    return endpoint


def test_a_scrape_is_the_text_format_with_every_count():
    with fed(PrometheusEndpoint(port=0)) as endpoint:
        response = httpx.get(endpoint.url)
    assert response.status_code == 200
    assert response.headers["content-type"] == CONTENT_TYPE
    families = parse(response.text)

    def value(name: str, **labels: str) -> float:
        return families[f"adk_eval_watch_{name}"][2][frozenset(labels.items())]

    assert value("verdicts_total", metric="helpful", outcome="pass") == 3
    assert value("verdicts_total", metric="helpful", outcome="fail") == 1
    assert value("verdicts_total", metric='odd \\"name\\"\\\\x', outcome="not_applicable") == 1
    assert value("pass_rate", metric="helpful") == 0.75
    assert value("pass_rate", metric="tone") == 0
    assert value("failures_total", metric="helpful", party="agent") == 1
    assert value("failures_total", metric="tone", party="user") == 1
    assert value("judged_verdicts_total", metric="tone") == 1
    assert value("conversations_scored_total") == 5
    assert value("conversations_skipped_total", reason="sampled_out") == 40
    assert value("conversations_skipped_total", reason="budget") == 1
    assert value("judge_calls_total") == 1
    assert value("judge_tokens_total") == 812
    assert value("judge_cost_usd_total") == 0.0015
    assert value("alerts_total", metric="helpful") == 1
    assert families["adk_eval_watch_pass_rate"][0] == "gauge"
    assert "shop/ann" not in response.text  # no conversation names: counts only


def test_a_watch_summarys_totals_are_followed():
    endpoint = PrometheusEndpoint(port=0)
    summary = WatchSummary(scored=7, skipped_sample=5, skipped_budget=1, judge_calls=2)
    endpoint.follow(summary)
    summary.scored, summary.judge_calls = 9, 3  # totals grow; the next follow sets them
    summary.judge_tokens, summary.judge_cost = 1200, 0.25
    endpoint.follow(summary)
    families = parse(endpoint.text())
    assert families["adk_eval_watch_conversations_scored_total"][2] == {frozenset(): 9}
    assert families["adk_eval_watch_judge_calls_total"][2] == {frozenset(): 3}
    assert families["adk_eval_watch_judge_tokens_total"][2] == {frozenset(): 1200}
    assert families["adk_eval_watch_judge_cost_usd_total"][2] == {frozenset(): 0.25}
    assert families["adk_eval_watch_conversations_skipped_total"][2] == {
        frozenset({("reason", "sampled_out")}): 5,
        frozenset({("reason", "budget")}): 1,
        frozenset({("reason", "unreadable")}): 0,
    }


def test_other_paths_and_methods_are_refused_and_remote_hosts_need_allow_remote():
    with PrometheusEndpoint(port=0) as endpoint:
        base = endpoint.url.removesuffix("/metrics")
        assert httpx.get(base + "/").status_code == 404
        assert httpx.post(endpoint.url).status_code == 405
        assert parse(httpx.get(endpoint.url).text)  # empty counts are still the format
    with pytest.raises(EvalSetupError, match="not a loopback address"):
        PrometheusEndpoint("0.0.0.0", 0).start()


@pytest.mark.skipif(
    shutil.which("promtool") is None, reason="promtool (Debian's prometheus) absent"
)
def test_promtool_finds_nothing_to_lint_in_a_scrape():
    with fed(PrometheusEndpoint(port=0)) as endpoint:
        text = httpx.get(endpoint.url).text
    checked = subprocess.run(
        ["promtool", "check", "metrics"], input=text, capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian's prometheus absent")
def test_prometheus_itself_scrapes_the_endpoint(tmp_path: Path):
    with fed(PrometheusEndpoint(port=0)) as endpoint:
        target = endpoint.url.removeprefix("http://").removesuffix("/metrics")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s}\nscrape_configs:\n"
            f"  - job_name: watch\n    static_configs: [{{targets: ['{target}']}}]\n"
        )
        port = free_port()
        server = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'db'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            query = f"http://127.0.0.1:{port}/api/v1/query?query=adk_eval_watch_judge_tokens_total"
            deadline, result = time.monotonic() + 20, []
            while time.monotonic() < deadline and not result:
                time.sleep(0.5)
                try:
                    with urllib.request.urlopen(query, timeout=2) as answer:
                        result = json.load(answer)["data"]["result"]
                except OSError:
                    continue
        finally:
            server.terminate()
            server.wait(10)
    assert [float(sample["value"][1]) for sample in result] == [812.0]
