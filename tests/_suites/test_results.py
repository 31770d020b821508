"""`EvalSuiteResult.provider`: the runs' provider stats summed, kept through merges and scores."""

from __future__ import annotations

from adk_eval import EvalResult
from adk_eval._suites._results import suite_from_results
from adk_eval._suites._shards import merge_results, write_results
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.production._tally import StoreScore, Tally

RETRIED = ProviderStats(calls=3, retries=2, rate_limited=2, waited_s=4.1)
CACHED = ProviderStats(calls=1, cache_hits=3, cache_misses=1, saved_usd=0.0012)


def results() -> list[EvalResult]:
    return [
        EvalResult(name="books", status="passed", provider=RETRIED),
        EvalResult(name="books", status="failed", attempt=1, provider=CACHED),
        EvalResult(name="greets", status="passed"),
    ]


def test_a_suite_sums_its_runs_provider_stats():
    suite = suite_from_results(
        results(), case_names=["books", "greets"], repeat=2, duration_ms=10.0
    )
    total = suite.provider
    assert total == RETRIED + CACHED
    assert (total.calls, total.retries, total.rate_limited, total.cache_hits) == (4, 2, 2, 3)
    assert total.line() == (
        "2 retries (2 rate-limited), waited 4.1 s; cache 3 hits / 1 miss, saved $0.0012"
    )


def test_an_unknown_saving_makes_the_suites_unknown_and_no_runs_make_nothing():
    unpriced = ProviderStats(cache_hits=1, saved_usd=None)
    suite = suite_from_results(
        [*results(), EvalResult(name="asks", status="passed", provider=unpriced)],
        case_names=["books", "greets", "asks"],
        repeat=2,
        duration_ms=10.0,
    )
    assert suite.provider.saved_usd is None
    assert suite.provider.cache_hits == 4
    empty = suite_from_results([], case_names=["books"], repeat=1, duration_ms=0.0)
    assert empty.provider == ProviderStats()
    assert not empty.provider.eventful


def test_merged_shards_keep_every_runs_provider_stats(tmp_path):
    first, second = results()[:2], results()[2:]
    paths = []
    for number, runs in enumerate((first, second)):
        names = sorted({run.name for run in runs})
        shard = suite_from_results(runs, case_names=names, repeat=2, duration_ms=5.0)
        path = tmp_path / f"shard-{number}.json"
        write_results(path, shard, names, {"books": 0, "greets": 1})
        paths.append(path)

    merged = merge_results(paths)
    assert [run.provider for run in merged.results] == [RETRIED, CACHED, ProviderStats()]
    assert merged.provider == RETRIED + CACHED


def test_a_store_score_sums_the_runs_it_lists():
    tally = Tally()
    for index, result in enumerate(results()):  # one run per session, each its own name
        tally.add(index, EvalResult(f"session-{index}", result.status, provider=result.provider))
    score = tally.score(duration_ms=1.0)
    assert isinstance(score, StoreScore)
    assert score.provider == RETRIED + CACHED
