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


def test_is_loaded_instance_imports_nothing_and_tests_a_loaded_class(tmp_path, monkeypatch):
    import sys

    from adk_eval._lazy import is_loaded_instance

    (tmp_path / "never_imported_here.py").write_text("class Kind:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not is_loaded_instance(object(), "never_imported_here", "Kind")
    assert "never_imported_here" not in sys.modules
    import never_imported_here

    try:
        assert is_loaded_instance(never_imported_here.Kind(), "never_imported_here", "Kind")
        assert not is_loaded_instance(object(), "never_imported_here", "Kind")
    finally:
        del sys.modules["never_imported_here"]
