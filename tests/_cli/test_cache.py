"""`adk-eval cache path|list|clear|prune` on a real cache file."""

from __future__ import annotations

import dataclasses
import sqlite3
import time

import pytest
from click.testing import CliRunner

from adk_eval._cli._main import main
from adk_eval.models._cache import close_caches, open_cache
from adk_eval.models._gate import ModelCall
from adk_eval.models._settings import ModelCalls

from ..models._cache_writer import answer
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
    env = {"ADK_EVAL_CACHE_DIR": str(tmp_path / "dir"), "ADK_EVAL_MODEL_CALLS": ""}
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


def test_prune_needs_an_age(full):
    result = invoke("prune", "--cache-path", str(full))
    assert result.exit_code == 2
    assert "prune needs --ttl SECONDS or --older-than AGE" in result.output
    assert invoke("prune", "--cache-path", str(full), "--older-than", "soon").exit_code == 2


def test_a_damaged_file_is_one_error_line_and_clear_deletes_it(tmp_path):
    path = tmp_path / "models.sqlite"
    path.write_text("not a database")

    listed = invoke("list", "--cache-path", str(path))
    assert listed.exit_code == 2
    assert listed.output.count("adk-eval: error:") == 1
    assert str(path) in listed.output
    assert "adk-eval cache clear" in listed.output

    assert invoke("clear", "--cache-path", str(path), "--role", "agent").exit_code == 2
    assert path.exists()  # a filtered clear leaves a file it cannot read alone
    cleared = invoke("clear", "--cache-path", str(path))
    assert cleared.exit_code == 0
    assert f"deleted {path}" in cleared.output
    assert not path.exists()


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
