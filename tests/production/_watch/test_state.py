"""A watch's state file: names and marks committed, its seed kept, a foreign file one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_eval._errors import EvalSetupError
from adk_eval.production._watch._state import WatchState


def test_marks_and_the_settled_point_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "watch.db"
    state = WatchState(path, seed=4)
    state.record("shop/ann/s1", (100.0, 4), at=101.0)
    state.record("shop/bob/s9", (100.0, 4), at=101.0)
    assert state.seen("shop/bob/s9", (100.0, 4))  # held: seen before its commit
    state.commit()
    state.record("shop/bob/s9", (110.0, 5), at=111.0)  # never committed: lost with the process
    state.settle(90.0)
    state.settle(80.0)  # never back
    state.close()
    again = WatchState(path, seed=4)
    assert again.seen("shop/ann/s1", (100.0, 4))
    assert not again.seen("shop/ann/s1", (100.0, 6))  # more events: changed
    assert not again.seen("shop/ann/s1", (120.0, 4))  # updated later: changed
    assert not again.seen("shop/bob/s2", (1.0, 1))
    assert again.seen("shop/bob/s9", (100.0, 4))
    assert not again.seen("shop/bob/s9", (110.0, 5))  # what was not committed is scored again
    assert (again.settled, again.count()) == (90.0, 2)
    again.close()


def test_another_seed_or_a_file_that_is_no_state_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "watch.db"
    WatchState(path, seed=4).close()
    with pytest.raises(EvalSetupError, match="seed 4, not 5: give --seed 4"):
        WatchState(path, seed=5)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a database\n" * 100)
    with pytest.raises(EvalSetupError, match=r"cannot use .*notes\.txt as a watch's state file"):
        WatchState(notes, seed=0)
    assert notes.read_text() == "my notes, not a database\n" * 100  # left as it was
