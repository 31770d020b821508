"""The clinician's production conversations, mined, played again and compared with the real ones.

The four commands of the example's README, for real: `production.py` writes an ADK
session store, `adk-eval mine` turns it into scenarios, `adk-eval run` plays them
offline (`mined_cases.py`), `adk-eval realism` compares the two groups of users.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from adk_eval._cli import main

ROOT = Path(__file__).resolve().parents[2]
MINED_CASES_FILE = ROOT / "examples" / "clinician" / "mined_cases.py"


def _adk_eval(*args: str, mined: Path, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLINICIAN_MINED": str(mined)}
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY"):
        env.pop(key, None)
    return subprocess.run(
        [sys.executable, "-m", "adk_eval", *args, "--db", str(db)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def production(tmp_path_factory) -> Path:
    """The folder `production.py` wrote its store into (20 conversations)."""
    from examples.clinician import production

    out = tmp_path_factory.mktemp("production")
    store = production.main(["--out", str(out)])
    assert store == out / "sessions.db"
    return out


@pytest.mark.slow
def test_production_writes_an_adk_sqlite_store_of_20_sessions(production):
    with sqlite3.connect(production / "sessions.db") as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master")}
        sessions = db.execute(
            "select app_name, count(*) from sessions group by app_name"
        ).fetchall()
        events = db.execute("select count(*) from events").fetchone()[0]
    assert {"sessions", "events", "app_states", "user_states"} <= tables
    assert sessions == [("clinician", 20)]
    assert events > 20 * 3  # each: a first message, the clinician's calls and replies


@pytest.mark.slow
def test_the_four_commands_mine_run_and_compare(production):
    store = f"sqlite:///{production / 'sessions.db'}"
    mined = production / "mined"

    done = CliRunner().invoke(main, ["mine", store, "--out", str(mined), "--include-open"])

    assert done.exit_code == 0, done.output
    assert "mined 20 scenario(s)" in done.output
    records = [json.loads(line) for line in (mined / "scenarios.jsonl").read_text().splitlines()]
    assert len(records) == 20
    assert all(record["starting_prompt"] for record in records)
    assert len({record["source"] for record in records}) == 20
    evalset = json.loads((mined / "scenarios.evalset.json").read_text())
    assert len(evalset["eval_cases"]) == 20

    runs = production / "simulated.json"
    ran = _adk_eval(
        "run", str(MINED_CASES_FILE), "--json", str(runs), mined=mined, db=production / "r.db"
    )

    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output
    assert "20 case(s)" in output
    assert "20 passed" in output
    assert "run offline on scripted models" in ran.stderr
    report = json.loads(runs.read_text())
    assert len(report["results"]) == 20

    compared = CliRunner().invoke(
        main,
        ["realism", store, str(runs), "--json", str(production / "realism.json"), "--include-open"],
    )

    assert compared.exit_code == 0, compared.output
    lines = compared.output.splitlines()
    assert lines[0].startswith("realism: 20 real conversation(s) against 20 simulated; ")
    assert "feature(s) unlike" in lines[0]
    assert any(line.startswith("your simulated users send this many messages") for line in lines)
    assert any("give up without their goal" in line for line in lines)
    # the answers to `ask` (function responses of a long-running tool) are measured on both sides
    (direct,) = [line for line in lines if "answer the agent's questions directly" in line]
    assert "not compared" not in direct
    assert direct.startswith("your simulated users answer the agent's questions directly 100 %")
    data = json.loads((production / "realism.json").read_text())
    assert (data["real"], data["simulated"]) == (20, 20)


@pytest.mark.slow
def test_the_example_leaves_the_mined_cases_out_and_they_ask_to_be_mined_first(tmp_path):
    ran = _adk_eval(
        "run", str(ROOT / "examples" / "clinician"), mined=tmp_path / "none", db=tmp_path / "r.db"
    )
    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output
    assert "mined" not in ran.stderr
    assert "4 passed, 2 xfailed" in output

    alone = _adk_eval("run", str(MINED_CASES_FILE), mined=tmp_path / "none", db=tmp_path / "r.db")
    assert alone.returncode != 0
    assert "holds no mined scenarios" in alone.stdout + alone.stderr
