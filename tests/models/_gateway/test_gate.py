"""A run's gate: built complete (its cassette given), typed counts, and the provider line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import adk_eval.models
from adk_eval.models import ModelCalls
from adk_eval.models._gateway._cassette import Cassette
from adk_eval.models._gateway._gate import Gateway
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.models._pacing._pacer import LocalPacer


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


def test_a_gates_counts_are_named_fields_and_its_cassette_is_given_when_it_is_built(tmp_path):
    gate = Gateway(ModelCalls(record=tmp_path), LocalPacer()).gate("greets", 1)
    assert isinstance(gate.cassette, Cassette)
    assert gate.cassette.path == tmp_path / "greets" / "attempt-1.json"
    gate.count(ProviderStats(replayed=1))
    gate.count(ProviderStats(cache_hits=1, saved_usd=0.5))
    gate.count(ProviderStats(cache_hits=1, saved_usd=None))  # a model without a price
    assert (gate.stats().replayed, gate.stats().cache_hits, gate.stats().saved_usd) == (1, 2, None)
    with pytest.raises(TypeError):
        ProviderStats(replay=1)  # type: ignore[call-arg]  # a misspelt count is no count
    assert Gateway(ModelCalls(), LocalPacer()).gate("greets", 0).cassette is None


def test_nothing_in_models_keeps_a_pacer_or_settings_of_its_process():
    package = Path(adk_eval.models.__file__).parent
    kept = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        kept += [f"{path.name}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Global)]
        for node in tree.body:  # module level: a pacer, or a variable the settings come from
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                said = ast.unparse(node.value)
                if "Pacer(" in said or ("ContextVar" in said and "model_calls" in said):
                    kept.append(f"{path.name}:{node.lineno}")
    assert kept == []
