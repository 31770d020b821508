"""``run``'s cassette options over what ``ADK_EVAL_MODEL_CALLS`` already holds."""

from __future__ import annotations

from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval.models import ModelCalls
from adk_eval.models._settings import MODEL_CALLS_ENV

GREETS = """
greets = EvalCase(name="greets", agent=LlmAgent(name="a", model=ScriptedLlm(["Hello."])),
                  first_message="hi")
"""


def test_record_models_wins_over_a_replay_the_variable_held_and_the_reverse(
    write_evals, tmp_path, monkeypatch
):
    root = write_evals({"greets_eval.py": GREETS})
    tapes, old = tmp_path / "tapes", tmp_path / "old"
    old.mkdir()
    monkeypatch.setenv(MODEL_CALLS_ENV, ModelCalls(replay=old, max_wait=7).to_env())
    recorded = CliRunner().invoke(
        main, ["run", str(root), "--no-store", "--record-models", str(tapes)]
    )
    assert recorded.exit_code == 0, recorded.output  # was: record or replay, not both
    assert (tapes / "greets" / "attempt-0.json").is_file()

    monkeypatch.setenv(MODEL_CALLS_ENV, ModelCalls(record=old, max_wait=7).to_env())
    replayed = CliRunner().invoke(
        main, ["run", str(root), "--no-store", "--replay-models", str(tapes)]
    )
    assert replayed.exit_code == 0, replayed.output
    assert "cassette 1 replayed / 0 recorded" in replayed.output
    assert list(old.iterdir()) == []

    both = ["--record-models", str(tapes), "--replay-models", str(tapes)]
    refused = CliRunner().invoke(main, ["run", str(root), "--no-store", *both])
    assert refused.exit_code == 2
    assert "--record-models and --replay-models: record or replay, not both" in refused.output
