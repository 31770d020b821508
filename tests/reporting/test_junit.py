"""JUnit properties of what model calls met at their providers: per testcase and testsuite."""

from __future__ import annotations

from adk_eval import EvalResult
from adk_eval._suites._results import suite_from_results
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.reporting import junit_xml

RETRIED = ProviderStats(calls=3, retries=2, rate_limited=2, waited_s=4.1)
UNPRICED = ProviderStats(calls=1, cache_hits=3, saved_usd=None, recorded=1)


def properties(element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in element.find("properties")}


def provider_properties(element) -> dict[str, str]:
    found = properties(element)
    return {name: value for name, value in found.items() if name.startswith("provider.")}


def test_a_testcase_has_its_provider_stats_that_are_not_zero_and_the_suite_their_sum():
    runs = [
        EvalResult(name="books", status="passed", provider=RETRIED),
        EvalResult(name="asks", status="failed", provider=UNPRICED),
        EvalResult(name="greets", status="passed", provider=ProviderStats(calls=2)),
    ]
    names = [run.name for run in runs]
    suite = suite_from_results(runs, case_names=names, repeat=1, duration_ms=1.0)
    root = junit_xml(suite).getroot()
    cases = {case.get("name"): case for case in root.iter("testcase")}

    assert provider_properties(cases["books"]) == {
        "provider.calls": "3",
        "provider.retries": "2",
        "provider.rate_limited": "2",
        "provider.waited_s": "4.100",
    }
    assert provider_properties(cases["asks"]) == {
        "provider.calls": "1",
        "provider.cache_hits": "3",
        "provider.saved_usd": "unknown",
        "provider.recorded": "1",
    }
    assert provider_properties(cases["greets"]) == {}  # calls alone are not worth properties
    assert provider_properties(root.find("testsuite")) == {
        "provider.calls": "6",
        "provider.retries": "2",
        "provider.rate_limited": "2",
        "provider.waited_s": "4.100",
        "provider.cache_hits": "3",
        "provider.saved_usd": "unknown",
        "provider.recorded": "1",
    }


def test_a_suite_whose_calls_met_nothing_has_no_provider_properties():
    runs = [EvalResult(name="greets", status="passed", provider=ProviderStats(calls=2))]
    suite = suite_from_results(runs, case_names=["greets"], repeat=1, duration_ms=1.0)
    root = junit_xml(suite).getroot()
    assert provider_properties(root.find("testsuite")) == {}
    saved = ProviderStats(cache_hits=1, saved_usd=0.00125)
    runs = [EvalResult(name="greets", status="passed", provider=saved)]
    suite = suite_from_results(runs, case_names=["greets"], repeat=1, duration_ms=1.0)
    (case,) = junit_xml(suite).getroot().iter("testcase")
    assert provider_properties(case) == {
        "provider.cache_hits": "1",
        "provider.saved_usd": "0.001250",
    }
