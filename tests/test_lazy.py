"""Importing cheaply: loading without garbage collection, and freezing what loaded."""

from __future__ import annotations

import gc

from adk_eval._lazy import imports_without_collections


def test_imports_run_without_collections_and_what_they_made_is_frozen():
    before = gc.get_freeze_count()
    try:
        with imports_without_collections():
            assert not gc.isenabled()
            made = [[] for _ in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(made)
    finally:
        gc.unfreeze()
