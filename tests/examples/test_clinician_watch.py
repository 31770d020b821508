"""The clinician's "Watching production" step: `adk-eval watch` over its production store.

The README's command with a short bound: every conversation `production.py`
wrote (10 here, to keep it short) is scored once by the example's metrics file,
a second watch on the same state file scores none again, and the store is only
read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

ROOT = Path(__file__).resolve().parents[2]
METRICS_FILE = ROOT / "examples" / "clinician" / "watch_metrics.py"


def _watch(store: Path, state: Path) -> tuple[int, str]:
    """The README's watch, bounded to 1 s and polling fast (idle 0 s: the store is written)."""
    done = CliRunner().invoke(
        main,
        [
            "watch",
            f"sqlite:///{store}",
            "--metrics",
            str(METRICS_FILE),
            "--idle",
            "0s",
            "--poll",
            "0.1s",
            "--until",
            "1s",
            "--include-open",
            "--state",
            str(state),
        ],
    )
    return done.exit_code, done.output


@pytest.mark.slow
def test_a_watch_over_the_production_store_scores_each_conversation_once(tmp_path):
    from examples.clinician import production

    store = production.main(["--out", str(tmp_path / "production"), "--conversations", "10"])
    before = hashlib.sha256(store.read_bytes()).hexdigest()

    code, output = _watch(store, tmp_path / "watch.db")

    assert code == 0, output
    assert "with 2 metric(s): routed, efficient_triage" in output
    summary = next(line for line in output.splitlines() if line.startswith("watched: "))
    assert summary.startswith(
        "watched: 10 conversation(s) scored (0 again after a change), 20 verdict(s)"
    )
    assert "0 open; 0 alert(s)" in summary
    assert "ALERT" not in output

    code, again = _watch(store, tmp_path / "watch.db")

    assert code == 0, again
    assert "watched: 0 conversation(s) scored (0 again after a change), 0 verdict(s)" in again
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
