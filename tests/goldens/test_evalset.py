"""append_golden: create, append, unique ids, atomic and locked, invalid files untouched."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from pathlib import Path

import pytest
from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager
from google.genai import types

from adk_eval.goldens import EvalSetFileError, append_golden, load_eval_set


def case(eval_id: str = "math_agent_2026-01-01T00:00:00", text: str = "2+2?") -> AdkEvalCase:
    return AdkEvalCase(
        eval_id=eval_id,
        conversation=[
            Invocation(
                invocation_id="i",
                user_content=types.Content(role="user", parts=[types.Part(text=text)]),
                final_response=types.Content(role="model", parts=[types.Part(text="4")]),
            )
        ],
    )


def test_a_missing_file_is_created_with_its_metadata(tmp_path):
    result = append_golden(tmp_path / "deep" / "goldens.evalset.json", case(), "MathAgent")
    assert result.created
    assert (result.eval_set_id, result.cases) == ("math_agent_evals", 1)
    data = json.loads(result.path.read_text())
    assert data["eval_set_id"] == "math_agent_evals"
    assert data["creation_timestamp"] > 0
    assert [c["eval_id"] for c in data["eval_cases"]] == ["math_agent_2026-01-01T00:00:00"]


def test_appends_keep_earlier_cases_and_make_ids_unique(tmp_path):
    path = tmp_path / "g.json"
    append_golden(path, case(), "math_agent")
    second = append_golden(path, case(text="3+3?"), "math_agent")
    third = append_golden(path, case(text="4+4?"), "math_agent")
    assert not second.created
    assert (second.eval_id, third.eval_id) == (
        "math_agent_2026-01-01T00:00:00_2",
        "math_agent_2026-01-01T00:00:00_3",
    )
    loaded = load_eval_set(path)
    assert [c.conversation[0].user_content.parts[0].text for c in loaded.eval_cases] == [
        "2+2?",
        "3+3?",
        "4+4?",
    ]


def test_written_the_way_adk_writes_it(tmp_path):
    path = tmp_path / "app" / "g.evalset.json"
    append_golden(path, case(), "app")
    eval_set = EvalSet.model_validate_json(path.read_text())
    manager = LocalEvalSetsManager(agents_dir=str(tmp_path))
    adk_path = tmp_path / "adk_written.json"
    manager._write_eval_set_to_path(str(adk_path), eval_set)
    assert json.loads(path.read_text()) == json.loads(adk_path.read_text())


def test_relative_paths_resolve_against_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = append_golden("goldens/g.json", case(), "a")
    assert result.path == tmp_path / "goldens" / "g.json"
    assert result.path.exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"eval_cases": []}', "is not a valid ADK EvalSet (eval_set_id: Field required"),
        ("[1, 2]", "is not a valid ADK EvalSet"),
        ("", "is not valid JSON"),
    ],
)
def test_an_invalid_file_is_left_untouched_with_a_clear_error(tmp_path, content, message):
    path = tmp_path / "g.json"
    path.write_text(content)
    with pytest.raises(EvalSetFileError) as error:
        append_golden(path, case(), "a")
    assert message in str(error.value)
    assert str(path) in str(error.value)
    assert "left untouched" in str(error.value)
    assert path.read_text() == content
    assert list(tmp_path.iterdir()) == [path]  # no temporary files left behind


def test_concurrent_appends_from_threads_lose_nothing(tmp_path):
    path = tmp_path / "g.json"
    threads = [
        threading.Thread(target=append_golden, args=(path, case(text=f"q{i}"), "a"))
        for i in range(24)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    loaded = load_eval_set(path)
    assert len(loaded.eval_cases) == 24
    assert len({c.eval_id for c in loaded.eval_cases}) == 24
    assert {c.conversation[0].user_content.parts[0].text for c in loaded.eval_cases} == {
        f"q{i}" for i in range(24)
    }


def _append_many(path: str, worker: int) -> None:
    for i in range(6):
        append_golden(Path(path), case(text=f"w{worker}-{i}"), "a")


@pytest.mark.slow  # a few seconds of processes: make test runs it
def test_concurrent_appends_from_processes_lose_nothing(tmp_path):
    path = tmp_path / "g.json"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(str(path), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    texts = [c.conversation[0].user_content.parts[0].text for c in load_eval_set(path).eval_cases]
    assert sorted(texts) == sorted(f"w{w}-{i}" for w in range(4) for i in range(6))


LEGACY_TURNS = [
    {"query": "hi", "expected_tool_use": [], "reference": "Hello!"},
    {
        "query": "Roll a 6 sided die",
        "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}],
        "reference": "I rolled a 4.",
    },
]
LEGACY_CASES = [
    {
        "name": "roll_twice",
        "data": LEGACY_TURNS,
        "initial_session": {"state": {"user:tier": "gold"}, "app_name": "dice", "user_id": "u"},
    }
]


def summary(eval_set: EvalSet) -> list:
    return [
        (
            case.eval_id,
            case.session_input.state if case.session_input else None,
            [
                (
                    i.user_content.parts[0].text,
                    [(t.name, t.args) for t in i.intermediate_data.tool_uses],
                    i.final_response.parts[0].text,
                )
                for i in case.conversation
            ],
        )
        for case in eval_set.eval_cases
    ]


def test_both_older_formats_load_as_adks_own_converter_reads_them(tmp_path):
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

    cases_file = tmp_path / "dice.test.json"
    cases_file.write_text(json.dumps(LEGACY_CASES))
    loaded = load_eval_set(cases_file)
    assert summary(loaded) == summary(load_eval_set_from_file(str(cases_file), "dice.test"))
    assert summary(loaded) == [
        (
            "roll_twice",
            {"user:tier": "gold"},
            [
                ("hi", [], "Hello!"),
                ("Roll a 6 sided die", [("roll_die", {"sides": 6})], "I rolled a 4."),
            ],
        )
    ]

    turns_file = tmp_path / "dice_turns.test.json"
    turns_file.write_text(json.dumps(LEGACY_TURNS))
    (case,) = load_eval_set(turns_file).eval_cases
    assert case.eval_id == "dice_turns.test"
    assert summary(load_eval_set(turns_file))[0][2] == summary(loaded)[0][2]


def test_an_older_format_is_read_but_never_rewritten(tmp_path):
    path = tmp_path / "dice.test.json"
    path.write_text(json.dumps(LEGACY_CASES))
    before = path.read_bytes()
    golden = load_eval_set(path).eval_cases[0]
    with pytest.raises(EvalSetFileError, match="adk_eval reads it but does not rewrite it"):
        append_golden(path, golden, "dice")
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ([{"question": "hi"}], "neither of ADK's older formats"),
        ({"cases": []}, "keys cases but no eval_cases: is it an EvalSet file?"),
    ],
)
def test_a_file_in_no_known_format_says_what_it_looks_like(tmp_path, content, message):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(content))
    with pytest.raises(EvalSetFileError, match=message):
        load_eval_set(path)


def test_an_append_keeps_what_the_file_holds_unknown_keys_included(tmp_path):
    path = tmp_path / "set.evalset.json"
    append_golden(path, case("first"), "math")
    data = json.loads(path.read_text())
    data["my_notes"] = "reviewed by Ada"
    data["eval_cases"][0]["reviewer_comment"] = "keep me"
    path.write_text(json.dumps(data))

    append_golden(path, case("second"), "math")

    after = json.loads(path.read_text())
    assert after["my_notes"] == "reviewed by Ada"
    assert after["eval_cases"][0] == data["eval_cases"][0]  # as it was, unknown key included
    assert [c["eval_id"] for c in after["eval_cases"]] == ["first", "second"]
    assert [c.eval_id for c in load_eval_set(path).eval_cases] == ["first", "second"]


def test_a_symlinked_set_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "store" / "real.evalset.json"
    append_golden(real, case("first"), "math")
    link = tmp_path / "link.evalset.json"
    link.symlink_to(real)

    append_golden(link, case("second"), "math")

    assert link.is_symlink()
    assert [c.eval_id for c in load_eval_set(real).eval_cases] == ["first", "second"]


def test_the_files_mode_is_kept_and_a_read_only_file_is_refused(tmp_path):
    path = tmp_path / "set.evalset.json"
    append_golden(path, case("first"), "math")
    path.chmod(0o600)
    append_golden(path, case("second"), "math")
    assert path.stat().st_mode & 0o777 == 0o600

    path.chmod(0o444)
    before = path.read_bytes()
    with pytest.raises(EvalSetFileError, match="is read-only; adk_eval does not change it"):
        append_golden(path, case("third"), "math")
    assert path.read_bytes() == before
    assert path.stat().st_mode & 0o777 == 0o444


@pytest.mark.parametrize(
    "content", [b"\xff\xfe{\x00}\x00", bytes(range(256))], ids=["utf-16", "binary"]
)
def test_a_file_that_is_not_utf8_is_one_clear_error(tmp_path, content):
    path = tmp_path / "odd.evalset.json"
    path.write_bytes(content)
    with pytest.raises(EvalSetFileError, match="is not UTF-8 text"):
        load_eval_set(path)
    with pytest.raises(EvalSetFileError, match="it was left untouched"):
        append_golden(path, case(), "math")
    assert path.read_bytes() == content


def test_temp_files_of_writers_that_died_are_removed_and_nothing_else(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "set.evalset.json"
    append_golden(path, case("first"), "math")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".set.evalset.json.{dead_pid}.{'a' * 32}.adk-eval-tmp"
    stale.write_text("half a file")
    live = tmp_path / f".set.evalset.json.{os.getpid()}.{'b' * 32}.adk-eval-tmp"
    live.write_text("another writer, still running")
    lookalike = tmp_path / ".set.evalset.json.notes.adk-eval-tmp"
    lookalike.write_text("a user's file")
    other_set = tmp_path / f".other.json.{dead_pid}.{'c' * 32}.adk-eval-tmp"
    other_set.write_text("another set's writer")

    append_golden(path, case("second"), "math")

    assert not stale.exists()
    assert live.exists()
    assert lookalike.exists()
    assert other_set.exists()  # only temp files of this set are looked at


def test_a_fifo_a_folder_or_a_device_is_refused_at_once_for_reading_and_appending(tmp_path):
    fifo = tmp_path / "set.evalset.json"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    for call in (lambda p: append_golden(p, case(), "a"), load_eval_set):
        with pytest.raises(EvalSetFileError, match=r"is a FIFO \(named pipe\), not a file"):
            call(fifo)
        with pytest.raises(EvalSetFileError, match="is a folder, not a file"):
            call(tmp_path)
        with pytest.raises(EvalSetFileError, match="is a character device"):
            call(Path("/dev/null"))
    assert fifo.exists()  # left as it was


def test_a_parent_that_is_a_file_is_one_clear_error_and_the_file_is_kept(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    with pytest.raises(EvalSetFileError, match="cannot create the folder of EvalSet file"):
        append_golden(blocker / "sets" / "x.evalset.json", case(), "a")
    assert blocker.read_text() == "mine"


UNREADABLE = """
import os, sys
from pathlib import Path
from adk_eval.goldens import EvalSetFileError, append_golden
from adk_eval.goldens import _evalset  # noqa: F401
from google.adk.evaluation.eval_case import EvalCase, Invocation
from google.genai import types
case = EvalCase(eval_id="c", conversation=[Invocation(
    user_content=types.Content(role="user", parts=[types.Part(text="hi")]))])
locked, closed = Path(sys.argv[1]), Path(sys.argv[2])
for target in (locked / "set.json", closed / "sub" / "set.json"):
    try:
        append_golden(target, case, "a")
    except EvalSetFileError as error:
        print("EvalSetFileError:", error)
"""


@pytest.mark.slow  # a few seconds of processes: make test runs it
@pytest.mark.skipif(os.geteuid() != 0, reason="drops to user nobody with setpriv, as root")
def test_an_unreadable_folder_is_one_clear_error():
    import shutil
    import subprocess
    import sys
    import tempfile

    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run(
        [*as_nobody, sys.executable, "-c", "import adk_eval"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if probe.returncode != 0:  # a checkout in a private folder (a CI container's, a mktemp -d)
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"an unprivileged user cannot run this checkout's Python here: {last}")
    base = Path(tempfile.mkdtemp(prefix="adk_eval_locked_"))  # pytest's tmp is root's alone
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o300)  # nobody may enter and write, not list
        os.chown(locked, 65534, 65534)
        closed = base / "closed"
        closed.mkdir(mode=0o000)  # root's, shut: nobody may not even enter
        done = subprocess.run(
            [*as_nobody, sys.executable, "-c", UNREADABLE, str(locked), str(closed)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stdout
    assert all(line.startswith("EvalSetFileError:") for line in lines)
    assert "cannot open the folder of EvalSet file" in lines[0]
    assert "cannot create the folder of EvalSet file" in lines[1]
    assert all("Permission denied" in line for line in lines)


def test_the_old_append_eval_case_name_still_appends_but_warns(tmp_path):
    from adk_eval.goldens import append_eval_case

    with pytest.warns(DeprecationWarning, match="use append_golden"):
        result = append_eval_case(tmp_path / "s.evalset.json", case(), "math_agent")
    assert [c.eval_id for c in load_eval_set(result.path).eval_cases] == [case().eval_id]
