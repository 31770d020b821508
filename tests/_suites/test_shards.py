"""CI shards: each machine runs a deterministic share; the merged run equals a one-process run."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval._errors import AdkEvalError
from adk_eval._suites._shards import parse_shard, read_durations, shard_names

from .._reports import report_view

SUITE = """
def case(name, reply):
    agent = LlmAgent(name="a", model=ScriptedLlm(responder=lambda r: reply))
    said = event_count_metric("said_ok", "agent_message", lambda m: m.text == "ok",
                              lambda n: n >= 1)
    return EvalCase(name=name, agent=agent, first_message="hi", metrics=[said])

CASES = [case(f"case-{i}", "ok" if i % 3 else "no") for i in range(7)]
"""


def test_shards_partition_the_cases_deterministically():
    names = [f"c{i}" for i in range(10)]
    parts = [shard_names(reversed(names), k, 3) for k in (1, 2, 3)]
    assert set().union(*parts) == set(names)
    assert sum(len(p) for p in parts) == 10  # disjoint
    assert sorted(len(p) for p in parts) == [3, 3, 4]  # balanced by count
    assert parts == [shard_names(names, k, 3) for k in (1, 2, 3)]  # order does not matter
    with pytest.raises(ValueError, match="K/N with 1 <= K <= N"):
        parse_shard("3/2")


def test_two_shards_merged_equal_one_process(write_evals, tmp_path):
    root = write_evals({"suite_eval.py": SUITE})
    run = CliRunner()

    whole = run.invoke(
        main,
        ["run", str(root), "--repeat", "2", "--no-store", "--json", str(tmp_path / "whole.json")],
    )
    assert whole.exit_code == 1, whole.output  # case-0, case-3, case-6 fail
    for k in (1, 2):
        shard = run.invoke(
            main,
            [
                "run",
                str(root),
                "--repeat",
                "2",
                "--no-store",
                "--shard",
                f"{k}/2",
                "--results",
                str(tmp_path / f"{k}.json"),
            ],
        )
        assert shard.exit_code in (0, 1), shard.output
    db = tmp_path / "runs.db"
    merged = run.invoke(
        main,
        [
            "merge",
            str(tmp_path / "1.json"),
            str(tmp_path / "2.json"),
            "--json",
            str(tmp_path / "merged.json"),
            "--db",
            str(db),
        ],
    )
    assert merged.exit_code == 1, merged.output
    assert "merged 2 shard(s), 7 case(s)" in merged.output
    assert "stored as run 1" in merged.output

    assert report_view(tmp_path / "merged.json") == report_view(tmp_path / "whole.json")

    again = run.invoke(
        main, ["merge", str(tmp_path / "1.json"), str(tmp_path / "1.json"), "--no-store"]
    )
    assert again.exit_code == 2
    assert "merge each shard once" in again.output


def test_durations_balance_the_shards_by_time(tmp_path):
    durations = {"long": 10.0, "a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}
    names = [*durations, "new"]  # `new` is unknown: it counts as the mean (2.8 s)
    parts = [shard_names(names, k, 2, durations) for k in (1, 2)]
    assert parts == [{"long"}, {"a", "b", "c", "d", "new"}]
    assert parts == [shard_names(reversed(names), k, 2, durations) for k in (1, 2)]

    report = tmp_path / "r.json"
    report.write_text(
        '{"results": [{"name": "x", "duration_ms": 1000}, {"name": "x", "duration_ms": 3000}]}'
    )
    assert read_durations(report) == {"x": 2.0}
    report.write_text('{"cases": []}')
    with pytest.raises(AdkEvalError, match="not a JSON report or results file"):
        read_durations(report)


def one_shard(write_evals, tmp_path) -> dict:
    """The results file of a two-case shard run twice each (as JSON data)."""
    root = write_evals({"suite_eval.py": SUITE.replace("range(7)", "range(2)")})
    path = tmp_path / "shard.json"
    done = CliRunner().invoke(
        main, ["run", str(root), "--repeat", "2", "--no-store", "--results", str(path)]
    )
    assert done.exit_code == 1, done.output
    return json.loads(path.read_text())


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE = {
    "missing key": (lambda d: d.pop("cases"), "is not a valid results file"),
    "case not listed": (lambda d: d["cases"].pop(), "a case the file does not list"),
    "other version": (lambda d: d.update(version=2), "results file of version 2"),
    "other format": (lambda d: d.update(format="other"), "is not an adk-eval results file"),
    "malformed event": (
        lambda d: d["results"][0]["events"].append({"author": 5, "actions": "x"}),
        "result 0 is not a run adk-eval wrote",
    ),
    "malformed metric": (
        lambda d: d["results"][1]["metrics"].update(m={"passes": "yes"}),
        "result 1 is not a run adk-eval wrote",
    ),
    "wrong type": (lambda d: d.update(repeat="2"), "is not a valid results file"),
    "repeat zero": (lambda d: d.update(repeat=0), "is not a valid results file"),
    "repeat negative": (lambda d: d.update(repeat=-1), "is not a valid results file"),
    "results not a list": (lambda d: d.update(results={}), "is not a valid results file"),
    "run twice": (lambda d: d["results"].append(d["results"][0]), "there twice"),
    "attempt past repeat": (
        lambda d: d["results"][0].update(attempt=5),
        "past --repeat",
    ),
    "unknown status": (
        lambda d: d["results"][0].update(status="bogus"),
        "result 0 is not a run adk-eval wrote",
    ),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_merge_refuses_a_hostile_or_stale_results_file_with_one_line(write_evals, tmp_path, kind):
    data = one_shard(write_evals, tmp_path)
    change, message = HOSTILE[kind]
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    merged = CliRunner().invoke(main, ["merge", str(path), "--no-store"])
    assert merged.exit_code == 2, merged.output
    assert message in merged.output
    assert "Traceback" not in merged.output
    assert len(merged.output.strip().splitlines()) == 1, merged.output


@pytest.mark.parametrize(
    ("content", "message"),
    [(nested(100_000), "nests too deeply"), ("{", "is not JSON"), (b"\xff\xfe", "not UTF-8")],
)
def test_merge_refuses_unreadable_files_with_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    merged = CliRunner().invoke(main, ["merge", str(path), "--no-store"])
    assert merged.exit_code == 2, merged.output
    assert message in merged.output


def test_merge_refuses_a_fifo_at_once(tmp_path):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    merged = CliRunner().invoke(main, ["merge", str(fifo), "--no-store"])
    assert merged.exit_code == 2, merged.output
    assert "not a regular file" in merged.output
    with pytest.raises(AdkEvalError, match="not a regular file"):
        read_durations(fifo)
