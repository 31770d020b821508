"""`ModelCalls`: one value, given or the project's, that crosses into a worker process as data."""

from __future__ import annotations

import os
import pickle

import pytest

from adk_eval import EvalCase, InProcess, run_eval_suite
from adk_eval._errors import EvalSetupError
from adk_eval._suites._jobs import WorkerSetup
from adk_eval.models import ModelCalls, RateLimit
from adk_eval.models._gateway._settings import cache_roles, project_settings, role_kind
from adk_eval.testing import ScriptedLlm


async def test_a_suite_given_no_settings_takes_the_projects_and_reads_no_variable(
    monkeypatch, tmp_path
):
    (tmp_path / "pyproject.toml").write_text('[tool.adk-eval.limits]\n"*" = { rpm = 7 }\n')
    monkeypatch.chdir(tmp_path)
    # what the command line used to write for its own process: a replay of no recording
    monkeypatch.setenv("ADK_EVAL_MODEL_CALLS", f'{{"replay": "{tmp_path / "none"}"}}')
    seen: list[ModelCalls] = []

    class Seeing(InProcess):
        async def run(self, plan):
            seen.append(plan.model_calls)
            return await super().run(plan)

    suite = await run_eval_suite([greets()], executor=Seeing())
    assert suite.results[0].status == "passed", suite.results[0].explain()
    assert seen == [project_settings()]
    assert (seen[0].limits, seen[0].replay) == ({"*": RateLimit(rpm=7)}, None)


def test_settings_cross_into_a_worker_as_data_in_its_setup(tmp_path):
    settings = ModelCalls(
        limits={"gemini-*": RateLimit.parse(rpm="7/9s", tpm="250000/1m")},
        max_wait=30,
        cache="agent,judges",
        cache_ttl=3600,
        replay=tmp_path,
        on_miss="call",
        given_by="cli",
    )
    setup = WorkerSetup(seed=3, model_calls=settings)
    again = pickle.loads(pickle.dumps(setup))
    assert again == setup
    assert again.model_calls.given_by == "cli"  # a miss names the command line's options
    assert {setup: 1}[again] == 1  # a Ray task's loader is kept by its setup
    assert hash(settings) == hash(settings.replace())
    assert "ADK_EVAL_MODEL_CALLS" not in os.environ


def test_only_a_replay_that_never_calls_a_model_is_offline(tmp_path):
    assert ModelCalls(replay=tmp_path).offline
    assert not ModelCalls(replay=tmp_path, on_miss="call").offline
    assert not ModelCalls(record=tmp_path).offline
    assert not ModelCalls().offline


def test_cached_roles():
    assert cache_roles("all") == {"agent", "users", "judges", "tools"}
    assert cache_roles(" agent , judges") == {"agent", "judges"}
    assert cache_roles(None) == frozenset()
    with pytest.raises(EvalSetupError, match="cannot cache agents"):
        cache_roles("agents")
    assert [role_kind(r) for r in ("agent", "user:ann", "judge:polite", "tool:lookup")] == [
        "agent",
        "users",
        "judges",
        "tools",
    ]


def test_settings_refuse_what_cannot_work(tmp_path):
    with pytest.raises(EvalSetupError, match="not both"):
        ModelCalls(record=tmp_path, replay=tmp_path)
    with pytest.raises(EvalSetupError, match="on_miss"):
        ModelCalls(on_miss="retry")  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match=r"limits\['m'\] must be a RateLimit"):
        ModelCalls(limits={"m": 10})  # type: ignore[dict-item]
    with pytest.raises(EvalSetupError, match="EvalCase `c`: cannot cache everything"):
        EvalCase(name="c", agent=_agent(), first_message="hi", cache="everything")


def greets() -> EvalCase:
    return EvalCase(name="greets", agent=_agent(), first_message="hi")


def _agent():
    from google.adk.agents import LlmAgent

    return LlmAgent(name="a", model=ScriptedLlm(["hi"]))
