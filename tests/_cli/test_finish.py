"""How a suite's command ends: what the runs' model calls met at their providers, everywhere."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest
from click.testing import CliRunner

from adk_eval import EvalErrorInfo, EvalResult
from adk_eval._cli import main
from adk_eval._suites._results import suite_from_results
from adk_eval._suites._shards import write_results
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.reporting import load_report_schema

RETRIED = ProviderStats(calls=3, retries=2, rate_limited=2, waited_s=4.1)
CACHED = ProviderStats(calls=1, cache_hits=3, cache_misses=1, saved_usd=0.0012)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_merge_shows_each_runs_provider_line_and_the_suites_total(tmp_path):
    down = EvalErrorInfo(phase="system", message="down", type="RuntimeError")
    runs = [
        EvalResult(name="books", status="passed", provider=RETRIED),
        EvalResult(name="greets", status="passed", provider=ProviderStats(calls=1)),
        EvalResult(name="fails", status="error", error=down, provider=CACHED),
    ]
    names = [run.name for run in runs]
    suite = suite_from_results(runs, case_names=names, repeat=1, duration_ms=5.0)
    results = tmp_path / "shard.json"
    write_results(results, suite, names, {name: n for n, name in enumerate(names)})
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"

    merged = invoke(
        "merge", str(results), "--json", str(report), "--junit-xml", str(junit), "--no-store"
    )

    assert merged.exit_code == 1, merged.output
    lines = merged.output.splitlines()
    assert "providers: cache 3 hits / 1 miss, saved $0.0012" in lines  # in the explanation
    block = lines.index("providers of runs that passed:")
    assert lines[block + 1 : block + 3] == [
        "  books: 2 retries (2 rate-limited), waited 4.1 s",
        "",
    ]  # greets: nothing worth a line
    total = (
        "providers: 2 retries (2 rate-limited), waited 4.1 s; cache 3 hits / 1 miss, saved $0.0012"
    )
    assert lines.index(total) == lines.index(next(li for li in lines if " in 0.0s" in li)) - 1

    data = json.loads(report.read_text())
    jsonschema.validate(data, load_report_schema())
    assert data["provider"] == (RETRIED + ProviderStats(calls=1) + CACHED).to_data()
    assert [r["provider"]["retries"] for r in data["results"]] == [2, 0, 0]
    testsuite = ET.parse(junit).getroot().find("testsuite")
    suite_properties = {p.get("name"): p.get("value") for p in testsuite.find("properties")}
    assert suite_properties["provider.retries"] == "2"
    assert suite_properties["provider.cache_hits"] == "3"


def test_an_offline_suite_says_nothing_about_providers(tmp_path):
    runs = [EvalResult(name="greets", status="passed", provider=ProviderStats(calls=2))]
    suite = suite_from_results(runs, case_names=["greets"], repeat=1, duration_ms=5.0)
    results = tmp_path / "shard.json"
    write_results(results, suite, ["greets"], {"greets": 0})

    merged = invoke("merge", str(results), "--no-store")

    assert merged.exit_code == 0, merged.output
    assert "providers" not in merged.output


SCRIPTED = """
greets = [EvalCase(name=f"greets-{n}", agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
                   first_message="hi") for n in range(4)]
"""


@pytest.mark.parametrize("workers", [None, "2"])
def test_scripted_models_have_no_provider_to_wait_for(write_evals, workers):
    root = write_evals({"scripted_eval.py": SCRIPTED})
    quota = ("--rpm", "1", "--max-provider-wait", "0.3")  # a quota for every model there is
    spread = ("--workers", workers) if workers else ()
    result = invoke("run", str(root), "--no-store", *quota, *spread)
    assert result.exit_code == 0, result.output
    assert "4 passed" in result.output
    assert "providers" not in result.output  # no wait, no retry: scripted models ask no one


RATE_LIMITED = """
import os
from google.adk.models.lite_llm import LiteLlm

def case(number):
    model = LiteLlm(
        model="openai/fake-model",
        api_base=os.environ["FAKE_PROVIDER_BASE"],
        api_key="test-key",
        num_retries=0,  # the gateway retries, not the OpenAI SDK underneath
        _skip_mcp_handler=True,
    )
    return EvalCase(name=f"asks-{number}", agent=LlmAgent(name="a", model=model),
                    first_message="hi")

CASES = [case(number) for number in range(4)]
"""


@pytest.mark.slow
def test_run_against_a_provider_over_its_quota_retries_and_says_so(
    write_evals, tmp_path, monkeypatch
):
    from adk_eval.fake_provider import FakeProviderServer, Quota

    root = write_evals({"quota_eval.py": RATE_LIMITED})
    report = tmp_path / "report.json"
    with FakeProviderServer(["ok"], quota=Quota(requests=2, window=1.0)) as server:
        monkeypatch.setenv("FAKE_PROVIDER_BASE", server.openai_base)
        result = invoke("run", str(root), "--concurrency", "4", "--json", str(report), "--no-store")

    assert result.exit_code == 0, result.output
    assert server.rejections > 0
    data = json.loads(report.read_text())
    assert data["summary"]["passed"] == 4
    rate_limited = sum(run["provider"]["rate_limited"] for run in data["results"])
    assert rate_limited == data["provider"]["rate_limited"] > 0
    (line,) = [line for line in result.output.splitlines() if line.startswith("providers: ")]
    retries = data["provider"]["retries"]
    assert line.startswith(f"providers: {retries} retr")
    assert f"({rate_limited} rate-limited), waited " in line
    assert "providers of runs that passed:" in result.output
