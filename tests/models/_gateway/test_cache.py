"""The model-output cache: a real SQLite file, and runs through ADK's real clients.

The runs send real HTTP requests (ADK's `LiteLlm` and `Gemini`) to a
`FakeProviderServer`, whose log counts what reached the provider.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import re
import sqlite3

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm

from adk_eval import EvalCase, EvalResult, TerminateWhen, run_eval_suite
from adk_eval._errors import EvalSetupError
from adk_eval._run.loop import run_case
from adk_eval.fake_provider import FakeProviderServer, error_reply, text_reply, tool_reply
from adk_eval.metrics import llm_judge
from adk_eval.models._gateway._answers import ModelCall
from adk_eval.models._gateway._cache import cache_file, close_caches, open_cache, remove_damaged
from adk_eval.models._gateway._gate import Gateway
from adk_eval.models._gateway._settings import ModelCalls
from adk_eval.models._gateway._usage import cost_of

from ._cache_writer import answer, open_at_once, write_many


@pytest.fixture(autouse=True)
def _closed_caches():
    yield
    close_caches()


def model_call(key: str = "k1", role: str = "agent", **changes) -> ModelCall:
    call = ModelCall("adds", 0, role, "gemini-2.5-flash", None, {"contents": ["hi"]}, key, 1)
    return dataclasses.replace(call, **changes)


# -- the file ----------------------------------------------------------------------


def test_an_answer_is_kept_by_key_with_who_asked_its_tokens_cost_and_request_hash(tmp_path):
    cache = open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite"))
    call = model_call(role="judge:quality", attempt=2, base_url="http://127.0.0.1:9")
    assert cache.lookup(call) is None

    cache.save(call, answer("yes"))

    assert cache.lookup(call) == answer("yes")
    assert cache.lookup(model_call(key="k2")) is None
    [entry] = cache.entries()
    assert (entry.role, entry.kind, entry.model, entry.case, entry.attempt) == (
        "judge:quality",
        "judges",
        "gemini-2.5-flash",
        "adds",
        2,
    )
    assert entry.base_url == "http://127.0.0.1:9"
    assert (entry.input_tokens, entry.output_tokens) == (100, 20)
    assert entry.cost_usd == pytest.approx(cost_of("gemini-2.5-flash", 100, 20))
    canonical = json.dumps(call.request, sort_keys=True, separators=(",", ":"))
    assert entry.request_hash == hashlib.sha256(canonical.encode()).hexdigest()


def test_an_unpriced_model_is_kept_with_an_unknown_cost(tmp_path):
    cache = open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite"))
    cache.save(model_call(model="openai/fake-model"), answer("yes"))
    assert cache.entries()[0].cost_usd is None


def test_answers_with_an_error_code_or_no_answer_are_never_kept(tmp_path):
    cache = open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite"))
    refused = [*answer("partly"), {"error_code": "SAFETY", "error_message": "blocked"}]
    cache.save(model_call("refused"), refused)
    cache.save(model_call("empty"), [])
    assert cache.entries() == []


def test_an_entry_older_than_the_ttl_is_a_miss_and_prune_deletes_it(tmp_path):
    now = [1000.0]
    cache = dataclasses.replace(
        open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite", cache_ttl=60)),
        clock=lambda: now[0],
    )
    cache.save(model_call("old"), answer("old"))
    now[0] += 50
    cache.save(model_call("new"), answer("new"))
    now[0] += 20  # "old" is 70 s old, "new" 20 s

    assert cache.lookup(model_call("old")) is None
    assert cache.lookup(model_call("new")) == answer("new")
    forever = dataclasses.replace(cache, ttl=None)
    assert forever.lookup(model_call("old")) == answer("old")  # expired, not yet deleted

    assert cache.prune() == 1
    assert [entry.key for entry in forever.entries()] == ["new"]


def test_the_file_is_the_settings_path_else_the_cache_dir_else_xdg_else_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ADK_EVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_file() == tmp_path / "home/.cache/adk-eval/models.sqlite"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_file() == tmp_path / "xdg/adk-eval/models.sqlite"
    monkeypatch.setenv("ADK_EVAL_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_file(ModelCalls()) == tmp_path / "mine/models.sqlite"
    assert cache_file(ModelCalls(cache_path=tmp_path / "x.db")) == tmp_path / "x.db"


def test_one_file_is_opened_once_per_process_whatever_the_ttl(tmp_path):
    first = open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite"))
    again = open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite", cache_ttl=5))
    other = open_cache(ModelCalls(cache_path=tmp_path / "d.sqlite"))
    assert again.database is first.database
    assert again.ttl == 5
    assert other.database is not first.database


@pytest.mark.parametrize(
    "content",
    [b"notes, not a database\n", b"SQLite format 3\x00" + b"\xff" * 200],
    ids=["text", "garbled-sqlite"],
)
def test_a_file_without_the_caches_mark_is_one_clear_error_and_is_left_as_it_was(tmp_path, content):
    path = tmp_path / "models.sqlite"
    path.write_bytes(content)

    with pytest.raises(EvalSetupError) as caught:
        open_cache(ModelCalls(cache_path=path))

    message = str(caught.value)
    assert message.startswith(f"{path} is not an adk-eval model cache (")
    assert "another path" in message
    assert "cache clear" not in message  # it is not the cache's to delete
    assert not remove_damaged(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models.sqlite"]


def test_a_damaged_cache_is_one_clear_error_naming_the_clear_that_deletes_it(tmp_path):
    path = tmp_path / "models.sqlite"
    open_cache(ModelCalls(cache_path=path)).save(model_call(), answer("yes"))
    close_caches()
    with path.open("r+b") as file:  # its pages, not its header (and so not its mark)
        file.seek(100)
        file.write(b"\xff" * (path.stat().st_size - 100))
    content = path.read_bytes()

    with pytest.raises(EvalSetupError) as caught:
        open_cache(ModelCalls(cache_path=path))

    message = str(caught.value)
    assert message.startswith(f"model cache {path} is damaged (")
    assert f"adk-eval cache clear --cache-path {path}" in message
    assert path.read_bytes() == content
    assert remove_damaged(path)
    assert not path.exists()


def test_another_sqlite_database_is_never_modified(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    before = path.read_bytes()

    with pytest.raises(
        EvalSetupError, match="is not an adk-eval model cache \\(another SQLite database\\)"
    ):
        open_cache(ModelCalls(cache_path=path))

    assert path.read_bytes() == before
    assert not remove_damaged(path)
    assert path.read_bytes() == before


@pytest.mark.slow
def test_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "c.sqlite"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(3, timeout=30)  # one that fails to open does not hang the rest
    workers = [
        context.Process(target=write_many, args=(str(path), worker, start, 25))
        for worker in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    keys = {entry.key for entry in open_cache(ModelCalls(cache_path=path)).entries()}
    expected = {f"w{w}-{i}" for w in range(3) for i in range(25)} | {
        f"shared-{i}" for i in range(25)
    }
    assert keys == expected


@pytest.mark.slow
def test_processes_opening_one_new_cache_at_the_same_moment_all_open_it(tmp_path):
    # SQLite answers some steps of making a new WAL file "locked" without waiting, and a
    # process could see the tables of another's cache before reading its mark: before
    # they were handled, 18 of 40 such rounds of 8 processes had one fail
    context = multiprocessing.get_context("fork")
    for round_ in range(6):
        path = tmp_path / f"c{round_}.sqlite"
        start, said = context.Barrier(8, timeout=30), context.Queue()
        workers = [
            context.Process(target=open_at_once, args=(str(path), start, said)) for _ in range(8)
        ]
        for worker in workers:
            worker.start()
        outcomes = [said.get(timeout=60) for _ in workers]
        for worker in workers:
            worker.join(30)
        assert outcomes == ["opened"] * 8


# -- runs --------------------------------------------------------------------------


def litellm_model(server: FakeProviderServer) -> LiteLlm:
    return LiteLlm(
        model="openai/fake-model",
        api_base=server.openai_base,
        api_key="test-key",
        _skip_mcp_handler=True,
    )


def gemini_model(server: FakeProviderServer) -> Gemini:
    return Gemini(
        model="gemini-2.5-flash", base_url=server.gemini_base, client_kwargs={"api_key": "k"}
    )


def add(a: int, b: int) -> dict:
    """Adds two integers."""
    return {"result": a + b}


def case(model, instruction: str = "You add numbers with `add`.", **kwargs) -> EvalCase:
    agent = LlmAgent(name="calculator", model=model, tools=[add], instruction=instruction)
    defaults = dict(
        name="adds",
        agent=agent,
        tool_mocks={"add": add},
        first_message="What is 2+2?",
        terminate_when=TerminateWhen(max_turns=1),
    )
    return EvalCase(**{**defaults, **kwargs})


ADDS = [tool_reply("add", {"a": 2, "b": 2}, prompt_tokens=300), text_reply("2 + 2 = 4.")]


def events(result) -> list:
    """The conversation's events without what every run makes anew (ADK's call ids)."""
    dumped = [
        (event.author, event.content.model_dump(mode="json", exclude_none=True))
        for event in result.events
        if event.content is not None
    ]
    return json.loads(re.sub(r"adk-[0-9a-f-]{36}", "<id>", json.dumps(dumped)))


async def run_with(settings: ModelCalls, case: EvalCase, attempt: int = 0) -> EvalResult:
    """One run of `case` whose model calls follow `settings`."""
    return await run_case(case, seed=None, attempt=attempt, gateway=Gateway.alone(settings))


def metrics(result) -> dict:
    return {name: (m.passed, m.score, m.value) for name, m in result.metrics.items()}


@pytest.mark.parametrize("client", ["litellm", "gemini"])
async def test_a_second_run_of_an_unchanged_case_asks_the_provider_nothing(tmp_path, client):
    settings = ModelCalls(cache="all", cache_path=tmp_path / "c.sqlite")
    with FakeProviderServer(ADDS) as server:
        model = litellm_model(server) if client == "litellm" else gemini_model(server)
        first = await run_with(settings, case(model))
        asked = len(server.requests)
        second = await run_with(settings, case(model))

    assert asked == 2
    assert len(server.requests) == 2
    assert first.status == second.status == "passed", second.explain()
    assert events(second) == events(first)
    assert events(first)[-1] == ["calculator", {"parts": [{"text": "2 + 2 = 4."}], "role": "model"}]
    assert metrics(second) == metrics(first)
    # usage counts what the answers used, wherever they came from
    assert second.token_usage == first.token_usage
    assert second.token_usage.input_tokens == 300 + 10
    assert (first.provider.cache_misses, first.provider.cache_hits, first.provider.calls) == (
        2,
        0,
        2,
    )
    assert (second.provider.cache_misses, second.provider.cache_hits) == (0, 2)
    assert second.provider.calls == 0
    if client == "litellm":  # openai/fake-model has no price
        assert second.provider.saved_usd is None
    else:
        assert first.cost_usd is not None
        assert first.cost_usd > 0
        assert second.provider.saved_usd == pytest.approx(first.cost_usd)


async def test_each_attempt_and_a_changed_instruction_have_entries_of_their_own(tmp_path):
    path = tmp_path / "c.sqlite"
    settings = ModelCalls(cache_path=path)
    with FakeProviderServer(["4"]) as server:
        model = litellm_model(server)
        runs = [
            await run_with(settings, case(model, cache="agent")),
            await run_with(settings, case(model, cache="agent"), attempt=1),
            await run_with(settings, case(model, cache="agent"), attempt=1),
            await run_with(settings, case(model, "You add numbers, briefly.", cache="agent")),
            await run_with(settings, case(model, cache="agent")),
        ]
    assert [(r.provider.cache_hits, r.provider.cache_misses) for r in runs] == [
        (0, 1),
        (0, 1),  # attempt 1 is not answered with attempt 0's reply
        (1, 0),
        (0, 1),
        (1, 0),
    ]
    assert len(server.requests) == 3
    attempts = [e.attempt for e in open_cache(ModelCalls(cache_path=path)).entries()]
    assert sorted(attempts) == [0, 0, 1]


async def test_a_failed_call_is_not_cached(tmp_path):
    path = tmp_path / "c.sqlite"
    settings = ModelCalls(cache="all", cache_path=path)
    with FakeProviderServer([error_reply(400, "no such model")]) as server:
        result = await run_with(settings, case(litellm_model(server)))
    assert result.status == "error"
    assert open_cache(ModelCalls(cache_path=path)).entries() == []


async def test_a_case_caching_judges_caches_only_the_judge_with_its_model_and_prompt(tmp_path):
    verdict = json.dumps({"passed": True, "score": 0.9, "reasoning": "it adds"})
    path = tmp_path / "c.sqlite"
    settings = ModelCalls(cache_path=path)
    with FakeProviderServer(["4"]) as agent, FakeProviderServer([verdict]) as judge:
        quality = llm_judge("quality", "The agent answers 4.", model=gemini_model(judge))
        runs = [
            await run_with(settings, case(litellm_model(agent), metrics=[quality], cache="judges"))
            for _ in range(2)
        ]

    assert [r.status for r in runs] == ["passed", "passed"]
    assert (len(agent.requests), len(judge.requests)) == (2, 1)
    live, cached = (r.metrics["quality"] for r in runs)
    assert (cached.passed, cached.score, cached.evidence) == (
        live.passed,
        live.score,
        live.evidence,
    )
    assert cached.value["judge"] == live.value["judge"] == quality.identity()
    assert live.value["judge"]["model"] == "gemini-2.5-flash"
    assert (runs[1].provider.cache_hits, runs[1].provider.cache_misses) == (1, 0)
    assert runs[1].provider.saved_usd == pytest.approx(cost_of("gemini-2.5-flash", 10, 5))
    assert runs[1].usage == runs[0].usage  # the judge's tokens count in both runs
    [entry] = open_cache(ModelCalls(cache_path=path)).entries()
    assert (entry.role, entry.kind, entry.model) == ("judge:quality", "judges", "gemini-2.5-flash")
    assert len(entry.request_hash) == 64


async def test_a_suite_run_again_is_answered_from_the_cache(tmp_path):
    settings = ModelCalls(cache="all", cache_path=tmp_path / "c.sqlite")
    with FakeProviderServer(["4"]) as server:
        model = litellm_model(server)
        cases = [case(model, name="one"), case(model, name="two", first_message="And 3+3?")]
        first = await run_eval_suite(cases, repeat=2, model_calls=settings)
        asked = len(server.requests)
        second = await run_eval_suite(cases, repeat=2, model_calls=settings)

    assert asked == 4  # two cases, two attempts each
    assert len(server.requests) == 4
    assert [r.provider.cache_hits for r in second.results] == [1, 1, 1, 1]
    assert [r.status for r in second.results] == [r.status for r in first.results]


async def test_a_run_against_another_fake_provider_is_answered_from_the_cache(tmp_path):
    # each FakeProviderServer (like the local model's server) takes a free port of its own
    settings = ModelCalls(cache="all", cache_path=tmp_path / "c.sqlite")
    with FakeProviderServer(ADDS) as server, FakeProviderServer(ADDS) as again:
        first = await run_with(settings, case(litellm_model(server)))
        second = await run_with(settings, case(litellm_model(again)))

    assert server.openai_base != again.openai_base
    assert (len(server.requests), len(again.requests)) == (2, 0)
    assert (second.provider.cache_hits, second.provider.cache_misses) == (2, 0)
    assert events(second) == events(first)
    [entry, _] = open_cache(ModelCalls(cache_path=tmp_path / "c.sqlite")).entries()
    assert entry.base_url == server.openai_base  # the address it came from, for the list


@pytest.mark.parametrize(
    "responses",
    ['[{"content": {"role": "model", "parts": [{"te', '[{"content": 5}]', '{"a": 1}'],
    ids=["cut-short", "not-a-response", "not-a-list"],
)
async def test_a_damaged_entry_ends_the_run_naming_the_cache_and_the_fix(tmp_path, responses):
    path = tmp_path / "c.sqlite"
    settings = ModelCalls(cache="all", cache_path=path)
    with FakeProviderServer(ADDS) as server:
        assert (await run_with(settings, case(litellm_model(server)))).status == "passed"
        with sqlite3.connect(path) as db:
            db.execute("UPDATE entries SET responses = ?", (responses,))
        result = await run_with(settings, case(litellm_model(server)))

    assert result.status == "error"
    assert result.error.type == "EvalSetupError"
    message = result.error.message
    assert message.count("\n") == 0
    assert f"model cache {path}" in message
    assert f"adk-eval cache clear --cache-path {path}" in message
    assert result.attribution.party == "setup", result.attribution
    assert len(server.requests) == 2  # the damaged answer was not used, nor asked again
