"""Event compaction per case: its own config, the case's model, failures reported, the App kept."""

from __future__ import annotations

import copy

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.context_cache_config import ContextCacheConfig
from google.adk.apps import App
from google.adk.apps._configs import EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

from adk_eval import EvalCase, ScriptedUserAgent, UserAgents, run_eval, run_eval_suite
from adk_eval.testing import ScriptedLlm

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # compaction is experimental


def recording(
    label: str,
    calls: list[tuple[str, str]],
    fail_summaries: bool = False,
    caches: list[tuple[str, ContextCacheConfig | None]] | None = None,
):
    """A model that notes who called it: the agent, or ADK's summarizer (no agent label).

    `caches` gets the context-cache config of each of the agent's requests.
    """

    def respond(request):
        labels = request.config.labels if request.config and request.config.labels else {}
        kind = "agent" if "adk_agent_name" in labels else "summary"
        calls.append((label, kind))
        if caches is not None and kind == "agent":
            caches.append((label, request.cache_config))
        if kind == "summary" and fail_summaries:
            raise ConnectionError(f"{label} is down")
        return f"{label} {kind}"

    return ScriptedLlm(responder=respond)


def shop_app(calls) -> App:
    root = LlmAgent(name="shop", model=recording("own", calls), instruction="Sell things.")
    return App(
        name="shop",
        root_agent=root,
        events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=0),
    )


def case(name, app, model) -> EvalCase:
    return EvalCase(
        name=name,
        agent=app,
        models={"*": model},
        first_message="hi",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="buyer", script=["more", "again"])),
    )


async def test_each_case_summarizes_on_its_own_model_and_the_app_is_not_changed():
    calls: list[tuple[str, str]] = []
    caches: list[tuple[str, ContextCacheConfig | None]] = []
    app = shop_app(calls).model_copy(
        update={"context_cache_config": ContextCacheConfig(cache_intervals=3, ttl_seconds=600)}
    )
    config = app.events_compaction_config
    cache = app.context_cache_config
    assert cache is not None
    cache_before = cache.model_dump()
    before = copy.deepcopy(app.model_dump())

    suite = await run_eval_suite(
        [
            case("a", app, recording("A", calls, caches=caches)),
            case("b", app, recording("B", calls, caches=caches)),
        ],
        parallel=False,
    )

    assert suite.ok, [r.explain() for r in suite.results]
    assert ("A", "summary") in calls
    assert ("B", "summary") in calls  # not A's, as ADK alone would have done
    assert ("own", "summary") not in calls
    assert {label for label, kind in calls if kind == "summary"} == {"A", "B"}
    assert app.events_compaction_config is config
    assert config.summarizer is None  # ADK writes its summarizer into the config it is given
    assert app.context_cache_config is cache
    assert cache.model_dump() == cache_before
    # each case's requests carry its own copy of the user's cache settings, equal to them
    per_case = {name: {id(seen) for label, seen in caches if label == name} for name in "AB"}
    assert all(len(ids) == 1 for ids in per_case.values()), caches
    assert per_case["A"].isdisjoint(per_case["B"])
    assert all(seen is not cache and seen == cache for _, seen in caches)
    assert app.model_dump() == before


async def test_a_summary_that_failed_is_a_warning_of_the_result_not_a_silent_pass(caplog):
    calls: list[tuple[str, str]] = []
    app = shop_app(calls)
    result = await run_eval(case("a", app, recording("A", calls, fail_summaries=True)))

    assert result.status == "passed"  # ADK goes on with the whole history, as in production
    assert result.warnings == (
        "event compaction failed 2 times (ConnectionError: A is down); ADK went on with the "
        "whole history",
    )
    assert "warning: event compaction failed" in result.explain()
    assert "Traceback" not in caplog.text


async def test_a_summarizer_of_the_users_own_keeps_its_prompt_and_follows_the_case_model():
    calls: list[tuple[str, str]] = []
    app = shop_app(calls)
    mine = LlmEventSummarizer(
        llm=recording("mine", calls), prompt_template="Sum up: {conversation_history}"
    )
    app = app.model_copy(
        update={
            "events_compaction_config": app.events_compaction_config.model_copy(
                update={"summarizer": mine}
            )
        }
    )
    assert (await run_eval(case("a", app, recording("A", calls)))).status == "passed"
    assert ("A", "summary") in calls
    assert ("mine", "summary") not in calls
    plain = EvalCase(
        name="plain",
        agent=app,
        first_message="hi",
        user_agents=UserAgents(loop=ScriptedUserAgent(name="buyer", script=["more", "again"])),
    )
    assert (await run_eval(plain)).status == "passed"
    assert ("mine", "summary") in calls  # no models: the user's own summarizer
