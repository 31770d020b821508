"""adk-eval watch: a bounded watch over a real store, its summary, resume and one-line errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

from click.testing import CliRunner

from adk_eval._cli import main
from tests.production._watch.watching import write

METRICS = "from tests.production._watch.watching import CHEAP, Judge\nJUDGE = Judge()\n"


def _watch(tmp_path: Path, *args: str):
    metrics = tmp_path / f"metrics_{tmp_path.name}.py"  # (one module name per test)
    metrics.write_text(METRICS)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    state = str(tmp_path / "watch.db")
    words = ["watch", store, "--metrics", str(metrics), "--state", state, "--poll", "0.01"]
    return CliRunner().invoke(main, [*words, *args])


def test_a_bounded_watch_scores_samples_resumes_and_exits_0(tmp_path: Path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 6, two_turns_every=99))
    first = _watch(tmp_path, "--idle", "0s", "--sample", "0.5", "--seed", "3", "--until", "6")
    assert first.exit_code == 0, first.output
    assert "watching" in first.output
    assert "read-only" in first.output
    summary = first.output.splitlines()[-1]
    assert summary.startswith("watched: 6 conversation(s) scored (0 again after a change)")
    assert "not sampled" in summary
    again = _watch(tmp_path, "--idle", "0", "--sample", "0.5", "--seed", "3", "--until", "0.2s")
    assert again.exit_code == 0, again.output
    assert again.output.splitlines()[-1].startswith("watched: 0 conversation(s) scored")
    other_seed = _watch(tmp_path, "--idle", "0", "--sample", "0.5", "--until", "1")
    assert other_seed.exit_code == 2
    assert "sampling with seed 3, not 0: give --seed 3" in other_seed.output


def test_wrong_bounds_and_durations_are_one_line(tmp_path: Path) -> None:
    asyncio.run(write(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", 1))
    for args, said in (
        (["--until", "0"], "--until 0: give at least 1 conversation"),
        (["--idle", "soon"], "--idle 'soon' is not a duration (90s, 3m, 1h)"),
        (["--until", "10 years"], "--until '10 years' is not a duration"),
    ):
        result = _watch(tmp_path, *args)
        assert result.exit_code == 2, result.output
        assert said in result.output
        assert "Traceback" not in result.output
