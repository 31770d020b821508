"""A run's gate: the provider line's words about the cache."""

from __future__ import annotations

from adk_eval.models._gate import ProviderStats


def test_a_run_without_cache_hits_claims_no_saving():
    assert ProviderStats(calls=3, cache_misses=3).line() == "cache 0 hits / 3 misses"


def test_hits_say_what_they_saved_or_why_it_is_not_known():
    assert ProviderStats(cache_hits=2, saved_usd=0.0012).line() == (
        "cache 2 hits / 0 misses, saved $0.0012"
    )
    assert ProviderStats(cache_hits=1, saved_usd=0.00002).line() == (
        "cache 1 hit / 0 misses, saved $0.000020"  # not rounded to nothing
    )
    assert ProviderStats(cache_hits=2, cache_misses=1, saved_usd=None).line() == (
        "cache 2 hits / 1 miss, saved an unknown amount (a model without a known price)"
    )
