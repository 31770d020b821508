"""`adk-eval cache path|list|clear|prune` on a real cache file."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import time

import pytest
from click.testing import CliRunner

from adk_eval._cli._main import main
from adk_eval.models._gateway._answers import ModelCall
from adk_eval.models._gateway._cache import close_caches, open_cache
from adk_eval.models._gateway._settings import ModelCalls

from ..models._gateway._cache_writer import answer
from .test_main import imported_by

DAY = 86400.0


@pytest.fixture(autouse=True)
def _closed_caches():
    yield
    close_caches()


def cached(path, *entries: tuple[str, str, str, float]) -> None:
    """Keeps one answer per ``(key, role, model, age in seconds)``."""
    for key, role, model, age in entries:
        cache = dataclasses.replace(
            open_cache(ModelCalls(cache_path=path)), clock=lambda age=age: time.time() - age
        )
        cache.save(ModelCall("adds", 0, role, model, None, {"k": key}, key, 1), answer(key))


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["cache", *args], env=env)


@pytest.fixture
def full(tmp_path):
    path = tmp_path / "c.sqlite"
    cached(
        path,
        ("a", "agent", "gemini-2.5-flash", 10 * DAY),
        ("b", "judge:quality", "gemini-2.5-flash", 2 * DAY),
        ("c", "user:ann", "openai/fake-model", 60.0),
    )
    return path


def keys(path) -> list[str]:
    return [entry.key for entry in open_cache(ModelCalls(cache_path=path)).entries()]


def test_path_prints_the_file_from_the_option_or_the_cache_dir(tmp_path):
    assert invoke("path", "--cache-path", str(tmp_path / "x.db")).output == f"{tmp_path}/x.db\n"
    env = {"ADK_EVAL_CACHE_DIR": str(tmp_path / "dir")}
    assert invoke("path", env=env).output == f"{tmp_path}/dir/models.sqlite\n"
    assert not (tmp_path / "dir").exists()


def test_list_shows_each_entry_a_count_and_what_they_stand_for(full):
    result = invoke("list", "--cache-path", str(full))

    assert result.exit_code == 0, result.output
    for text in ("agent", "judge:quality", "user:ann", "openai/fake-model", "adds", "10d", "2d"):
        assert text in result.output
    assert "100+20" in result.output
    assert "3 entries in" in result.output
    assert "(1 of models without a known price)" in result.output


def test_list_filters_by_role_kind_and_model_glob(full):
    judges = invoke("list", "--cache-path", str(full), "--role", "judges").output
    assert "judge:quality" in judges
    assert "user:ann" not in judges
    assert "1 entry in" in judges
    gemini = invoke("list", "--cache-path", str(full), "--model", "gemini-*").output
    assert "2 entries in" in gemini
    assert "without a known price" not in gemini
    assert "1 entry in" in invoke("list", "--cache-path", str(full), "--role", "user:ann").output


def test_list_of_no_file_makes_none(tmp_path):
    result = invoke("list", "--cache-path", str(tmp_path / "none.sqlite"))
    assert result.exit_code == 0
    assert "no model cache at" in result.output
    assert not (tmp_path / "none.sqlite").exists()


def test_clear_deletes_what_the_filters_select_else_everything(full):
    assert "deleted 1 entry" in invoke("clear", "--cache-path", str(full), "--role", "users").output
    assert keys(full) == ["a", "b"]
    assert (
        "deleted 1 entry" in invoke("clear", "--cache-path", str(full), "--older-than", "7d").output
    )
    assert keys(full) == ["b"]
    result = invoke("clear", "--cache-path", str(full))
    assert result.exit_code == 0
    assert "deleted 1 entry" in result.output
    assert keys(full) == []


def test_prune_deletes_the_expired_and_compacts(full):
    result = invoke("prune", "--cache-path", str(full), "--ttl", str(3 * DAY))
    assert result.exit_code == 0, result.output
    assert "deleted 1 entry older than 3d" in result.output
    assert "compacted" in result.output
    assert keys(full) == ["b", "c"]
    assert (
        "deleted 1 entry" in invoke("prune", "--cache-path", str(full), "--older-than", "1d").output
    )
    assert keys(full) == ["c"]


def test_prune_reports_the_size_the_file_has_after_compacting(tmp_path):
    path = tmp_path / "c.sqlite"
    big = [(f"k{i}", "agent", "gemini-2.5-flash", (i % 2) * 10 * DAY) for i in range(120)]
    for key, role, model, age in big:
        cache = dataclasses.replace(
            open_cache(ModelCalls(cache_path=path)), clock=lambda age=age: time.time() - age
        )
        call = ModelCall("adds", 0, role, model, None, {"k": key}, key, 1)
        cache.save(call, answer(key + "x" * 4000))
    close_caches()  # as a run leaves it: its log written into the file

    result = invoke("prune", "--cache-path", str(path), "--older-than", "1d")

    assert result.exit_code == 0, result.output
    found = re.search(r"compacted (\d+) KiB -> (\d+) KiB", result.output)
    assert found is not None, result.output
    before, after = int(found.group(1)), int(found.group(2))
    assert after < before * 0.75, result.output  # half the answers went
    wal = tmp_path / "c.sqlite-wal"
    on_disk = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    assert abs(on_disk / 1024 - after) <= 1  # what is on disk now, the log included
    assert len(keys(path)) == 60


def test_prune_needs_an_age(full):
    result = invoke("prune", "--cache-path", str(full))
    assert result.exit_code == 2
    assert "prune needs --ttl SECONDS or --older-than AGE" in result.output
    assert invoke("prune", "--cache-path", str(full), "--older-than", "soon").exit_code == 2


def test_a_file_that_is_not_a_cache_is_one_error_line_and_clear_leaves_it(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"call the bank on Monday\n\xe2\x82\xac 40 owed\n")
    before = path.read_bytes()

    for command in (["list"], ["clear"], ["clear", "--role", "agent"], ["prune", "--ttl", "1"]):
        result = invoke(*command, "--cache-path", str(path))
        assert result.exit_code == 2, result.output
        assert result.output.count("\n") == 1, result.output  # one line
        assert result.output.startswith("adk-eval: error: ")
        assert str(path) in result.output
        assert "not an adk-eval model cache" in result.output
        assert "cache clear" not in result.output  # clearing is not the way out
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def damage(path) -> None:
    """Overwrites a cache's pages past its header: the file keeps the cache's mark."""
    with path.open("r+b") as file:
        file.seek(100)
        file.write(b"\xff" * (path.stat().st_size - 100))


def test_a_damaged_cache_is_one_error_line_and_clear_deletes_it(full):
    close_caches()
    damage(full)

    listed = invoke("list", "--cache-path", str(full))
    assert listed.exit_code == 2
    assert listed.output.count("adk-eval: error:") == 1
    assert str(full) in listed.output
    assert "adk-eval cache clear" in listed.output

    assert invoke("clear", "--cache-path", str(full), "--role", "agent").exit_code == 2
    assert full.exists()  # a filtered clear leaves a file it cannot read alone
    cleared = invoke("clear", "--cache-path", str(full))
    assert cleared.exit_code == 0
    assert f"deleted {full}" in cleared.output
    assert not full.exists()


def test_clear_never_deletes_another_sqlite_database(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    before = path.read_bytes()

    result = invoke("clear", "--cache-path", str(path))

    assert result.exit_code == 2
    assert "not an adk-eval model cache" in result.output
    assert path.read_bytes() == before


def test_the_cache_commands_import_no_adk_or_litellm(full):
    assert imported_by(["cache", "list", "--cache-path", str(full)], full.parent) == []


# -- runs through the command ----------------------------------------------------

ORDERS = '''
import re

from adk_eval.metrics import never_called

A = "3f2b8c1e-9a4d-4e6b-8f0a-1c2d3e4f5a6b"
B = "7c9e6679-7425-40de-944b-e07fc1f90ae7"


def cancel_order(order_id: str) -> dict:
    """Cancels an order."""
    return {"cancelled": order_id}


def cancels_what_it_is_asked(request):
    """The model: cancels the order the user names, then says so."""
    if any(part.function_response for content in request.contents for part in content.parts):
        return "Cancelled."
    said = request.contents[-1].parts[0].text
    return tool_call("cancel_order", {"order_id": re.search(r"[0-9a-f-]{36}", said).group(0)})


def case(name, order, **kwargs):
    model = ScriptedLlm(responder=cancels_what_it_is_asked)
    return EvalCase(
        name=name,
        agent=LlmAgent(name="orders", model=model, tools=[cancel_order]),
        first_message=f"Please cancel order {order}.",
        tool_mocks={"cancel_order": cancel_order},
        terminate_when=TerminateWhen(max_turns=1),
        **kwargs,
    )
'''


def run_cached(folder, name: str, cache_dir, *flags: str):
    env = {"ADK_EVAL_CACHE_DIR": str(cache_dir)}
    return CliRunner().invoke(main, ["run", str(folder / name), "--no-store", *flags], env=env)


def test_a_case_differing_only_in_a_users_order_id_gets_its_own_answer(write_evals, tmp_path):
    folder = write_evals(
        {
            "a_eval.py": ORDERS + 'cancels_a = case("cancels-a", A)\n',
            "b_eval.py": ORDERS
            + 'keeps_b = case("keeps-b", B, invariants=[never_called("cancel_order", '
            'args={"order_id": B})])\n',
        }
    )
    cache_dir = tmp_path / "cache"

    uncached = run_cached(folder, "b_eval.py", cache_dir)
    assert uncached.exit_code == 1, uncached.output  # case B cancels B: the rule is broken
    assert "never_called(cancel_order" in uncached.output

    first = run_cached(folder, "a_eval.py", cache_dir, "--cache", "all")
    assert first.exit_code == 0, first.output
    cached = run_cached(folder, "b_eval.py", cache_dir, "--cache", "all")

    assert cached.exit_code == 1, cached.output  # not case A's answer, which cancelled A
    assert "cache 0 hits / 1 miss" in cached.output
    assert "never_called(cancel_order" in cached.output
    assert "7c9e6679-7425-40de-944b-e07fc1f90ae7" in cached.output
    again = run_cached(folder, "b_eval.py", cache_dir, "--cache", "all")
    assert again.exit_code == 1, again.output  # and its own answer, once cached
    assert "cache 1 hit / 0 misses" in again.output  # the run stops at the broken rule
