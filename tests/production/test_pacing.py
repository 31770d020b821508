"""Stored conversations scored or replayed at once pace their model calls on one pacer.

The project's limit (``[tool.adk-eval.limits]``, what ``adk-eval score`` and ``shadow``
follow) holds across the conversations: ADK's real `LiteLlm` against a fake provider
with that quota is refused nothing, and no window admits more than the limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.sessions import Session

from adk_eval._sources._source import GivenSessions
from adk_eval.fake_provider import FakeProviderServer, Quota, text_reply
from adk_eval.metrics import llm_judge
from adk_eval.production import score_sessions, shadow_sessions
from adk_eval.testing import text_event, user_event

LIMIT, WINDOW = 3, 1.0
SESSIONS = 6


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose pyproject.toml states the fake provider's quota."""
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.adk-eval.limits]\n"openai/fake" = {{ rpm = "{LIMIT}/{WINDOW:g}s" }}\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def provider() -> FakeProviderServer:
    """A provider allowing `LIMIT` requests in any `WINDOW` seconds; every answer a pass."""
    verdict = json.dumps({"passed": True, "score": 1.0, "reasoning": "polite"})
    return FakeProviderServer([text_reply(verdict)], quota=Quota(requests=LIMIT, window=WINDOW))


def model(server: FakeProviderServer) -> LiteLlm:
    return LiteLlm(
        model="openai/fake", api_base=server.openai_base, api_key="x", _skip_mcp_handler=True
    )


def stored(count: int) -> GivenSessions:
    """`count` finished conversations of one user turn each."""
    return GivenSessions(
        Session(
            id=f"s{n}",
            app_name="shop",
            user_id="ann",
            events=[user_event(f"hello {n}"), text_event("shop", "Hello! How can I help?")],
            state={},
        )
        for n in range(count)
    )


def kept_to_the_limit(server: FakeProviderServer, sent: int) -> None:
    assert server.rejections == 0, [request.outcome for request in server.requests]
    assert len(server.requests) == sent
    assert server.max_admitted_in_any_window(WINDOW) <= LIMIT


async def test_judges_scoring_stored_conversations_at_once_keep_one_limit(project):
    with provider() as server:
        judge = llm_judge("polite", "The agent is polite.", model=model(server))
        score = await score_sessions(stored(SESSIONS), [judge], max_concurrency=SESSIONS)
    assert [result.status for result in score.results] == ["passed"] * SESSIONS
    kept_to_the_limit(server, SESSIONS)


async def test_a_shadow_replay_of_stored_conversations_keeps_one_limit(project):
    with provider() as server:
        agent = LlmAgent(name="shop", model=model(server))
        results = await shadow_sessions(stored(SESSIONS), agent, max_concurrency=SESSIONS)
    assert sorted(result.new.status for result in results) == ["passed"] * SESSIONS
    kept_to_the_limit(server, SESSIONS)
