"""Cassettes: a suite recorded through ADK's real clients once, replayed with the provider gone.

The clients are ADK's `LiteLlm` and `Gemini` against `FakeProviderServer`; the
replays run after the server has stopped (or against a server that must get no
request), so an answer can only come from the cassette.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import socket
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.models.lite_llm import LiteLlm

from adk_eval import EvalCase, EvalResult, TerminateWhen, UserAgents, run_eval_suite
from adk_eval._run.loop import run_case
from adk_eval.fake_provider import (
    FakeProviderServer,
    FakeReply,
    FakeRequest,
    error_reply,
    text_reply,
    tool_reply,
)
from adk_eval.metrics import llm_judge
from adk_eval.models import CassetteMissError, ModelCalls, missing_credentials
from adk_eval.models._gateway._answers import ModelCall
from adk_eval.models._gateway._cassette import Cassette, case_folder, cassette_path, open_cassette
from adk_eval.models._gateway._gate import Gateway, outside_runs
from adk_eval.testing import ScriptedLlm, tool_call

HELPFUL = "You are a helpful assistant that adds numbers with `add`."
VERDICT = '{"passed": true, "score": 1, "reasoning": "fine"}'


def add(a: int, b: int) -> dict:
    """Adds two integers."""
    return {"result": a + b}


def respond(request: FakeRequest) -> FakeReply:
    """The provider: the calculator's two calls, the helper, the user agent and the judge."""
    if request.model == "calc":
        return tool_reply("add", {"a": 2, "b": 2}) if request.turn == 0 else text_reply("4")
    if request.model == "gemini-user":
        return text_reply("Thanks, bye.")
    if request.model == "gemini-judge":
        return text_reply(VERDICT)
    return text_reply("Hello, how can I help?")


class Urls:
    """Where the models of a suite are served from."""

    def __init__(self, openai_base: str, gemini_base: str) -> None:
        self.openai_base, self.gemini_base = openai_base, gemini_base

    @classmethod
    def of(cls, server: FakeProviderServer) -> Urls:
        return cls(server.openai_base, server.gemini_base)

    def lite(self, model: str = "openai/calc") -> LiteLlm:
        return LiteLlm(model=model, api_base=self.openai_base, api_key="k", _skip_mcp_handler=True)

    def gemini(self, model: str) -> Gemini:
        return Gemini(model=model, base_url=self.gemini_base, client_kwargs={"api_key": "k"})


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


UNREACHABLE = Urls(f"http://127.0.0.1:{closed_port()}/v1", f"http://127.0.0.1:{closed_port()}")


def adds(urls: Urls, instruction: str = HELPFUL, **kwargs) -> EvalCase:
    defaults = dict(
        name="adds",
        agent=LlmAgent(name="calculator", model=urls.lite(), tools=[add], instruction=instruction),
        tool_mocks={"add": add},
        first_message="What is 2+2?",
        terminate_when=TerminateWhen(max_turns=1),
        metrics=[llm_judge("correct", "Did it add correctly?", model=urls.gemini("gemini-judge"))],
    )
    return EvalCase(**{**defaults, **kwargs})


def chat(urls: Urls) -> EvalCase:
    user = LlmAgent(name="ann", model=urls.gemini("gemini-user"), instruction="You are Ann.")
    return EvalCase(
        name="Chat with Ann / EU?",
        agent=LlmAgent(name="helper", model=urls.gemini("gemini-helper")),
        user_agents=UserAgents(loop=user),
        first_message="Hi",
        terminate_when=TerminateWhen(max_turns=2),
    )


def suite_cases(urls: Urls, instruction: str = HELPFUL) -> list[EvalCase]:
    return [adds(urls, instruction), chat(urls)]


async def run_with(settings: ModelCalls, case: EvalCase, attempt: int = 0) -> EvalResult:
    """One run of `case` whose model calls follow `settings`."""
    return await run_case(case, seed=None, attempt=attempt, gateway=Gateway.alone(settings))


def contents(result) -> list:
    """The events as the conversation saw them: authors, texts, calls (no ids or times)."""
    seen = []
    for event in result.events:
        for part in event.content.parts if event.content else []:
            call, answer = part.function_call, part.function_response
            seen.append(
                (
                    event.author,
                    part.text,
                    (call.name, call.args) if call else None,
                    (answer.name, answer.response) if answer else None,
                )
            )
    return seen


def metrics(result) -> dict:
    return {name: (m.verdict, m.score) for name, m in result.metrics.items()}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, object, int]:
    """A suite recorded once: the cassette folder, the suite's result, the server's requests."""
    tapes = tmp_path_factory.mktemp("cassettes") / "tapes"

    async def record():
        with FakeProviderServer(responder=respond) as server:
            calls = ModelCalls(record=tapes)
            suite = await run_eval_suite(suite_cases(Urls.of(server)), model_calls=calls)
        return suite, len(server.requests)

    suite, requests = asyncio.run(record())
    return tapes, suite, requests


# -- record, then replay offline -------------------------------------------------------------


def test_a_recording_is_one_file_per_case_and_attempt_with_the_real_name_inside(recorded):
    tapes, suite, requests = recorded
    assert [r.status for r in suite.results] == ["passed", "terminated"]  # chat: max_turns
    files = sorted(path.relative_to(tapes).as_posix() for path in tapes.rglob("*.json"))
    assert files == sorted(
        ["adds/attempt-0.json", f"{case_folder('Chat with Ann / EU?')}/attempt-0.json"]
    )
    assert not [path for path in tapes.rglob("*") if path.name.endswith(".tmp")]
    data = json.loads(cassette_path(tapes, "Chat with Ann / EU?", 0).read_text())
    assert data["case"] == "Chat with Ann / EU?"
    roles = [(entry["role"], entry["index"]) for entry in data["entries"]]
    assert roles == [("agent", 1), ("agent", 2), ("agent", 3), ("user:ann", 1), ("user:ann", 2)]
    calc = json.loads((tapes / "adds" / "attempt-0.json").read_text())["entries"]
    assert [(e["role"], e["index"], e["model"]) for e in calc] == [
        ("agent", 1, "openai/calc"),
        ("agent", 2, "openai/calc"),
        ("judge:correct", 1, "gemini-judge"),
    ]
    assert calc[0]["base_url"].startswith("http://127.0.0.1:")  # kept, for information
    assert calc[0]["responses"][0]["content"]["parts"][0]["function_call"]["name"] == "add"
    assert sum(r.provider.recorded for r in suite.results) == requests == 8


async def test_a_replay_with_the_provider_gone_gives_the_same_results(recorded):
    tapes, suite, _ = recorded
    replay = await run_eval_suite(suite_cases(UNREACHABLE), model_calls=ModelCalls(replay=tapes))
    for before, after in zip(suite.results, replay.results, strict=True):
        assert after.status == before.status, after.explain()
        assert after.termination_reason == before.termination_reason
        assert metrics(after) == metrics(before)
        assert contents(after) == contents(before)
        assert after.provider.replayed == before.provider.recorded
        assert (after.provider.calls, after.provider.recorded) == (0, 0)
    assert ("calculator", None, None, ("add", {"result": 4})) in contents(replay.results[0])


async def test_a_replay_sends_nothing_even_to_a_provider_that_is_up(recorded):
    tapes, suite, _ = recorded
    calls = ModelCalls(replay=tapes)
    with FakeProviderServer(responder=lambda request: error_reply(500, "no")) as tripwire:
        # another address than the recording's: the base URL is not matched
        replay = await run_eval_suite(suite_cases(Urls.of(tripwire)), model_calls=calls)
    assert [r.status for r in replay.results] == [r.status for r in suite.results]
    assert tripwire.requests == []


async def test_a_replay_needs_no_key_for_a_gemini_name(tmp_path, monkeypatch):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)

    def helper(model) -> EvalCase:
        return EvalCase(
            name="hello", agent=LlmAgent(name="helper", model=model), first_message="Hi"
        )

    with FakeProviderServer(["Hello there."]) as server:
        model = Urls.of(server).gemini("gemini-2.5-flash")
        result = await run_with(ModelCalls(record=tmp_path), helper(model))
    assert result.status == "passed", result.explain()
    assert missing_credentials("gemini-2.5-flash") is not None  # no key here
    with outside_runs(ModelCalls(replay=tmp_path, on_miss="call")):
        assert missing_credentials("gemini-2.5-flash") is not None  # a miss would need one
    with outside_runs(ModelCalls(replay=tmp_path)):
        assert missing_credentials("gemini-2.5-flash") is None
    replaying = ModelCalls(replay=tmp_path)
    by_name = await run_with(replaying, helper("gemini-2.5-flash"))
    by_object = await run_with(replaying, helper(UNREACHABLE.gemini("gemini-2.5-flash")))
    for replay in (by_name, by_object):
        assert replay.status == "passed", replay.explain()
        assert contents(replay) == contents(result)
        assert replay.provider.replayed == 1


async def test_a_replayed_call_never_reaches_the_model_object(tmp_path):
    def case(model) -> EvalCase:
        agent = LlmAgent(name="calculator", model=model, tools=[add])
        return EvalCase(name="adds", agent=agent, tool_mocks={"add": add}, first_message="2+2?")

    scripted = ScriptedLlm([tool_call("add", {"a": 2, "b": 2}), "4"])
    result = await run_with(ModelCalls(record=tmp_path), case(scripted))
    assert result.status == "passed", result.explain()
    replay = await run_with(ModelCalls(replay=tmp_path), case(ScriptedLlm([])))  # it would raise
    assert replay.status == "passed", replay.explain()
    assert contents(replay) == contents(result)


# -- a stale recording -----------------------------------------------------------------------


async def test_a_one_word_change_is_one_clean_miss(recorded):
    tapes, _, _ = recorded
    careful = HELPFUL.replace("helpful", "careful")
    calls = ModelCalls(replay=tapes)
    replay = await run_eval_suite(suite_cases(UNREACHABLE, careful), model_calls=calls)
    changed, untouched = replay.results
    assert untouched.status == "terminated", untouched.explain()
    assert untouched.provider.replayed == 5
    assert changed.status == "error"
    assert changed.error is not None
    assert (changed.error.phase, changed.error.type) == ("setup", "CassetteMissError")
    assert changed.attribution is not None
    assert changed.attribution.party == "setup"
    line = changed.error.message
    assert "\n" not in line
    assert line.startswith("cassette miss: case `adds`, role agent, call 1: system instruction: ")
    assert "[helpful → careful]" in line
    assert line.endswith("(re-record with ModelCalls(record=DIR), or ModelCalls(on_miss='call'))")
    assert changed.provider.replayed == 0


async def test_on_miss_call_asks_the_model_and_updates_the_cassette(recorded, tmp_path):
    tapes = tmp_path / "tapes"
    source = recorded[0]
    for path in source.rglob("*.json"):
        target = tapes / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    careful = HELPFUL.replace("helpful", "careful")
    other = (tapes / case_folder("Chat with Ann / EU?") / "attempt-0.json").read_bytes()
    calls = ModelCalls(replay=tapes, on_miss="call")
    with FakeProviderServer(responder=respond) as server:
        refreshed = await run_eval_suite(suite_cases(Urls.of(server), careful), model_calls=calls)
    assert [r.status for r in refreshed.results] == ["passed", "terminated"]
    assert len(server.requests) == 2  # the calculator's two calls; the judge's was replayed
    first = refreshed.results[0].provider
    assert (first.recorded, first.replayed) == (2, 1)
    entries = json.loads((tapes / "adds" / "attempt-0.json").read_text())["entries"]
    assert [(e["role"], e["index"]) for e in entries] == [
        ("agent", 1),
        ("agent", 2),
        ("judge:correct", 1),
    ]
    assert "careful" in entries[0]["request"]["config"]["system_instruction"]
    assert (tapes / case_folder("Chat with Ann / EU?") / "attempt-0.json").read_bytes() == other

    again = await run_eval_suite(
        suite_cases(UNREACHABLE, careful), model_calls=ModelCalls(replay=tapes)
    )
    assert [r.status for r in again.results] == ["passed", "terminated"]
    assert again.results[0].provider.replayed == 3


async def test_each_attempt_has_its_own_cassette(tmp_path):
    with FakeProviderServer(responder=respond) as server:
        result = await run_with(ModelCalls(record=tmp_path), adds(Urls.of(server)), attempt=1)
    assert result.status == "passed", result.explain()
    assert [p.name for p in (tmp_path / "adds").iterdir()] == ["attempt-1.json"]
    replaying = ModelCalls(replay=tmp_path)
    second = await run_with(replaying, adds(UNREACHABLE), attempt=1)
    first = await run_with(replaying, adds(UNREACHABLE), attempt=0)
    assert second.status == "passed", second.explain()
    assert first.status == "error"
    assert first.error is not None
    assert first.error.message.startswith(
        "cassette miss: case `adds`, role agent, call 1: no recording of this case ("
    )
    assert "attempt-0.json does not exist" in first.error.message


# -- the cassette itself ---------------------------------------------------------------------


def call(role: str, index: int, text: str, case: str = "c") -> ModelCall:
    request = {"model": "m", "contents": [{"role": "user", "parts": [{"text": text}]}]}
    return ModelCall(case, 0, role, "m", None, request, "key", index)


def answer(text: str) -> list[dict]:
    return [{"content": {"role": "model", "parts": [{"text": text}]}}]


def recording(folder: Path, *calls: ModelCall) -> Path:
    cassette = Cassette(cassette_path(folder, "c", 0), "c", 0, mode="record")
    for item in calls:
        assert cassette.lookup(item) is None  # recording never answers
        cassette.save(item, answer(item.request["contents"][0]["parts"][0]["text"]))
    cassette.close()
    return cassette.path


def test_calls_of_a_role_may_come_back_in_another_order(tmp_path):
    recording(tmp_path, call("agent", 1, "a"), call("agent", 2, "b"), call("tool:x", 1, "a"))
    cassette = Cassette(cassette_path(tmp_path, "c", 0), "c", 0, mode="replay")
    assert cassette.lookup(call("agent", 1, "b")) == answer("b")  # parallel agents, swapped
    assert cassette.lookup(call("agent", 2, "a")) == answer("a")
    assert cassette.lookup(call("tool:x", 1, "a")) == answer("a")  # roles apart
    with pytest.raises(CassetteMissError, match="2 calls of this role, all replayed"):
        cassette.lookup(call("agent", 3, "a"))  # each recorded call answers once
    with pytest.raises(
        CassetteMissError, match=r"no call of this role \(its roles: agent, tool:x\)"
    ):
        cassette.lookup(call("user:ann", 1, "a"))


def test_a_miss_names_the_closest_recorded_call(tmp_path):
    recording(tmp_path, call("agent", 1, "add two and two"), call("agent", 2, "now say it"))
    cassette = Cassette(cassette_path(tmp_path, "c", 0), "c", 0, mode="replay")
    with pytest.raises(CassetteMissError) as raised:
        cassette.lookup(call("agent", 1, "add two and three"))
    assert str(raised.value) == (
        "cassette miss: case `c`, role agent, call 1: message 1 (user): add two and "
        "[two → three] (re-record with ModelCalls(record=DIR), or ModelCalls(on_miss='call'))"
    )


@pytest.mark.parametrize(
    ("given_by", "hint"),
    [
        ("cli", "(re-record with --record-models DIR, or --on-miss call)"),
        ("pytest", "(re-record with --adk-eval-record-models DIR, or --adk-eval-on-miss call)"),
        ("code", "(re-record with ModelCalls(record=DIR), or ModelCalls(on_miss='call'))"),
    ],
)
def test_a_miss_names_the_options_of_where_the_settings_were_given(tmp_path, given_by, hint):
    recording(tmp_path, call("agent", 1, "a"))
    settings = pickle.loads(pickle.dumps(ModelCalls(replay=tmp_path, given_by=given_by)))
    assert settings.given_by == given_by  # carried to worker processes and Ray tasks
    cassette = open_cassette(settings, "c", 0)
    with pytest.raises(CassetteMissError) as raised:
        cassette.lookup(call("agent", 1, "b"))
    assert str(raised.value).endswith(f"[a → b] {hint}")


def test_a_replay_that_records_nothing_leaves_the_file_as_it_was(tmp_path):
    path = recording(tmp_path, call("agent", 1, "a"))
    before = path.read_bytes()
    cassette = Cassette(path, "c", 0, mode="replay", on_miss="call")
    assert cassette.lookup(call("agent", 1, "a")) == answer("a")
    assert cassette.lookup(call("agent", 2, "b")) is None  # a miss: the model will answer
    cassette.close()
    assert path.read_bytes() == before


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path):
    path = recording(tmp_path, call("agent", 1, "a"))
    before = path.read_bytes()
    cassette = Cassette(path, "c", 0, mode="record")
    cassette.save(call("agent", 1, "a"), [{"content": object()}])  # not JSON
    with pytest.raises(TypeError):
        cassette.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["attempt-0.json"]


def test_an_unreadable_file_is_a_miss_that_says_so(tmp_path):
    path = cassette_path(tmp_path, "c", 0)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    cassette = Cassette(path, "c", 0, mode="replay")
    with pytest.raises(CassetteMissError, match=r"call 1: .*attempt-0\.json cannot be read"):
        cassette.lookup(call("agent", 1, "a"))


@pytest.mark.parametrize(
    "names",
    [
        ("refund", "Refund", "refund?", "refund/", "refund-0123456789"),
        ("con", "a" * 200, "a" * 201, "ünïcode", "../up", ".hidden", "x."),
    ],
)
def test_every_case_name_gets_a_safe_folder_of_its_own(names):
    folders = [case_folder(name) for name in names]
    assert len(set(folders)) == len(folders)
    for folder in folders:
        assert all(c.isascii() and (c.isalnum() or c in "._-") for c in folder), folder
        assert folder[0].isalnum()
        assert not folder.endswith(".")
        assert len(folder) <= 64
    assert case_folder("refund") == "refund"
