"""Smoke runs of the benchmarks with tiny sizes, so the scripts do not rot.

They check that each script runs and writes its JSON result with the figures;
the figures themselves are measured by running the scripts (docs/benchmarks.md),
never asserted here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def run_bench(script: str, tmp_path: Path, *args: str) -> dict:
    out = tmp_path / f"{script}.json"
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{script}.py"), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(out.read_text())


def test_overhead_bench(tmp_path):
    result = run_bench("overhead", tmp_path, "--turns", "1", "2", "--repeats", "1")
    assert [row["turns"] for row in result["rows"]] == [1, 2]
    assert all(row["ratio"] > 0 for row in result["rows"])
    assert result["setup_ms"] > 0


@pytest.mark.skipif(
    not (shutil.which("valgrind") and shutil.which("gcc")),
    reason="needs valgrind and gcc (.ci/run installs them)",
)
def test_overhead_bench_counts_instructions_under_callgrind(tmp_path):
    result = run_bench("overhead", tmp_path, "--instructions", "--turns", "1", "--repeats", "1")
    assert result["meter"] == "instructions"
    (row,) = result["rows"]
    # Whole instruction counts of one run each: millions, never a time in seconds.
    assert row["bare"][0] > 1e6
    assert row["harness"][0] > 1e6
    assert row["bare"][0] == int(row["bare"][0])


def test_throughput_bench(tmp_path):
    result = run_bench(
        "throughput",
        tmp_path,
        "--cases",
        "2",
        "--concurrency",
        "1",
        "2",
        "--delay",
        "0.01",
        "--repeats",
        "1",
    )
    assert [row["concurrency"] for row in result["rows"]] == [1, 2]
    assert all(row["wall_s"] > 0 and row["ideal_s"] > 0 for row in result["rows"])


def test_client_profile_bench(tmp_path):
    result = run_bench("profile_client", tmp_path, "--cases", "2", "--concurrency", "2")
    shares = result["self_time_percent"]
    assert shares["adk_eval (this project)"] > 0
    assert sum(shares.values()) == pytest.approx(100)


@pytest.mark.adk_cli
@pytest.mark.skipif(
    not os.environ.get("ADK_EVAL_ADK_CLI"), reason="needs `adk eval` (ADK_EVAL_ADK_CLI)"
)
def test_adk_eval_side_by_side_bench(tmp_path):
    result = run_bench(
        "versus_adk_eval", tmp_path, "--cases", "2", "--delay", "0.01", "--repeats", "1"
    )
    assert result["adk_eval"]["wall_s"] > 0
    assert result["adk_local_eval_service_p32"]["wall_s"] > 0
    assert result["adk_eval_cli"]["wall_s"] > 0
    assert result["ratio_at_32"] > 0


def test_throughput_bench_client_cpu_of_a_multi_turn_case_on_either_session_service(tmp_path):
    for sessions in ("adk", "eval"):
        result = run_bench(
            "throughput",
            tmp_path,
            "--cpu-only",
            "--cases",
            "2",
            "--turns",
            "2",
            "--sessions",
            sessions,
            "--repeats",
            "1",
        )
        assert result["sessions"] == sessions
        assert result["turns"] == 2
        assert result["cpu_per_case_ms"] > 0


def test_scale_bench(tmp_path):
    result = run_bench(
        "scale",
        tmp_path,
        "--cases",
        "8",
        "--concurrency",
        "4",
        "--repeats",
        "1",
        "--memory-cases",
        "8",
        "--labels",
        "fast",  # the slow suite takes the same path, with a delay
    )
    assert "slow" not in result
    for label in ("fast",):
        assert [row["workers"] for row in result[label]["rows"]] == [1, 2]
        assert all(row["cases_per_s"] > 0 for row in result[label]["rows"])
        assert result[label]["independent_processes_cases_per_s"] > 0
    assert all(
        0 < seconds < 60 for tries in result["startup_s"].values() for t in tries for seconds in t
    )
    assert len(result["memory"]["workers"]) == 2


def test_startup_bench(tmp_path):
    result = run_bench("startup", tmp_path, "--repeats", "1")
    assert result["floor_s"] > 0
    assert [row["command"] for row in result["rows"]] == [
        "adk-eval --help",
        "adk-eval run --help",
        "adk-eval runs",
        "adk-eval compare --help",
        "adk-eval run (one trivial case)",
        "bare ADK script, the same agent run once",
        "adk-eval mock-mcp --stdio (to its first answer)",
    ]
    assert result["run_to_bare_adk_run"] > 0


def test_workers_wall_bench(tmp_path):
    result = run_bench(
        "workers_wall",
        tmp_path,
        *("--suites", "scripted", "--targets", "1", "--repeats", "1", "--probe-cases", "2"),
        *("--sizings", "0"),  # the suite as given: no calibration runs
    )
    (row,) = result["rows"]
    assert row["suite"] == "scripted"
    assert set(row["median_s"]) == {"1", "2", "auto"}
    assert all(seconds > 0 for seconds in row["median_s"].values())


def test_score_store_bench(tmp_path):
    result = run_bench(
        "score_store", tmp_path, "--sessions", "20", "--seed-sessions", "6", "--repeats", "1"
    )
    assert result["sessions"] == 20
    assert result["sessions_per_s"] > 0
    assert result["runs"][0]["sessions"] == 20


def test_invariants_bench(tmp_path):
    result = run_bench("invariants", tmp_path, "--calls", "3", "--repeats", "1")
    assert result["invariants"] == 7
    assert result["with"] > 0


def test_budget_overshoot_bench(tmp_path):
    result = run_bench(
        "budget_overshoot",
        tmp_path,
        "--cases",
        "6",
        "--turns",
        "2",
        "--budget-runs",
        "2.5",
        "--concurrency",
        "1",
        "3",
    )
    assert [row["concurrency"] for row in result["rows"]] == [1, 3]
    for row in result["rows"]:  # every token paid is counted, the cancelled runs' too
        assert row["paid_tokens"] >= row["reported_tokens"] >= row["budget_tokens"]


def test_suite_scale_bench(tmp_path):
    result = run_bench("suite_scale", tmp_path, "--cases", "10", "20")
    assert [row["cases"] for row in result["rows"]] == [10, 20]
    assert all(row["cpu_ms_per_case"] > 0 for row in result["rows"])


def test_quota_pacing_bench(tmp_path):
    result = run_bench(
        "quota_pacing",
        tmp_path,
        "--cases",
        "4",  # 12 calls against 10 a window: the quota binds
        "--requests",
        "10",
        "--window",
        "1",
        "--clients",
        "gemini",
        "--placements",
        "process",
    )
    assert [row["mode"] for row in result["rows"]] == ["known", "learned"]
    for row in result["rows"]:  # the server's own count: never over the quota, every run ended
        assert row["max_admitted_in_a_window"] <= 10
        assert sum(row["statuses"].values()) == 4
    assert result["rows"][0]["refused_429"] == 0


def test_realism_memory_bench(tmp_path):
    result = run_bench("realism_memory", tmp_path, "--sizes", "20", "40", "--resamples", "5")
    rows = [(row["source"], row["task"], row["sessions"]) for row in result["rows"]]
    assert rows == [
        ("json", "mine", 20),
        ("json", "report", 20),
        ("json", "mine", 40),
        ("json", "report", 40),
    ]
    assert all(row["sessions_per_second"] > 0 for row in result["rows"])
    assert set(result["flat_mib"]) == {"mine", "report"}


def test_attribution_agreement_bench(tmp_path):
    labels = tmp_path / "attribution.json"
    tiny = [
        {"id": "gemini-429", "party": "provider", "split": "dev"},
        {"id": "httpx-connect-refused", "party": "provider", "split": "held_out"},
        {"id": "unmocked-tool", "party": "setup", "split": "dev"},
        {"id": "fidelity-repeated", "party": "agent", "split": "held_out"},  # a wrong label
    ]
    labels.write_text(json.dumps({"failures": tiny}))
    result = run_bench("attribution_agreement", tmp_path, "--labels", str(labels))
    assert result["agreement"]["all"]["n"] == 4
    assert result["agreement"]["all"]["agreed"] == 3
    assert result["agreement"]["all"]["low"] < 0.75 < result["agreement"]["all"]["high"]
    assert [miss["id"] for miss in result["disagreements"]] == ["fidelity-repeated"]


def _tau_fixture(folder: Path) -> None:
    """One made-up airline conversation in tau-bench's shape: a booking backed, a cancel not."""
    call = {"id": "c1", "function": {"name": "book_reservation", "arguments": '{"flight": "X1"}'}}
    traj = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Book flight X1 please."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "book_reservation",
            "content": '{"id": "R1"}',
        },
        {"role": "assistant", "content": "Your flight X1 has been booked."},
        {"role": "user", "content": "And cancel my old one."},
        {"role": "assistant", "content": "I've cancelled your old reservation."},
    ]
    folder.mkdir()
    (folder / "gpt-4o-airline.json").write_text(
        json.dumps([{"task_id": 1, "trial": 0, "traj": traj}])
    )


def test_claimed_actions_agreement_bench(tmp_path):
    _tau_fixture(tmp_path / "tau-bench")
    labels = tmp_path / "claims.json"
    tiny = [
        {
            "id": "tau-airline/1.0#4",
            "claims": True,
            "backed": True,
            "backed_by": ["book_reservation"],
        },
        {"id": "tau-airline/1.0#6", "claims": True, "backed": False},
    ]
    labels.write_text(json.dumps({"labels": tiny}))
    result = run_bench(
        "claimed_actions_agreement", tmp_path, str(tmp_path), "--labels", str(labels)
    )
    found = result["described"]["all"]
    assert (found["all"]["n"], found["natural"]["n"], found["withheld"]["n"]) == (4, 2, 1)
    assert found["all"]["unbacked"] == 3  # the unbacked cancel, and the booking withheld or failed
    assert found["all"]["flagged"] == 3
    assert 0 <= found["all"]["recall"]["low"] <= found["all"]["recall"]["high"] <= 1
    missing = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "claimed_actions_agreement.py"),
            str(tmp_path / "no"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode != 0
    assert missing.stderr.count("\n") == 1
    assert "no dataset at" in missing.stderr


def _task_dialogues_fixture(root: Path) -> None:
    """Two made-up task dialogues in the shapes of Taskmaster-4 and Schema-Guided Dialogue."""
    coffee = [
        {"speaker": "user", "text": "A large iced latte with oat milk please"},
        {"speaker": "assistant", "text": "Please confirm the order on the screen."},
        {"speaker": "user", "text": "Yes, that's right"},
        {"speaker": "assistant", "text": "It will be ready at the bar."},
    ]
    (root / "taskmaster4").mkdir(parents=True)
    (root / "taskmaster4" / "data_00.json").write_text(
        json.dumps([{"conversation_id": "c1", "scenario": "coffee", "utterances": coffee}])
    )
    said = [
        ("USER", "I need a cab to the station"),
        ("SYSTEM", "How many seats?"),
        ("USER", "I don't mind, any is fine"),
        ("SYSTEM", "Your cab is booked. Anything else?"),
        ("USER", "Also find me a cheap hotel in the north"),
        ("SYSTEM", "The Pines has a room."),
        ("USER", "Thank you, bye"),
    ]
    turns = [{"speaker": who, "utterance": text, "frames": []} for who, text in said]
    (root / "sgd" / "test").mkdir(parents=True)
    (root / "sgd" / "test" / "dialogues_001.json").write_text(
        json.dumps([{"dialogue_id": "1_0", "services": ["Cabs"], "turns": turns}])
    )


def _behaviour_labels(path: Path) -> None:
    common = {"corrections": 0, "repetitions": 0, "abandoned": False}
    path.write_text(
        json.dumps(
            {
                "dialogues": [
                    {
                        "dialogue": "taskmaster4/data_00.json#c1",
                        "split": "dev",
                        **common,
                        **{"turns": 2, "words_per_message": 6.0, "questions_asked": 0},
                        **{"agent_questions": 1, "answers": ["direct"], "volunteered": [4, 0]},
                        "topic_changes": 0,
                    },
                    {
                        "dialogue": "sgd/test/dialogues_001.json#1_0",
                        "split": "held_out",
                        **common,
                        **{"turns": 4, "words_per_message": 5.75, "questions_asked": 0},
                        "agent_questions": 2,
                        "answers": ["direct", "direct"],
                        "volunteered": [1, 0, 3, 0],
                        "topic_changes": 1,
                    },
                ]
            }
        )
    )


def _bench_main(script: str):
    """A bench script's ``main``, loaded in this process (no interpreter to start)."""
    import importlib.util

    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(script, ROOT / "bench" / f"{script}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.mark.parametrize("script", ["user_behaviour_agreement", "mined_facts_agreement"])
def test_task_dialogue_benches_without_the_datasets_say_how_to_get_them(tmp_path, script):
    with pytest.raises(SystemExit) as stopped:
        _bench_main(script)([str(tmp_path / "no"), "--json", str(tmp_path / "out.json")])
    said = str(stopped.value)
    assert "\n" not in said
    assert said.startswith(f"no {tmp_path / 'no'}")
    assert "google-research-datasets" in said


def test_user_behaviour_and_mined_facts_agreement_benches(tmp_path):
    _task_dialogues_fixture(tmp_path / "data")
    labels = tmp_path / "behaviour.json"
    _behaviour_labels(labels)
    data, out = str(tmp_path / "data"), str(tmp_path / "out.json")
    result = _bench_main("user_behaviour_agreement")([data, "--labels", str(labels), "--json", out])
    assert result["agreement"]["all"]["turns"]["n"] == 2
    assert result["agreement"]["all"]["volunteered_per_message"]["n"] == 6
    assert result["calibration"] is None  # two dialogues: too few to calibrate
    facts = tmp_path / "facts.json"
    mined = [
        {"dialogue": "taskmaster4/data_00.json#c1", "split": "dev", "asked": [], "volunteered": []},
        {
            "dialogue": "sgd/test/dialogues_001.json#1_0",
            "split": "held_out",
            "asked": [1, 2],
            "volunteered": [],
        },
    ]
    facts.write_text(json.dumps({"dialogues": mined}))
    result = _bench_main("mined_facts_agreement")([data, "--labels", str(facts), "--json", out])
    assert result["facts"]["all"]["recall"]["n"] == 2
    assert 0 <= result["facts"]["all"]["precision"]["low"] <= 1
    assert json.loads(Path(out).read_text())["dialogues"] == 2


def test_user_fidelity_agreement_bench(tmp_path):
    said = [
        ["A flat white, please.", "Does the order on the screen look right?", "Yes.", "Soon!"],
        ["Do you have oat milk?", "Yes, we do."],
    ]
    dialogues = [
        {
            "conversation_id": f"d{n}",
            "utterances": [
                {"speaker": "user" if i % 2 == 0 else "assistant", "text": text}
                for i, text in enumerate(texts)
            ],
        }
        for n, texts in enumerate(said)
    ]
    (tmp_path / "taskmaster4").mkdir()
    (tmp_path / "taskmaster4" / "data_00.json").write_text(json.dumps(dialogues))
    labels = tmp_path / "user_fidelity.json"
    tiny = [
        {"dialogue": "taskmaster4/data_00.json#d0", "split": "dev", "echo": 1},
        {"dialogue": "taskmaster4/data_00.json#d1", "split": "held_out", "empty": 1},
    ]
    for label in tiny:
        kind = "echo" if "echo" in label else "empty"
        label.update(variant={"kind": kind, "turn": 1, "in_role": False}, real_out_of_role=[])
    labels.write_text(json.dumps({"dialogues": tiny}))

    result = run_bench("user_fidelity_agreement", tmp_path, str(tmp_path), "--labels", str(labels))

    assert result["parts"]["all"]["turns"] == 5  # 2 + 1 real turns, 2 variants
    assert result["parts"]["all"]["precision"]["hits"] == 2
    assert result["parts"]["all"]["recall"] == {
        "hits": 2,
        "n": 2,
        "rate": 1.0,
        "low": 0.342,
        "high": 1.0,
    }
    assert result["disagreements"] == []
    missing = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "user_fidelity_agreement.py"), str(tmp_path / "no")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert missing.returncode != 0
    assert "github.com/google-research-datasets/Taskmaster" in missing.stderr


def _redaction_datasets(root: Path) -> Path:
    """A tiny stand-in for the three datasets, in their shapes, with our own words."""
    (root / "taskmaster4").mkdir(parents=True)
    (root / "sgd" / "train").mkdir(parents=True)
    (root / "tau-bench").mkdir()
    coffee = [
        {"speaker": "user", "text": "Hi, a large latte for pickup at 9:30 please."},
        {"speaker": "assistant", "text": "Sure. What name should I put the order under?"},
        {"speaker": "user", "text": "It's Marta, and that's $4.50 right?"},
    ]
    (root / "taskmaster4" / "data_00.json").write_text(
        json.dumps([{"conversation_id": "dlg-1", "utterances": coffee}])
    )
    said = "Their number is 415-555-0147 and they open at 10 am on March 3rd."
    at = said.index("415")
    turns = [
        {"speaker": "USER", "utterance": "Find me a dentist for $80 or less.", "frames": []},
        {
            "speaker": "SYSTEM",
            "utterance": said,
            "frames": [
                {"slots": [{"slot": "phone_number", "start": at, "exclusive_end": at + 12}]}
            ],
        },
    ]
    (root / "sgd" / "train" / "dialogues_001.json").write_text(
        json.dumps([{"dialogue_id": "1_00001", "turns": turns}])
    )
    traj = [
        {"role": "user", "content": "I want to cancel my trip, my user id is lee_park_1234."},
        {"role": "assistant", "content": "Reservation ABC123 is cancelled."},
    ]
    (root / "tau-bench" / "gpt-4o-airline.json").write_text(
        json.dumps([{"task_id": 0, "traj": traj}])
    )
    return root


def test_redaction_recall_bench(tmp_path):
    datasets = _redaction_datasets(tmp_path / "datasets")
    result = run_bench(
        "redaction_recall",
        tmp_path,
        str(datasets),
        "--per-kind",
        "3",
        "--labels",
        "",
        "--cost-messages",
        "5",
        "--cost-repeats",
        "1",
    )
    assert set(result["recall"]) >= {"email", "phone", "card", "name", "address", "birth_date"}
    assert all(row["n"] == 3 for row in result["recall"].values())
    real = result["real_text"]
    assert real["dialogues"] == 3
    assert real["sgd_marked_values"]["phone"]["found"] == 1
    assert real["touched"] == {}  # the times, prices and dates are left as they are
    assert result["cost"]["us_per_message"][0] > 0


def test_redaction_recall_bench_says_where_the_datasets_are(tmp_path):
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "redaction_recall.py"), str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert completed.returncode == 2
    (line,) = completed.stderr.strip().splitlines()
    assert "dstc8-schema-guided-dialogue" in line
    assert "Taskmaster" in line


def test_watch_drop_bench(tmp_path):
    result = run_bench(
        "watch_drop",
        tmp_path,
        *("--runs", "2", "--quiet-runs", "2", "--change", "100", "--after", "200"),
        *("--length", "150", "--learn", "50"),
    )
    assert [row["baseline"] for row in result["rows"]] == ["given 90%", "learned (first 50)"]
    for row in result["rows"]:
        assert row["false_alarms"] + row["alerted_before_the_change"] <= 4
        low, high = row["false_alarm_interval"]
        assert 0 <= low <= row["false_alarm_rate"] <= high <= 1


def test_watch_throughput_bench(tmp_path):
    result = run_bench(
        "watch_throughput",
        tmp_path,
        *("--sessions", "40", "--memory-sizes", "60", "--seed-sessions", "4"),
        *("--repeats", "1"),
    )
    rate = result["throughput"]
    assert rate["conversations"] == 40
    assert rate["score_per_s"] > 0
    assert rate["watch_per_s"] > 0
    assert [row["conversations"] for row in result["memory"]] == [60]


def test_replay_cost_bench(tmp_path):
    result = run_bench(
        "replay_cost",
        tmp_path,
        *("--cases", "4", "--cli-cases", "2", "--repeats", "1", "--wires", "litellm"),
    )
    for side in ("litellm_in_process", "litellm_cli"):
        row = result[side]
        assert row["scripted_cpu_s"] > 0
        assert row["replay_cpu_s"] > 0
        assert row["load_1min"]["min"] >= 0
