"""The JSON report's provider objects: per run, summed per suite, and old reports still valid."""

from __future__ import annotations

import json

import jsonschema
import pytest

from adk_eval import EvalResult
from adk_eval._suites._results import suite_from_results
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.reporting import load_report_schema, suite_report

RETRIED = ProviderStats(calls=3, retries=2, rate_limited=2, server_errors=0, waited_s=4.1)
UNPRICED = ProviderStats(calls=1, cache_hits=3, cache_misses=1, saved_usd=None, replayed=2)


def report() -> dict:
    runs = [
        EvalResult(name="books", status="passed", provider=RETRIED),
        EvalResult(name="asks", status="failed", provider=UNPRICED),
        EvalResult(name="greets", status="passed"),
    ]
    names = [run.name for run in runs]
    return suite_report(suite_from_results(runs, case_names=names, repeat=1, duration_ms=1.0))


def test_each_run_and_the_suite_carry_their_provider_stats():
    data = report()
    jsonschema.validate(data, load_report_schema())
    json.dumps(data, allow_nan=False)
    by_name = {run["name"]: run["provider"] for run in data["results"]}
    assert by_name["books"] == RETRIED.to_data()
    assert by_name["asks"]["saved_usd"] is None  # the cache saved an unknown amount
    assert by_name["greets"] == ProviderStats().to_data()
    assert data["provider"] == (RETRIED + UNPRICED).to_data()
    assert data["provider"]["saved_usd"] is None
    assert ProviderStats.from_data(data["provider"]) == RETRIED + UNPRICED + ProviderStats()


def test_a_report_written_before_provider_stats_still_validates():
    data = report()
    del data["provider"]
    for run in data["results"]:
        del run["provider"]
    jsonschema.validate(data, load_report_schema())


@pytest.mark.parametrize(
    ("field", "value"), [("retries", -1), ("waited_s", "4.1 s"), ("cache_hits", None)]
)
def test_the_schema_refuses_a_malformed_provider_object(field, value):
    data = report()
    data["results"][0]["provider"][field] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, load_report_schema())
    data = report()
    del data["provider"][field]  # every field is there when the object is
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, load_report_schema())
